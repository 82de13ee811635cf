"""Fused LSTM cell kernels: one launch per time step for the pointwise part of a step.

The recurrent layer computes gate pre-activations with gemms (x @ W_ih^T + b for all steps at
once, h @ W_hh^T per step); these kernels do everything else of a step in one pass:

- ``lstm_cell_forward``: add the recurrent product, apply sigmoid/tanh to the four gates
  (PyTorch's order: input, forget, cell, output), write c' = f*c + i*g and h' = o*tanh(c'),
  and leave the activated gates in place for backward.
- ``rows_matmul``: out = a @ b (or out += a @ b) with no scratch, for backward's small products
  (a gemm's packing scratch would be the size of an operand and raise backward's arena peak).
- ``lstm_cell_backward``: from dh' and dc', overwrite the activated gates with the gradients of
  the gate pre-activations and write dc for the previous step.
- ``gru_cell_forward`` / ``gru_cell_backward``: the same for a GRU step (gates r, z, n, and
  n = tanh(x W_in^T + b_in + r * (h W_hn^T + b_hn)) as in PyTorch).
- ``rnn_cell_forward`` / ``rnn_cell_backward``: an Elman step, tanh or relu.

Layout: gates (B, 4H), states (B, H), all C-contiguous. Each batch row is owned by one
``prange`` iteration (rows are independent, no reduction), so results do not depend on the
thread count; at or below ``SERIAL_MAX`` elements the calling thread does all rows.
"""
import math

from .jit import helper, kernel, prange

__all__ = ["lstm_cell_forward", "lstm_cell_backward", "rows_matmul", "gru_cell_forward",
           "gru_cell_backward", "rnn_cell_forward", "rnn_cell_backward"]

SERIAL_MAX = 65536     # B * H at or below this: no thread launch
ROW_BLOCK = 16         # rows_matmul: output rows owned by one prange iteration
MATMUL_SERIAL = 1 << 22   # rows_matmul: at or below this many multiply-adds, no thread launch


@helper
def _sigmoid(x):
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


@helper
def _fwd_row(gates, rec, bias, c_prev, c, h, b):
    H = c.shape[1]
    for j in range(H):
        i = _sigmoid(gates[b, j] + rec[b, j] + bias[j])
        f = _sigmoid(gates[b, H + j] + rec[b, H + j] + bias[H + j])
        g = math.tanh(gates[b, 2 * H + j] + rec[b, 2 * H + j] + bias[2 * H + j])
        o = _sigmoid(gates[b, 3 * H + j] + rec[b, 3 * H + j] + bias[3 * H + j])
        cn = f * c_prev[b, j] + i * g
        gates[b, j] = i
        gates[b, H + j] = f
        gates[b, 2 * H + j] = g
        gates[b, 3 * H + j] = o
        c[b, j] = cn
        h[b, j] = o * math.tanh(c[b, j])


@kernel(parallel=True)
def lstm_cell_forward(gates, rec, bias, c_prev, c, h):
    """One LSTM step after the gemms.

    gates: (B, 4H) in: x @ W_ih^T; out: activated gates i, f, g, o.
    rec: (B, 4H) h_prev @ W_hh^T. bias: (4H,) b_ih + b_hh. c_prev: (B, H).
    c, h: (B, H) outputs (c may not alias c_prev).
    Example: ``lstm_cell_forward(gx_t, hw, b, c0, c1, h1)``.
    """
    B, H = c.shape
    if gates.shape[0] != B or gates.shape[1] != 4 * H or rec.shape[0] != B \
            or rec.shape[1] != 4 * H or bias.shape[0] != 4 * H or c_prev.shape[0] != B \
            or c_prev.shape[1] != H or h.shape[0] != B or h.shape[1] != H:
        raise ValueError("lstm_cell_forward: gates/rec must be (B, 4H), c_prev/c/h (B, H)")
    if B * H <= SERIAL_MAX:
        for b in range(B):
            _fwd_row(gates, rec, bias, c_prev, c, h, b)
        return
    for b in prange(B):
        _fwd_row(gates, rec, bias, c_prev, c, h, b)


@helper
def _bwd_row(gates, c_prev, c, dh_out, dh_rec, dc, b):
    H = c.shape[1]
    for j in range(H):
        i = gates[b, j]
        f = gates[b, H + j]
        g = gates[b, 2 * H + j]
        o = gates[b, 3 * H + j]
        tc = math.tanh(c[b, j])
        dh = dh_out[b, j] + dh_rec[b, j]
        dct = dc[b, j] + dh * o * (1.0 - tc * tc)
        gates[b, j] = dct * g * i * (1.0 - i)
        gates[b, H + j] = dct * c_prev[b, j] * f * (1.0 - f)
        gates[b, 2 * H + j] = dct * i * (1.0 - g * g)
        gates[b, 3 * H + j] = dh * tc * o * (1.0 - o)
        dc[b, j] = dct * f


