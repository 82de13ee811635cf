"""One LSTM layer-direction over a whole sequence as a single autograd node, on fused kernels.

Forward: the input projection of every time step is one gemm into a gates buffer G (T, B, 4H);
each step then runs one small gemm (h @ W_hh^T) and ONE kernel (``lstm_cell_forward``) that adds
it and the biases, activates the four gates in place and writes c and h. The node saves G, the
cell states C (T + 1, B, H) and the hidden states Y; nothing is recorded per step.

Backward runs the steps in reverse with ONE kernel each (``lstm_cell_backward``), which
overwrites step t's saved gates with their gradients: the saved gates are consumed as backward
goes, so backward needs no buffer of G's size. The weight, bias and input gradients are then
products and a column sum over all steps at once; the input gradient is written over G's
memory (``input_grad``), so it needs no new buffer of its size either.

Memory (the sequence issue's bound: a training step's arena peak at most 1.2x what its graph
holds after the forward). Y is (T + 2, B, H): h0, h_1..h_T (h0 last when reverse), then c_n,
so the states entering the steps are one contiguous block for dW_hh. The node's output is
``out``, the (T, B, H) view of Y: its gradient arrives as it is, with no Y-sized copy; h_n is
a view of ``out``; c_n feeds the node through a small node of its own. Backward only reads the
incoming gradient (it may be the user's tensor); the weight gradients are added straight into
``.grad`` when the engine allows it (``autograd.engine.grad_buffer``), so no weight-sized
temporary exists; the products are gemms over pieces of K whose packing scratch fits in C
(dead once the steps are done), each piece continuing the FMA chains of the last, so the
bits are those of one product whatever the piece size.

``ENABLED = False`` makes the layers use the per-step graph of ``rnn_cells`` instead (which
supports double backward and a second backward with ``retain_graph=True``).
"""
from ..autograd.engine import grad_buffer
from ..graph import is_grad_enabled, no_grad
from ..ops.alloc import empty, kernels, view_of
from ..ops.creation import zeros
from ..ops.launch import copy_into
from ..ops.record import needs_grad, record
from ..ops.reduce import sum as _sum

ENABLED = True
ROWS_MATMUL_MAX = 1 << 22   # multiply-adds up to which backward's products skip the gemm
INPUT_GRAD_CHUNKS = 16   # the input gradient is computed in this many pieces of rows (at most)
SCRATCH_MIN = 1 << 14   # elements of gemm scratch a product may take when no dead buffer is bigger


def lstm_sequence(x, h0, c0, w_ih, w_hh, b_ih, b_hh, reverse=False):
    """Run one LSTM direction over ``x`` (T, B, I) from states h0, c0 (B, H).

    Returns (out (T, B, H), h_n (B, H), c_n (B, H)): out is recorded as ``LstmBackward0``, h_n is
    a view of it and c_n feeds it (see the module doc). ``reverse`` walks the steps from T - 1
    down to 0.

    Example:
        >>> import newch
        >>> lstm = newch.nn.LSTM(4, 3)
        >>> x, h0, c0 = newch.randn(5, 2, 4), newch.zeros(2, 3), newch.zeros(2, 3)
        >>> out, h, c = lstm_sequence(x, h0, c0, lstm.weight_ih_l0, lstm.weight_hh_l0,
        ...                           lstm.bias_ih_l0, lstm.bias_hh_l0)
        >>> out.shape, h.shape
        (newch.Size([5, 2, 3]), newch.Size([2, 3]))
    """
    op = "LSTM"
    T, B, I = x.shape
    H = w_hh.shape[1]
    dt = x.dtype
    if dt is not w_ih.dtype or (h0.dtype is not dt) or (c0.dtype is not dt):
        raise ValueError(f"LSTM: input dtype ({dt}) and state dtypes ({h0.dtype}, {c0.dtype}) must "
                         f"match the weight dtype ({w_ih.dtype}); convert the input with "
                         f".to({w_ih.dtype}) or the model with .to({dt})")
    if T == 0 or B == 0:
        raise RuntimeError(f"LSTM: expected a non-empty sequence batch, got {T} time steps and "
                           f"batch size {B}")
    x2 = x.reshape(T * B, I)                    # a copy only when x is not viewable (batch_first)
    with no_grad():
        bias = (b_ih + b_hh) if b_ih is not None else w_hh.new_zeros(4 * H)
    G = empty((T, B, 4 * H), dt)
    C = empty((T + 1, B, H), dt)
    Y = empty((T + 2, B, H), dt)     # h states (h0 first, or last when reverse), then c_n
    o = 0 if reverse else 1          # Y[o + t] is step t's output
    Ga, Ca, Ya, ba = G._data(op), C._data(op), Y._data(op), bias._data(op)
    # NOTE: C is not written yet: its memory is the input projection's gemm scratch. The
    # recurrent product's scratch is at most C's size too, so the forward's arena peak stays
    # close to what the graph then holds (the LSTM step bound, see the module doc).
    _gemm_pieces(x2._data(op), w_ih._data(op).T, Ga.reshape(T * B, 4 * H), Ca.reshape(-1),
                 False, dt, small=False)
    copy_into(c0._data(op), Ca[T if reverse else 0])
    copy_into(h0._data(op), Ya[T if reverse else 0])
    _forward_steps(Ga, Ca, Ya, ba, w_hh._data(op).T, reverse, dt, op)
    out = view_of(Y, Ya[o:o + T])
    c_n = view_of(Y, Ya[T + 1])
    if needs_grad(x, h0, c0, w_ih, w_hh, b_ih, b_hh):
        _record(out, c_n, Y, x, x2, h0, c0, w_ih, w_hh, b_ih, b_hh, G, C, reverse)
    return out, out[0 if reverse else T - 1], c_n


