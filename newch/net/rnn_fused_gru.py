"""One GRU or Elman RNN layer-direction over a whole sequence as a single autograd node.

The same scheme as the fused LSTM (``rnn_fused``, whose gemm helpers these reuse): the input
projection of every step is one gemm into a gates buffer G; each step is one small gemm
(h @ W_hh^T) and ONE pointwise kernel; backward walks the steps in reverse with one kernel and
one small product each, overwriting step t's saved data with its gradients, then computes the
input and weight gradients for all steps at once (weights straight into ``.grad`` when the
engine allows it).

GRU (gate order r, z, n; n = tanh(x W_in^T + b_in + r * (h W_hn^T + b_hn)) as PyTorch): the node
saves the activated gates G (T, B, 3H), HN (T, B, H) = h W_hn^T + b_hn of every step (the new
gate needs it) and the states Y (T + 1, B, H). Backward turns G into the gradients of the input
projections (dr, dz, dn) and HN into that of h W_hn^T (dn * r): the recurrent projection's
gradient is G's first 2H columns next to HN, so W_hh's gradient is two products.

Elman RNN (tanh or relu): the node saves only Y (the activation's derivative comes from the
outputs); backward makes one (T, B, H) buffer for the pre-activation gradients, which the
input gradient is then written over.

Y holds h0 first (last when reverse), then the outputs: the node's output is the (T, B, H)
view of Y, h_n a view of it. Backward only reads the gradient it is handed.
"""
from .rnn_fused import SCRATCH_MIN, _gemm_k_pieces, _gemm_pieces, _piece, _weight_grad, input_grad
from ..autograd.engine import grad_buffer
from ..graph import is_grad_enabled, no_grad
from ..ops.alloc import empty, kernels, view_of
from ..ops.creation import zeros
from ..ops.join import cat
from ..ops.launch import copy_into
from ..ops.record import needs_grad, record
from ..ops.reduce import sum as _sum


def gru_sequence(x, h0, w_ih, w_hh, b_ih, b_hh, reverse=False):
    """Run one GRU direction over ``x`` (T, B, I) from state h0 (B, H).

    Returns (out (T, B, H), h_n (B, H)); out is recorded as ``GruBackward0`` and h_n is a view
    of it. ``reverse`` walks the steps from T - 1 down to 0.

    Example:
        >>> import newch
        >>> gru = newch.nn.GRU(4, 3)
        >>> out, h = gru_sequence(newch.randn(5, 2, 4), newch.zeros(2, 3), gru.weight_ih_l0,
        ...                       gru.weight_hh_l0, gru.bias_ih_l0, gru.bias_hh_l0)
        >>> out.shape, h.shape
        (newch.Size([5, 2, 3]), newch.Size([2, 3]))
    """
    return _sequence("GRU", x, h0, w_ih, w_hh, b_ih, b_hh, reverse)


def rnn_sequence(x, h0, w_ih, w_hh, b_ih, b_hh, nonlinearity="tanh", reverse=False):
    """Run one Elman RNN direction (``nonlinearity`` 'tanh' or 'relu') over ``x`` (T, B, I).

    Returns (out (T, B, H), h_n (B, H)) as ``gru_sequence`` does; out is ``RnnBackward0``.

    Example:
        >>> import newch
        >>> rnn = newch.nn.RNN(4, 3, nonlinearity="relu")
        >>> out, h = rnn_sequence(newch.randn(5, 2, 4), newch.zeros(2, 3), rnn.weight_ih_l0,
        ...                       rnn.weight_hh_l0, rnn.bias_ih_l0, rnn.bias_hh_l0, "relu")
        >>> out.shape
        newch.Size([5, 2, 3])
    """
    return _sequence("RNN_RELU" if nonlinearity == "relu" else "RNN_TANH", x, h0, w_ih, w_hh,
                     b_ih, b_hh, reverse)


