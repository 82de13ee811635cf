"""One LSTM layer-direction over a whole sequence as a single autograd node, on fused kernels.

Forward: the input projection of every time step is one gemm into a gates buffer G (T, B, 4H);
each step then runs one small gemm (h @ W_hh^T) and ONE kernel (``lstm_cell_forward``) that adds
it and the biases, activates the four gates in place and writes c and h. The node saves G, the
cell states C (T + 1, B, H) and its own output; nothing is recorded per step.

Backward runs the steps in reverse with ONE kernel each (``lstm_cell_backward``), which
overwrites step t's saved gates with their gradients: the saved gates are consumed as backward
goes, so backward needs no buffer of G's size. The weight, bias and input gradients are then
three gemms and a column sum over all steps at once.

The node's output Y is (T + 2, B, H): the hidden states h0, h_1..h_T (h0 last when reverse)
then c_n; the layer hands out views of it (out, h_n, c_n), so gradients reaching any of them
flow into this node, and the states entering the steps are one contiguous block for dW_hh.

``ENABLED = False`` makes the layers use the per-step graph of ``rnn_cells`` instead (which
supports double backward and a second backward with ``retain_graph=True``).
"""
from ..graph import is_grad_enabled, no_grad
from ..ops.alloc import data, empty, kernels
from ..ops.launch import copy_into
from ..ops.record import needs_grad, record
from ..ops.reduce import sum as _sum

ENABLED = True
ROWS_MATMUL_MAX = 1 << 22   # multiply-adds up to which backward's products skip the gemm


def lstm_sequence(x, h0, c0, w_ih, w_hh, b_ih, b_hh, reverse=False):
    """Run one LSTM direction over ``x`` (T, B, I) from states h0, c0 (B, H).

    Returns (out (T, B, H), h_n (B, H), c_n (B, H)), views of one tensor recorded as
    ``LstmBackward0``. ``reverse`` walks the steps from T - 1 down to 0.

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
    K = kernels()
    Ga, Ca, Ya, ba = G._a, C._a, Y._a, data(bias, op)
    whh_t = data(w_hh, op).T
    scratch = empty((max(K.gemm_scratch(T * B, 4 * H, I), K.gemm_scratch(B, 4 * H, H)),), dt)
    K.gemm(data(x2, op), data(w_ih, op).T, Ga.reshape(T * B, 4 * H), scratch._a)
    rec = empty((B, 4 * H), dt)
    steps = range(T - 1, -1, -1) if reverse else range(T)
    first = steps[0]
    copy_into(data(c0, op), Ca[first + 1 if reverse else 0])
    copy_into(data(h0, op), Ya[T if reverse else 0])
    for t in steps:
        prev, new = (t + 1, t) if reverse else (t, t + 1)
        K.gemm(Ya[prev], whh_t, rec._a, scratch._a)
        K.lstm_cell_forward(Ga[t], rec._a, ba, Ca[prev], Ca[new], Ya[new])
    copy_into(Ca[0 if reverse else T], Ya[T + 1])
    del rec, scratch
    if needs_grad(x, h0, c0, w_ih, w_hh, b_ih, b_hh):
        _record(Y, x, x2, h0, c0, w_ih, w_hh, b_ih, b_hh, G, C, reverse)
    return Y[o:o + T], Y[o + (0 if reverse else T - 1)], Y[T + 1]


def _record(Y, x, x2, h0, c0, w_ih, w_hh, b_ih, b_hh, G, C, reverse):
    x_shape = tuple(x.shape)
    done = [False]     # NOTE: a flag, not a tensor: backward consumes G, so it runs once

    def backward(gY, x2, w_ih, w_hh, G, C, Y):
        if done[0] or is_grad_enabled():
            raise RuntimeError(
                "LSTM backward: the fused LSTM consumes its saved gates during backward, so a "
                "second backward (retain_graph=True) or double backward (create_graph=True) is "
                "not supported; set newch.net.rnn_fused.ENABLED = False before the forward")
        done[0] = True
        dG, dh0, dc0 = _backward_steps(gY, w_hh, G, C, reverse)
        T, B, H4 = dG.shape
        dG2 = dG.reshape(T * B, H4)
        # NOTE: C and the incoming gradient are dead after the steps: results that fit go there,
        # so backward holds little more than the graph did (the LSTM arena-peak bound).
        gx = _product(dG2, w_ih, C).reshape(x_shape) if x._rg else None
        gw_ih = _product(dG2.t(), x2, gY) if w_ih._rg else None
        # the state entering each step: Y[0:T] (h0 first), or Y[1:T + 1] when reverse
        hs = Y[1:T + 1] if reverse else Y[0:T]
        gw_hh = _product(dG2.t(), hs.reshape(T * B, H4 // 4)) if w_hh._rg else None
        gb = _sum(dG2, 0) if b_ih is not None and (b_ih._rg or b_hh._rg) else None
        return gx, dh0, dc0, gw_ih, gw_hh, gb, gb
    record(Y, "LstmBackward0", (x, h0, c0, w_ih, w_hh, b_ih, b_hh), backward,
           saved=[x2, w_ih, w_hh, G, C, Y])


def _backward_steps(gY, w_hh, G, C, reverse):
    """Walk the steps backwards, turning G into the gate gradients; returns (G, dh0, dc0)."""
    op = "LSTM backward"
    T, B, H4 = G.shape
    H = H4 // 4
    dt = G.dtype
    K = kernels()
    gYa, Ga, Ca, wa = data(gY, op), data(G, op), data(C, op), data(w_hh, op)
    dh = gY.new_zeros((B, H))
    dc = empty((B, H), dt)
    copy_into(gYa[T + 1], dc._a)
    for t in (range(T) if reverse else range(T - 1, -1, -1)):
        prev, new = (t + 1, t) if reverse else (t, t + 1)
        K.lstm_cell_backward(Ga[t], Ca[prev], Ca[new], gYa[new], dh._a, dc._a)
        K.rows_matmul(Ga[t], wa, dh._a)
    return G, dh, dc


def _product(a, b, spare=None):
    """a @ b for 2-D tensors, written into the front of ``spare`` (a dead contiguous buffer of
    this backward) when it fits, else into a new tensor.

    Small products use ``rows_matmul`` (no scratch; the gemm's packing scratch would be the
    size of an operand), large ones the gemm (15-20x faster there, its scratch is transient).
    """
    shape = (a.shape[0], b.shape[1])
    n = shape[0] * shape[1]
    if spare is not None and spare.numel() >= n and spare._a.flags.c_contiguous \
            and spare._a.flags.writeable:
        out = spare.reshape(-1)[:n].reshape(shape)
    else:
        out = empty(shape, a.dtype)
    K = kernels()
    A, B = data(a, "LSTM backward"), data(b, "LSTM backward")
    if n * a.shape[1] <= ROWS_MATMUL_MAX:
        K.rows_matmul(A, B, out._a)
    else:
        scratch = empty((K.gemm_scratch(shape[0], shape[1], a.shape[1]),), a.dtype)
        K.gemm(A, B, out._a, scratch._a)
    return out