def recurrent_products(Ya, whh_t, T, budget, reverse, dt, op):
    """The recurrent products of a layer's forward, step by step: yields (t, prev, new, rec).

    ``rec`` = Y[prev] @ W_hh^T (B, G) for step t, computed in K pieces whose gemm scratch is
    at most ``budget`` elements (a dead buffer's size); Y[new] is where the step's cell writes
    its output (prev, new = t, t + 1, or t + 1, t when ``reverse``). ``rec`` is reused: the
    caller consumes it before asking for the next step.
    """
    B, G = Ya.shape[1], whh_t.shape[1]
    K = kernels()
    piece = _piece(B, G, whh_t.shape[0], max(SCRATCH_MIN, budget), K.gemm_scratch)
    scratch = empty((K.gemm_scratch(B, G, piece),), dt)
    rec = empty((B, G), dt)
    sa, ra = scratch._data(op), rec._data(op)
    for t in (range(T - 1, -1, -1) if reverse else range(T)):
        prev, new = (t + 1, t) if reverse else (t, t + 1)
        _gemm_k_pieces(Ya[prev], whh_t, ra, sa, piece, False)
        yield t, prev, new, ra


def _forward_steps(Ga, Ca, Ya, ba, whh_t, reverse, dt, op):
    """The recurrence: per step one product h @ W_hh^T (in K pieces whose scratch is at most
    C's size) and one ``lstm_cell_forward``; then c_n is copied after the h states in Y."""
    T = Ca.shape[0] - 1
    K = kernels()
    for t, prev, new, ra in recurrent_products(Ya, whh_t, T, Ca.size, reverse, dt, op):
        K.lstm_cell_forward(Ga[t], ra, ba, Ca[prev], Ca[new], Ya[new])
    copy_into(Ca[0 if reverse else T], Ya[T + 1])