@kernel(parallel=True)
def lstm_cell_backward(gates, c_prev, c, dh_out, dh_rec, dc):
    """Backward of one LSTM step (see ``lstm_cell_forward``).

    gates: (B, 4H) in: the activated gates; out: gradients of the gate pre-activations.
    c_prev, c: (B, H) cell states before and after the step. dh_out, dh_rec: (B, H) the two
    parts of dL/dh' (from the step's output, from the next step). dc: (B, H) in: dL/dc';
    out: dL/dc_prev.
    Example: ``lstm_cell_backward(G[t], C[t], C[t + 1], gy[t], dh, dc)``.
    """
    B, H = c.shape
    if gates.shape[0] != B or gates.shape[1] != 4 * H or c_prev.shape != c.shape \
            or dh_out.shape != c.shape or dh_rec.shape != c.shape or dc.shape != c.shape:
        raise ValueError("lstm_cell_backward: gates must be (B, 4H), the states (B, H)")
    if B * H <= SERIAL_MAX:
        for b in range(B):
            _bwd_row(gates, c_prev, c, dh_out, dh_rec, dc, b)
        return
    for b in prange(B):
        _bwd_row(gates, c_prev, c, dh_out, dh_rec, dc, b)


@helper
def _rows(a, b, out, r0, r1, accumulate):
    K = a.shape[1]
    N = b.shape[1]
    if not accumulate:
        for r in range(r0, r1):
            for n in range(N):
                out[r, n] = 0.0
    # NOTE: k outermost: each b row is read once per block of rows and stays in L1 while
    # it updates them (a row at a time, it streamed all of b per output row).
    for k in range(K):
        for r in range(r0, r1):
            av = a[r, k]
            if av != 0.0:
                for n in range(N):
                    out[r, n] += av * b[k, n]


@kernel(parallel=True)
def rows_matmul(a, b, out, accumulate):
    """out = a @ b, each output row summed over k in order (no scratch, any strides);
    ``accumulate``: out += a @ b, the sums starting from out's values.

    a: (M, K), b: (K, N), out: (M, N), one float dtype. Rows are dealt in blocks of
    ``ROW_BLOCK``, one ``prange`` iteration each; the sums never depend on the split.
    Example: ``rows_matmul(dG.T, x, dW, True)`` adds a weight gradient into dW.
    """
    M, K = a.shape
    N = b.shape[1]
    if b.shape[0] != K or out.shape[0] != M or out.shape[1] != N:
        raise ValueError("rows_matmul: shapes do not match")
    if M * K * N <= MATMUL_SERIAL:
        for r0 in range(0, M, ROW_BLOCK):
            _rows(a, b, out, r0, min(r0 + ROW_BLOCK, M), accumulate)
        return
    nblk = (M + ROW_BLOCK - 1) // ROW_BLOCK
    for i in prange(nblk):
        r0 = i * ROW_BLOCK
        _rows(a, b, out, r0, min(r0 + ROW_BLOCK, M), accumulate)


@helper
def _gru_fwd_row(gates, rec, b_ih, b_hh, h_prev, hn, h, b):
    H = h.shape[1]
    for j in range(H):
        r = _sigmoid((gates[b, j] + b_ih[j]) + (rec[b, j] + b_hh[j]))
        z = _sigmoid((gates[b, H + j] + b_ih[H + j]) + (rec[b, H + j] + b_hh[H + j]))
        hh = rec[b, 2 * H + j] + b_hh[2 * H + j]
        n = math.tanh(gates[b, 2 * H + j] + b_ih[2 * H + j] + r * hh)
        gates[b, j] = r
        gates[b, H + j] = z
        gates[b, 2 * H + j] = n
        hn[b, j] = hh
        h[b, j] = n + z * (h_prev[b, j] - n)


@kernel(parallel=True)
def gru_cell_forward(gates, rec, b_ih, b_hh, h_prev, hn, h):
    """One GRU step after the gemms (gate order r, z, n as PyTorch's).

    gates: (B, 3H) in: x @ W_ih^T; out: the activated gates r, z, n.
    rec: (B, 3H) h_prev @ W_hh^T. b_ih, b_hh: (3H,). h_prev: (B, H).
    hn: (B, H) out: h_prev @ W_hn^T + b_hn (what backward needs of the new gate's input).
    h: (B, H) out: h' = n + z * (h_prev - n). h may not alias h_prev.
    Example: ``gru_cell_forward(gx_t, hw, b_ih, b_hh, h0, hn_t, h1)``.
    """
    B, H = h.shape
    if gates.shape[0] != B or gates.shape[1] != 3 * H or rec.shape[0] != B \
            or rec.shape[1] != 3 * H or b_ih.shape[0] != 3 * H or b_hh.shape[0] != 3 * H \
            or h_prev.shape[0] != B or h_prev.shape[1] != H or hn.shape[0] != B \
            or hn.shape[1] != H:
        raise ValueError("gru_cell_forward: gates/rec must be (B, 3H), biases (3H,), h_prev/hn/h (B, H)")
    if B * H <= SERIAL_MAX:
        for b in range(B):
            _gru_fwd_row(gates, rec, b_ih, b_hh, h_prev, hn, h, b)
        return
    for b in prange(B):
        _gru_fwd_row(gates, rec, b_ih, b_hh, h_prev, hn, h, b)


