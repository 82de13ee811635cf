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

Layout: gates (B, 4H), states (B, H), all C-contiguous. Each batch row is owned by one
``prange`` iteration (rows are independent, no reduction), so results do not depend on the
thread count; at or below ``SERIAL_MAX`` elements the calling thread does all rows.
"""
import math

from .jit import helper, kernel, prange

__all__ = ["lstm_cell_forward", "lstm_cell_backward", "rows_matmul"]

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