def _record(out, c_n, Y, x, x2, h0, c0, w_ih, w_hh, b_ih, b_hh, G, C, reverse):
    """Record ``out`` as the node's output and ``c_n`` as a small node feeding it (see the
    module doc); the closures hold flags and shapes, no tensor."""
    x_shape, out_shape, dt = tuple(x.shape), tuple(out.shape), out.dtype
    need_x, need_b = x.requires_grad, b_ih is not None and (b_ih.requires_grad or b_hh.requires_grad)
    done = [False]     # NOTE: a flag, not a tensor: backward consumes G, so it runs once
    # NOTE: the gradient reaching c_n, parked by c_n's node (newer, so it runs first) for the
    # LSTM node, which takes it out again; it is only ever read.
    g_cn = [None]

    def backward(g_out, x2, w_ih, w_hh, G, C, Y):
        if done[0] or is_grad_enabled():
            raise RuntimeError(
                "LSTM backward: the fused LSTM consumes its saved gates during backward, so a "
                "second backward (retain_graph=True) or double backward (create_graph=True) is "
                "not supported; set newch.net.rnn_fused.ENABLED = False before the forward")
        done[0] = True
        op = "LSTM backward"
        gc, g_cn[0] = g_cn[0], None
        dG, dh0, dc0 = _backward_steps(g_out, gc, w_hh, G, C, reverse)
        T, B, H4 = dG.shape
        dG2 = dG._data(op).reshape(T * B, H4)
        # NOTE: C is dead after the steps and belongs to this node: it is the products' gemm
        # scratch. The incoming gradient is only read (it may be the user's own tensor, passed
        # through out.backward(g) or an op whose backward hands its gradient on unchanged).
        spare = C._data(op).reshape(-1)
        # the state entering each step: Y[0:T] (h0 first), or Y[1:T + 1] when reverse
        hs = Y._data(op)[1:T + 1] if reverse else Y._data(op)[0:T]
        gw_ih = _weight_grad(dG2, x2._data(op), w_ih, spare) if w_ih.requires_grad else None
        gw_hh = _weight_grad(dG2, hs.reshape(T * B, H4 // 4), w_hh, spare) \
            if w_hh.requires_grad else None
        gb = _sum(dG.reshape(T * B, H4), 0) if need_b else None
        gx = input_grad(dG, w_ih, spare, x_shape, op) if need_x else None
        return gx, dh0, dc0, gw_ih, gw_hh, gb, gb
    record(out, "LstmBackward0", (x, h0, c0, w_ih, w_hh, b_ih, b_hh), backward,
           saved=[x2, w_ih, w_hh, G, C, Y])

    def cn_backward(g):
        g_cn[0] = g
        # NOTE: a broadcast zero (no memory), so the LSTM node runs even when only c_n has a
        # gradient; added to out's gradient it is a copy, which only this rarer case pays.
        return (zeros((), dtype=dt).expand(out_shape),)
    record(c_n, "LstmCellStateBackward0", (out,), cn_backward)


def _backward_steps(g_out, g_cn, w_hh, G, C, reverse):
    """Walk the steps backwards, turning G into the gate gradients; returns (G, dh0, dc0).

    ``g_out`` (T, B, H): the gradient of the outputs (any strides, only read); ``g_cn`` that of
    the last cell state, or None.
    """
    op = "LSTM backward"
    T, B, H4 = G.shape
    H = H4 // 4
    dt = G.dtype
    K = kernels()
    gOa, Ga, Ca, wa = g_out._data(op), G._data(op), C._data(op), w_hh._data(op)
    dh = zeros((B, H), dtype=dt)
    dc = empty((B, H), dt) if g_cn is not None else zeros((B, H), dtype=dt)
    dha, dca = dh._data(op), dc._data(op)
    if g_cn is not None:
        copy_into(g_cn._data(op), dca)
    # NOTE: a broadcast or strided gradient is copied a step at a time into one contiguous
    # buffer: the kernel keeps one compiled layout and no (T, B, H) copy is made
    row = None if gOa.flags.c_contiguous else empty((B, H), dt)
    ra = None if row is None else row._data(op)
    for t in (range(T) if reverse else range(T - 1, -1, -1)):
        prev, new = (t + 1, t) if reverse else (t, t + 1)
        if ra is not None:
            copy_into(gOa[t], ra)
        K.lstm_cell_backward(Ga[t], Ca[prev], Ca[new], gOa[t] if ra is None else ra, dha, dca)
        K.rows_matmul(Ga[t], wa, dha, False)
    return G, dh, dc


def input_grad(dG, w_ih, spare, x_shape, op):
    """dX = dG @ W_ih (dG (T, B, N) the gates' gradients, consumed), shaped ``x_shape``.

    When the input is no wider than the gates (I <= N), dX is written over dG's own memory:
    row piece by row piece, each computed into a small buffer (1/``INPUT_GRAD_CHUNKS`` of dX)
    and copied to the front of dG's flat memory, which only ever covers rows already read
    (r1 * I <= r1 * N). No dX-sized buffer is made while the output's gradient is alive, and
    the result (a view of dG's memory) keeps only that storage. Rows are independent and each
    piece is the same product kind as the whole (rows_matmul or gemm over the same K pieces),
    so the bits are those of one product. ``spare``: a dead flat buffer for gemm scratch, or None.

    Example:
        >>> dG, w = newch.randn(3, 2, 8), newch.randn(8, 4)
        >>> input_grad(dG, w, None, (3, 2, 4), "LSTM backward").shape   # dG is consumed
        newch.Size([3, 2, 4])
    """
    T, B, N = dG.shape
    rows, I, dt = T * B, w_ih.shape[1], dG.dtype
    dG2, wa = dG._data(op).reshape(rows, N), w_ih._data(op)
    if I > N:
        gx = empty((rows, I), dt)
        _gemm_pieces(dG2, wa, gx._data(op), spare, False, dt)
        return gx.reshape(x_shape)
    small = rows * N * I <= ROWS_MATMUL_MAX
    K = kernels()
    chunk = max(2, -(-rows // INPUT_GRAD_CHUNKS))
    # NOTE: a last piece of one row is joined to the one before (a one-row gemm takes the
    # vector-matrix path, whose sums could differ)
    bounds = [0]
    while rows - bounds[-1] > chunk + 1:
        bounds.append(bounds[-1] + chunk)
    bounds.append(rows)
    sizes = {b - a for a, b in zip(bounds, bounds[1:])}
    if not small:
        budget = SCRATCH_MIN if spare is None else max(SCRATCH_MIN, spare.shape[0])
        piece = min(_piece(m, I, N, budget, K.gemm_scratch) for m in sizes)
        need = max(K.gemm_scratch(m, I, piece) for m in sizes)
        keep = None if spare is not None and spare.shape[0] >= need else empty((need,), dt)
        scratch = spare[:need] if keep is None else keep._data(op)   # keep: alive while used
    tmp = empty((max(sizes), I), dt)
    ta, flat = tmp._data(op), dG._data(op).reshape(-1)
    for r0, r1 in zip(bounds, bounds[1:]):
        if small:
            K.rows_matmul(dG2[r0:r1], wa, ta[:r1 - r0], False)
        else:
            _gemm_k_pieces(dG2[r0:r1], wa, ta[:r1 - r0], scratch, piece, False)
        copy_into(ta[:r1 - r0], flat[r0 * I:r1 * I].reshape(r1 - r0, I))
    return view_of(dG, flat[:rows * I].reshape(x_shape))


def _weight_grad(dG2, inp, w, spare):
    """dG2^T @ inp, the gradient of weight ``w``: added straight into ``w.grad`` when the engine
    allows it (then None is returned, so no weight-sized temporary is made), else a new tensor."""
    buf = grad_buffer(w)
    out = buf if buf is not None else empty((dG2.shape[1], inp.shape[1]), w.dtype)
    _gemm_pieces(dG2.T, inp, out._data("LSTM backward"), spare, buf is not None, w.dtype)
    return None if buf is not None else out


def _gemm_pieces(a, b, out, spare, accumulate, dtype, small=True):
    """out = a @ b (``accumulate``: out += a @ b) with little or no scratch.

    Small products use ``rows_matmul`` (no scratch) when ``small``. Others are gemms over consecutive
    pieces of K, each short enough that its packing scratch fits in ``spare`` (a dead flat
    buffer, or None) or in ``SCRATCH_MIN`` elements, so no product needs an operand-sized
    scratch. The pieces continue each element's FMA chain in order (``gemm(accumulate=True)``):
    the bits are those of one gemm over the whole K, whatever the piece size.
    """
    M, Kt = a.shape
    N = b.shape[1]
    K = kernels()
    if small and M * N * Kt <= ROWS_MATMUL_MAX:
        K.rows_matmul(a, b, out, accumulate)
        return
    budget = SCRATCH_MIN if spare is None else max(SCRATCH_MIN, spare.shape[0])
    piece = _piece(M, N, Kt, budget, K.gemm_scratch)
    need = K.gemm_scratch(M, N, piece)
    if spare is not None and spare.shape[0] >= need:
        scratch = spare[:need]
    else:
        keep = empty((need,), dtype)
        scratch = keep._data("LSTM backward")
    _gemm_k_pieces(a, b, out, scratch, piece, accumulate)


def _gemm_k_pieces(a, b, out, scratch, piece, accumulate):
    """out = a @ b (``accumulate``: +=) as gemms over K pieces of ``piece`` (the bits of one)."""
    K = kernels()
    Kt = a.shape[1]
    for k0 in range(0, max(Kt, 1), piece):
        k1 = min(Kt, k0 + piece)
        K.gemm(a[:, k0:k1], b[k0:k1], out, scratch, accumulate or k0 > 0)


def _piece(M, N, Kt, budget, scratch_of):
    """The longest K piece (at least 1) whose gemm scratch fits ``budget`` elements; shapes only."""
    if scratch_of(M, N, Kt) <= budget:
        return max(Kt, 1)
    lo, hi = 1, Kt
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if scratch_of(M, N, mid) <= budget:
            lo = mid
        else:
            hi = mid - 1
    return lo
