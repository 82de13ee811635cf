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
outputs). Having no gates to keep, forward and backward work through 1/``RNN_CHUNKS`` of the
steps at a time: forward projects a chunk's inputs into a (chunk, B, H) buffer before its steps;
backward writes a chunk's pre-activation gradients into such a buffer, then adds the chunk's
share of the weight, bias and input gradients. No (T, B, H) gates buffer exists at any time.

Y holds h0 first (last when reverse), then the outputs: the node's output is the (T, B, H)
view of Y, h_n a view of it. Backward only reads the gradient it is handed.
"""
from .rnn_fused import (SCRATCH_MIN, _gemm_k_pieces, _gemm_pieces, _piece, _weight_grad, input_grad,
                        recurrent_products)
from ..autograd.engine import grad_buffer
from ..graph import is_grad_enabled, no_grad
from ..ops.alloc import empty, kernels, view_of
from ..ops.creation import zeros
from ..ops.join import cat
from ..ops.launch import copy_into
from ..ops.record import needs_grad, record
from ..ops.reduce import sum as _sum

RNN_CHUNKS = 8    # the Elman forward and backward hold per-step buffers of 1/8 of the steps


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
    Y = empty((T + 1, B, H), dt)     # h0 first (last when reverse), then the outputs
    Ya, ba = Y._data(op), [b._data(op) for b in bias]
    copy_into(h0._data(op), Ya[T if reverse else 0])
    G = HN = None
    if gru:
        G, HN = empty((T, B, 3 * H), dt), empty((T, B, H), dt)
        Ga, HNa = G._data(op), HN._data(op)
        # NOTE: HN is not written yet: its memory is the input projection's gemm scratch, so
        # the forward's peak stays close to what the graph then holds.
        _gemm_pieces(x2._data(op), w_ih._data(op).T, Ga.reshape(T * B, 3 * H), HNa.reshape(-1),
                     False, dt, small=False)
        _gru_forward_steps(Ga, HNa, Ya, ba, w_hh._data(op).T, reverse, dt, op)
    else:
        _rnn_forward(x2._data(op), w_ih._data(op).T, w_hh._data(op).T, ba[0], Ya, reverse,
                     mode == "RNN_RELU", dt, op)
    o = 0 if reverse else 1          # Y[o + t] is step t's output
    out = view_of(Y, Ya[o:o + T])
    if needs_grad(x, h0, w_ih, w_hh, b_ih, b_hh):
        _record(mode, out, x, x2, h0, w_ih, w_hh, b_ih, b_hh, G, HN, Y, reverse)
    return out, out[0 if reverse else T - 1]


def _gru_forward_steps(Ga, HNa, Ya, biases, whh_t, reverse, dt, op):
    """The GRU recurrence: per step one product h @ W_hh^T (in K pieces whose scratch is at
    most HN's size) and one ``gru_cell_forward``."""
    K = kernels()
    for t, prev, new, ra in recurrent_products(Ya, whh_t, Ga.shape[0], HNa.size, reverse, dt, op):
        K.gru_cell_forward(Ga[t], ra, biases[0], biases[1], Ya[prev], HNa[t], Ya[new])


def _rnn_forward(xa, wih_t, whh_t, bias, Ya, reverse, relu, dt, op):
    """The Elman recurrence, 1/``RNN_CHUNKS`` of the steps at a time: the chunk's input
    projection (one product into a (chunk, B, H) buffer), then per step one product
    h @ W_hh^T and one ``rnn_cell_forward`` writing h into Y. No (T, B, H) buffer is made;
    the chunks' rows of the input projection are those of one product."""
    T, B, H = Ya.shape[0] - 1, Ya.shape[1], Ya.shape[2]
    K = kernels()
    tc = -(-T // RNN_CHUNKS)
    starts = list(range(0, T, tc))
    G = empty((tc, B, H), dt)
    Ga = G._data(op)
    budget = max(SCRATCH_MIN, Ga.size)
    rows = {tc * B, (T - starts[-1]) * B}
    p_in = min(_piece(m, H, xa.shape[1], budget, K.gemm_scratch) for m in rows)
    p_rec = _piece(B, H, H, budget, K.gemm_scratch)
    need = max([K.gemm_scratch(B, H, p_rec)] + [K.gemm_scratch(m, H, p_in) for m in rows])
    scratch, rec = empty((need,), dt), empty((B, H), dt)
    sa, ra = scratch._data(op), rec._data(op)
    for t0 in (starts[::-1] if reverse else starts):
        t1 = min(T, t0 + tc)
        _gemm_k_pieces(xa[t0 * B:t1 * B], wih_t, Ga[:t1 - t0].reshape((t1 - t0) * B, H), sa,
                       p_in, False)
        for t in (range(t1 - 1, t0 - 1, -1) if reverse else range(t0, t1)):
            prev, new = (t + 1, t) if reverse else (t, t + 1)
            _gemm_k_pieces(Ya[prev], whh_t, ra, sa, p_rec, False)
            K.rnn_cell_forward(Ga[t - t0], ra, bias, Ya[new], relu)


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
        if mode != "GRU":
            dh0, gw_ih, gw_hh, gb, gx = _rnn_backward(mode == "RNN_RELU", g_out, x2, w_ih, w_hh, Y,
                                                      reverse, need_x, need_b, x_shape)
            return gx, dh0, gw_ih, gw_hh, gb, gb
        op = "GRU backward"
        G, HN = gates
        dh0 = _backward_steps(g_out, w_hh, G, HN, Y, reverse)
        T, B, N = G.shape
        H = N // 3
        dG2 = G._data(op).reshape(T * B, N)
        hs = _entering(Y, reverse, op).reshape(T * B, H)
        gb_ih = gb_hh = None
        if need_b:
            gb_ih = _sum(G.reshape(T * B, N), 0)
            gb_hh = cat([gb_ih[:2 * H], _sum(HN.reshape(T * B, H), 0)])
        # NOTE: HN is dead once W_hn's gradient is made: the later products' gemm scratch
        spare = HN._data(op).reshape(-1)
        gw_hh = _gru_whh_grad(dG2, spare.reshape(T * B, H), hs, w_hh) if w_hh.requires_grad else None
        gw_ih = _weight_grad(dG2, x2._data(op), w_ih, spare) if w_ih.requires_grad else None
        gx = input_grad(G, w_ih, spare, x_shape, op) if need_x else None
        return gx, dh0, gw_ih, gw_hh, gb_ih, gb_hh
    # NOTE: the RNN's backward needs no value of G (the activation's derivative comes from the
    # outputs): G dies with the forward, and backward works through the steps in chunks
    saved = [x2, w_ih, w_hh, Y] + ([G, HN] if HN is not None else [])
    record(out, "GruBackward0" if mode == "GRU" else "RnnBackward0",
           (x, h0, w_ih, w_hh, b_ih, b_hh), backward, saved=saved)


def _entering(Y, reverse, op):
    """The state entering each step (T, B, H): Y[0:T] (h0 first), or Y[1:T + 1] when reverse."""
    Ya = Y._data(op)
    T = Ya.shape[0] - 1
    return Ya[1:T + 1] if reverse else Ya[0:T]


def _grad_rows(g_out, B, H, dt, op):
    """(g_out's array, a (B, H) buffer to copy each step's rows into, or None)."""
    # NOTE: a broadcast or strided gradient is copied a step at a time into one contiguous
    # buffer: the kernels keep one compiled layout and no (T, B, H) copy is made
    gOa = g_out._data(op)
    row = None if gOa.flags.c_contiguous else empty((B, H), dt)
    return gOa, row


def _backward_steps(g_out, w_hh, G, HN, Y, reverse):
    """Walk the GRU's steps backwards, turning G and HN into gradients; returns dh0 (B, H)."""
    op = "GRU backward"
    T, B, N = G.shape
    H = Y.shape[2]
    dt = G.dtype
    K = kernels()
    Ga, HNa, Ya, wa = G._data(op), HN._data(op), Y._data(op), w_hh._data(op)
    gOa, row = _grad_rows(g_out, B, H, dt, op)
    ra = None if row is None else row._data(op)
    dh = zeros((B, H), dtype=dt)
    dgh = empty((B, N), dt)
    dha, dgha = dh._data(op), dgh._data(op)
    for t in (range(T) if reverse else range(T - 1, -1, -1)):
        prev = t + 1 if reverse else t
        go = gOa[t]
        if ra is not None:
            copy_into(go, ra)
            go = ra
        K.gru_cell_backward(Ga[t], HNa[t], Ya[prev], go, dha, dgha)
        K.rows_matmul(dgha, wa, dha, True)
    return dh


def _rnn_backward(relu, g_out, x2, w_ih, w_hh, Y, reverse, need_x, need_b, x_shape):
    """The Elman RNN's backward, 1/``RNN_CHUNKS`` of the steps at a time.

    The steps of a chunk write their pre-activation gradients into one (chunk, B, H) buffer;
    then the chunk's share of the weight, bias and input gradients is added (the weights' into
    ``.grad`` when the engine allows it), so no (T, B, H) buffer is made. Chunks are taken in
    backward's order, a split by shape only: the sums are deterministic.
    Returns (dh0, dW_ih, dW_hh, db, dx), each None when not needed or added into ``.grad``.
    """
    op = "RNN backward"
    T, B, H = g_out.shape
    dt = g_out.dtype
    K = kernels()
    tc = -(-T // RNN_CHUNKS)
    D, dh = empty((tc, B, H), dt), zeros((B, H), dtype=dt)
    Da, dha, Ya, wa = D._data(op), dh._data(op), Y._data(op), w_hh._data(op)
    gOa, row = _grad_rows(g_out, B, H, dt, op)
    ra = None if row is None else row._data(op)
    hs, xa = _entering(Y, reverse, op).reshape(T * B, H), x2._data(op)
    gw = [None, None]          # tensors returned to the engine (None: added into .grad)
    outs = []                  # (array to add into, the rows it multiplies)
    for i, (w, inp) in enumerate(((w_ih, xa), (w_hh, hs))):
        if w.requires_grad:
            buf = grad_buffer(w)
            if buf is None:
                buf = gw[i] = zeros(tuple(w.shape), dtype=dt)
            outs.append((buf._data(op), inp))
    gb = zeros((1, H), dtype=dt) if need_b else None
    ones = empty((1, tc * B), dt) if need_b else None
    if ones is not None:
        ones._data(op).fill(1.0)
    gx = empty((T * B, x_shape[-1]), dt) if need_x else None
    starts = list(range(0, T, tc))
    for t0 in (starts if reverse else starts[::-1]):
        t1 = min(T, t0 + tc)
        for t in (range(t0, t1) if reverse else range(t1 - 1, t0 - 1, -1)):
            go = gOa[t]
            if ra is not None:
                copy_into(go, ra)
                go = ra
            K.rnn_cell_backward(Ya[t if reverse else t + 1], go, dha, Da[t - t0], relu)
            K.rows_matmul(Da[t - t0], wa, dha, False)
        n, r0, r1 = (t1 - t0) * B, t0 * B, t1 * B
        d2 = Da[:t1 - t0].reshape(n, H)
        for out, inp in outs:
            _gemm_pieces(d2.T, inp[r0:r1], out, None, True, dt)
        if gb is not None:
            K.rows_matmul(ones._data(op)[:, :n], d2, gb._data(op), True)
        if gx is not None:
            _gemm_pieces(d2, w_ih._data(op), gx._data(op)[r0:r1], None, False, dt)
    return (dh, gw[0], gw[1], None if gb is None else gb.reshape(H),
            None if gx is None else gx.reshape(x_shape))


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