def _sequence(mode, x, h0, w_ih, w_hh, b_ih, b_hh, reverse):
    op = "GRU" if mode == "GRU" else "RNN"
    T, B, I = x.shape
    H = w_hh.shape[1]
    dt = x.dtype
    if dt is not w_ih.dtype or h0.dtype is not dt:
        raise ValueError(f"{op}: input dtype ({dt}) and state dtype ({h0.dtype}) must match the "
                         f"weight dtype ({w_ih.dtype}); convert the input with .to({w_ih.dtype}) "
                         f"or the model with .to({dt})")
    if T == 0 or B == 0:
        raise RuntimeError(f"{op}: expected a non-empty sequence batch, got {T} time steps and "
                           f"batch size {B}")
    gru = mode == "GRU"
    ng = 3 if gru else 1
    x2 = x.reshape(T * B, I)                    # a copy only when x is not viewable (batch_first)
    with no_grad():
        if b_ih is None:
            bias = (w_hh.new_zeros(ng * H),) * (2 if gru else 1)
        else:
            bias = (b_ih, b_hh) if gru else (b_ih + b_hh,)
    G = empty((T, B, ng * H), dt)
    HN = empty((T, B, H), dt) if gru else None
    Y = empty((T + 1, B, H), dt)     # h0 first (last when reverse), then the outputs
    Ga, Ya = G._data(op), Y._data(op)
    # NOTE: HN (GRU) or Y (RNN) is not written yet: its memory is the input projection's
    # gemm scratch, so the forward's peak stays close to what the graph then holds.
    spare = (HN if gru else Y)._data(op).reshape(-1)
    _gemm_pieces(x2._data(op), w_ih._data(op).T, Ga.reshape(T * B, ng * H), spare, False, dt,
                 small=False)
    copy_into(h0._data(op), Ya[T if reverse else 0])
    _forward_steps(mode, Ga, None if HN is None else HN._data(op), Ya,
                   [b._data(op) for b in bias], w_hh._data(op).T, reverse, spare.shape[0], dt, op)
    o = 0 if reverse else 1          # Y[o + t] is step t's output
    out = view_of(Y, Ya[o:o + T])
    if needs_grad(x, h0, w_ih, w_hh, b_ih, b_hh):
        _record(mode, out, x, x2, h0, w_ih, w_hh, b_ih, b_hh, G, HN, Y, reverse)
    return out, out[0 if reverse else T - 1]


def _forward_steps(mode, Ga, HNa, Ya, biases, whh_t, reverse, budget, dt, op):
    """The recurrence: per step one product h @ W_hh^T (in K pieces whose scratch is at most
    ``budget`` elements, HN's or Y's size) and one cell kernel."""
    T, B, H = Ga.shape[0], Ga.shape[1], Ya.shape[2]
    N = Ga.shape[2]
    K = kernels()
    piece = _piece(B, N, H, max(SCRATCH_MIN, budget), K.gemm_scratch)
    scratch = empty((K.gemm_scratch(B, N, piece),), dt)
    rec = empty((B, N), dt)
    sa, ra = scratch._data(op), rec._data(op)
    relu = mode == "RNN_RELU"
    for t in (range(T - 1, -1, -1) if reverse else range(T)):
        prev, new = (t + 1, t) if reverse else (t, t + 1)
        _gemm_k_pieces(Ya[prev], whh_t, ra, sa, piece, False)
        if HNa is not None:
            K.gru_cell_forward(Ga[t], ra, biases[0], biases[1], Ya[prev], HNa[t], Ya[new])
        else:
            K.rnn_cell_forward(Ga[t], ra, biases[0], Ya[new], relu)