@helper
def _gru_bwd_row(gates, hn, h_prev, dh_out, dh, dgh, b):
    H = dh.shape[1]
    for j in range(H):
        r = gates[b, j]
        z = gates[b, H + j]
        n = gates[b, 2 * H + j]
        g = dh_out[b, j] + dh[b, j]
        dn = g * (1.0 - z) * (1.0 - n * n)
        dr = dn * hn[b, j] * r * (1.0 - r)
        dz = g * (h_prev[b, j] - n) * z * (1.0 - z)
        gates[b, j] = dr
        gates[b, H + j] = dz
        gates[b, 2 * H + j] = dn
        hn[b, j] = dn * r
        dgh[b, j] = dr
        dgh[b, H + j] = dz
        dgh[b, 2 * H + j] = dn * r
        dh[b, j] = g * z


@kernel(parallel=True)
def gru_cell_backward(gates, hn, h_prev, dh_out, dh, dgh):
    """Backward of one GRU step (see ``gru_cell_forward``), before the recurrent product.

    gates: (B, 3H) in: r, z, n; out: the gradients of x @ W_ih^T + b_ih (dr, dz, dn).
    hn: (B, H) in: h_prev @ W_hn^T + b_hn; out: its gradient (dn * r).
    h_prev, dh_out: (B, H) the state entering the step, the gradient from the step's output.
    dh: (B, H) in: the gradient from the next step; out: the direct part of dL/dh_prev (dh' * z),
    to which the caller adds dgh @ W_hh. dgh: (B, 3H) out: the gradient of h_prev @ W_hh^T + b_hh.
    Example: ``gru_cell_backward(G[t], HN[t], Y[t], gy[t], dh, dgh)``.
    """
    B, H = dh.shape
    if gates.shape[0] != B or gates.shape[1] != 3 * H or hn.shape != dh.shape \
            or h_prev.shape != dh.shape or dh_out.shape != dh.shape or dgh.shape != gates.shape:
        raise ValueError("gru_cell_backward: gates/dgh must be (B, 3H), the states (B, H)")
    if B * H <= SERIAL_MAX:
        for b in range(B):
            _gru_bwd_row(gates, hn, h_prev, dh_out, dh, dgh, b)
        return
    for b in prange(B):
        _gru_bwd_row(gates, hn, h_prev, dh_out, dh, dgh, b)


@helper
def _rnn_fwd_row(gates, rec, bias, h, relu, b):
    H = h.shape[1]
    for j in range(H):
        v = gates[b, j] + rec[b, j] + bias[j]
        if relu:
            h[b, j] = v if v > 0.0 else 0.0
        else:
            h[b, j] = math.tanh(v)


@kernel(parallel=True)
def rnn_cell_forward(gates, rec, bias, h, relu):
    """One Elman RNN step after the gemms: h' = act(gates + rec + bias), act tanh or relu.

    gates: (B, H) x @ W_ih^T (only read). rec: (B, H) h_prev @ W_hh^T. bias: (H,) b_ih + b_hh.
    h: (B, H) out. relu: True for relu, False for tanh.
    Example: ``rnn_cell_forward(gx_t, hw, b, h1, False)``.
    """
    B, H = h.shape
    if gates.shape != h.shape or rec.shape != h.shape or bias.shape[0] != H:
        raise ValueError("rnn_cell_forward: gates/rec/h must be (B, H), bias (H,)")
    if B * H <= SERIAL_MAX:
        for b in range(B):
            _rnn_fwd_row(gates, rec, bias, h, relu, b)
        return
    for b in prange(B):
        _rnn_fwd_row(gates, rec, bias, h, relu, b)


@helper
def _rnn_bwd_row(h, dh_out, dh_rec, dpre, relu, b):
    H = h.shape[1]
    for j in range(H):
        g = dh_out[b, j] + dh_rec[b, j]
        if relu:
            dpre[b, j] = g if h[b, j] > 0.0 else 0.0
        else:
            dpre[b, j] = g * (1.0 - h[b, j] * h[b, j])


@kernel(parallel=True)
def rnn_cell_backward(h, dh_out, dh_rec, dpre, relu):
    """Backward of one Elman step (see ``rnn_cell_forward``): the pre-activation's gradient.

    h: (B, H) the step's output. dh_out, dh_rec: (B, H) the two parts of dL/dh' (from the
    step's output, from the next step). dpre: (B, H) out. relu as in the forward.
    Example: ``rnn_cell_backward(Y[t + 1], gy[t], dh, G[t], False)``.
    """
    B, H = h.shape
    if dh_out.shape != h.shape or dh_rec.shape != h.shape or dpre.shape != h.shape:
        raise ValueError("rnn_cell_backward: all arrays must be (B, H)")
    if B * H <= SERIAL_MAX:
        for b in range(B):
            _rnn_bwd_row(h, dh_out, dh_rec, dpre, relu, b)
        return
    for b in prange(B):
        _rnn_bwd_row(h, dh_out, dh_rec, dpre, relu, b)