def _record(mode, out, x, x2, h0, w_ih, w_hh, b_ih, b_hh, G, HN, Y, reverse):
    """Record ``out`` as the node's output; the closure holds flags and shapes, no tensor."""
    x_shape = tuple(x.shape)
    name = "GRU" if mode == "GRU" else "RNN"
    need_x, need_b = x.requires_grad, b_ih is not None and (b_ih.requires_grad or b_hh.requires_grad)
    done = [False]     # NOTE: a flag, not a tensor: the GRU's backward consumes G, so it runs once

    def backward(g_out, x2, w_ih, w_hh, Y, *gates):
        if done[0]:
            raise RuntimeError(
                "GRU backward: the fused GRU consumes its saved gates during backward, so a "
                "second backward (retain_graph=True) is not supported; set "
                "newch.net.rnn_fused.ENABLED = False before the forward")
        if is_grad_enabled():
            raise RuntimeError(
                f"{name} backward: double backward (create_graph=True) through the fused {name} is "
                f"not supported; set newch.net.rnn_fused.ENABLED = False before the forward")
        done[0] = mode == "GRU"    # the RNN's backward only reads what it saved
        op = name + " backward"
        # GRU: the saved gates G and HN; RNN: a new buffer for the pre-activation gradients
        G, HN = gates if gates else (empty(g_out.shape[:2] + (w_hh.shape[1],), g_out.dtype), None)
        dh0 = _backward_steps(mode, g_out, w_hh, G, HN, Y, reverse)
        T, B, N = G.shape
        H = N // (3 if HN is not None else 1)
        dG2 = G._data(op).reshape(T * B, N)
        # the state entering each step: Y[0:T] (h0 first), or Y[1:T + 1] when reverse
        hs = (Y._data(op)[1:T + 1] if reverse else Y._data(op)[0:T]).reshape(T * B, H)
        gb_ih = gb_hh = None
        if need_b:
            gb_ih = _sum(G.reshape(T * B, N), 0)
            gb_hh = gb_ih if HN is None else cat([gb_ih[:2 * H], _sum(HN.reshape(T * B, H), 0)])
        # NOTE: the GRU's HN is dead once W_hn's gradient is made: the later products' gemm
        # scratch. The RNN has no dead buffer: SCRATCH_MIN-sized pieces keep its scratch small.
        spare = None
        gw_hh = None
        if HN is not None:
            spare = HN._data(op).reshape(-1)
            if w_hh.requires_grad:
                gw_hh = _gru_whh_grad(dG2, spare.reshape(T * B, H), hs, w_hh)
        elif w_hh.requires_grad:
            gw_hh = _weight_grad(dG2, hs, w_hh, None)
        gw_ih = _weight_grad(dG2, x2._data(op), w_ih, spare) if w_ih.requires_grad else None
        gx = input_grad(G, w_ih, spare, x_shape, op) if need_x else None
        return gx, dh0, gw_ih, gw_hh, gb_ih, gb_hh
    # NOTE: the RNN's backward needs no value of G (the activation's derivative comes from the
    # outputs): G dies with the forward and backward makes its gradient buffer, so a stack of
    # layers does not hold one per layer between forward and backward
    saved = [x2, w_ih, w_hh, Y] + ([G, HN] if HN is not None else [])
    record(out, "GruBackward0" if mode == "GRU" else "RnnBackward0",
           (x, h0, w_ih, w_hh, b_ih, b_hh), backward, saved=saved)


def _backward_steps(mode, g_out, w_hh, G, HN, Y, reverse):
    """Walk the steps backwards, turning G (and HN) into gradients; returns dh0 (B, H)."""
    op = ("GRU" if HN is not None else "RNN") + " backward"
    T, B, N = G.shape
    H = Y.shape[2]
    dt = G.dtype
    K = kernels()
    gOa, Ga, Ya, wa = g_out._data(op), G._data(op), Y._data(op), w_hh._data(op)
    HNa = HN._data(op) if HN is not None else None
    dh = zeros((B, H), dtype=dt)
    dha = dh._data(op)
    dgh = empty((B, N), dt) if HN is not None else None
    dgha = dgh._data(op) if dgh is not None else None
    # NOTE: a broadcast or strided gradient is copied a step at a time into one contiguous
    # buffer: the kernels keep one compiled layout and no (T, B, H) copy is made
    row = None if gOa.flags.c_contiguous else empty((B, H), dt)
    ra = None if row is None else row._data(op)
    relu = mode == "RNN_RELU"
    for t in (range(T) if reverse else range(T - 1, -1, -1)):
        prev, new = (t + 1, t) if reverse else (t, t + 1)
        go = gOa[t]
        if ra is not None:
            copy_into(go, ra)
            go = ra
        if HNa is not None:
            K.gru_cell_backward(Ga[t], HNa[t], Ya[prev], go, dha, dgha)
            K.rows_matmul(dgha, wa, dha, True)
        else:
            K.rnn_cell_backward(Ya[new], go, dha, Ga[t], relu)
            K.rows_matmul(Ga[t], wa, dha, False)
    return dh


def _gru_whh_grad(dG2, dHN2, hs, w_hh):
    """W_hh's gradient: rows of n from HN (``dHN2``), then rows of r and z from G's first 2H
    columns with HN's memory, dead by then, as gemm scratch; added straight into ``w_hh.grad``
    when the engine allows it (then None is returned)."""
    H = dHN2.shape[1]
    buf = grad_buffer(w_hh)
    out = buf if buf is not None else empty((3 * H, H), w_hh.dtype)
    oa = out._data("GRU backward")
    _gemm_pieces(dHN2.T, hs, oa[2 * H:], None, buf is not None, w_hh.dtype)
    _gemm_pieces(dG2[:, :2 * H].T, hs, oa[:2 * H], dHN2.reshape(-1), buf is not None, w_hh.dtype)
    return None if buf is not None else out
