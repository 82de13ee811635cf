"""Fused recurrent cell kernels: one launch per time step for the pointwise part of a step.

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

Layout: gates (B, 4H), states (B, H); any strides work, C-contiguous (what the layers pass)
is the case that vectorizes.

Structure (cold start, the pattern of ``tasks``): each public name is a plain Python function
that checks the shapes (a ValueError naming the kernel, before anything is written) and runs a
*task function*: a serial ``@kernel`` ``fn(*arrays, lo, hi)`` doing batch rows [lo, hi)
(``rows_matmul``: blocks of ``ROW_BLOCK`` output rows), one inlined ``@helper`` call per row or
block. Above ``SERIAL_MAX`` elements (``MATMUL_SERIAL`` multiply-adds) ``tasks.run`` launches it
through the shared parallel driver, one row (block) per ``prange`` iteration; at or below, the
task function runs [0, B) in this thread. Only the serial body is compiled: no parallel copy
of it exists (numba's parallel lowering made each of these kernels 4-5x slower to compile).

NOTE (per-step cost): these kernels run once per time step, often on a few hundred elements,
so the serial path calls the task function's numba dispatcher itself: it resolves the argument
types in C (about 0.15 us for six arrays), where ``tasks.run`` builds its key from the dtype and
layout of every array in Python (about 1.2 us, more than the whole call cost before: 0.55 us).
For writable C-contiguous or strided arrays the dispatcher picks the signature ``tasks.run``
compiles, so the two paths share one compilation (an F-contiguous or read-only array gets a
signature of its own on the serial path, as every path did before).

Determinism: every output element belongs to one row (block), computed by one task on its
own (no reduction across rows), and the split depends on the shapes only, so the serial and
parallel paths and every thread count give the same bits.
"""
import math

from .jit import helper, kernel
from .tasks import run

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


@kernel
def _lstm_fwd_rows(gates, rec, bias, c_prev, c, h, lo, hi):
    """Batch rows [lo, hi) of ``lstm_cell_forward``; a task function."""
    for b in range(lo, hi):
        _fwd_row(gates, rec, bias, c_prev, c, h, b)


def lstm_cell_forward(gates, rec, bias, c_prev, c, h):
    """One LSTM step after the gemms: activated gates in place, c' and h'.

    gates: (B, 4H) in: x @ W_ih^T; out: activated gates i, f, g, o.
    rec: (B, 4H) h_prev @ W_hh^T. bias: (4H,) b_ih + b_hh. c_prev: (B, H).
    c, h: (B, H) outputs (c may not alias c_prev).

    Example:
        >>> g = np.zeros((1, 4), np.float32)
        >>> c, h = np.empty((1, 1), np.float32), np.empty((1, 1), np.float32)
        >>> lstm_cell_forward(g, np.zeros_like(g), np.zeros(4, np.float32), np.ones_like(c), c, h)
        >>> float(c[0, 0]), round(float(h[0, 0]), 4)      # c' = 0.5 * 1 + 0.5 * 0
        (0.5, 0.2311)
    """
    S = c.shape
    G = (S[0], 4 * S[1]) if len(S) == 2 else None
    if G is None or gates.shape != G or rec.shape != G or bias.shape != G[1:] \
            or c_prev.shape != S or h.shape != S:
        raise ValueError("lstm_cell_forward: gates/rec must be (B, 4H), c_prev/c/h (B, H)")
    B, H = S
    if B * H > SERIAL_MAX:
        run(_lstm_fwd_rows, B, True, gates, rec, bias, c_prev, c, h)
    else:
        _lstm_fwd_rows(gates, rec, bias, c_prev, c, h, 0, B)


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


@kernel
def _lstm_bwd_rows(gates, c_prev, c, dh_out, dh_rec, dc, lo, hi):
    """Batch rows [lo, hi) of ``lstm_cell_backward``; a task function."""
    for b in range(lo, hi):
        _bwd_row(gates, c_prev, c, dh_out, dh_rec, dc, b)


def lstm_cell_backward(gates, c_prev, c, dh_out, dh_rec, dc):
    """Backward of one LSTM step (see ``lstm_cell_forward``): gate gradients in place, dc_prev.

    gates: (B, 4H) in: the activated gates; out: gradients of the gate pre-activations.
    c_prev, c: (B, H) cell states before and after the step. dh_out, dh_rec: (B, H) the two
    parts of dL/dh' (from the step's output, from the next step). dc: (B, H) in: dL/dc';
    out: dL/dc_prev.

    Example:
        >>> g = np.full((1, 4), 0.5, np.float32)               # i = f = g = o = 0.5
        >>> z, dc = np.zeros((1, 1), np.float32), np.ones((1, 1), np.float32)
        >>> lstm_cell_backward(g, z, z, z, z, dc)
        >>> g.tolist(), dc.tolist()                             # dL/dc' = 1 reaches i, g and c
        ([[0.125, 0.0, 0.375, 0.0]], [[0.5]])
    """
    S = c.shape
    if len(S) != 2 or gates.shape != (S[0], 4 * S[1]) or c_prev.shape != S or dh_out.shape != S \
            or dh_rec.shape != S or dc.shape != S:
        raise ValueError("lstm_cell_backward: gates must be (B, 4H), the states (B, H)")
    B, H = S
    if B * H > SERIAL_MAX:
        run(_lstm_bwd_rows, B, True, gates, c_prev, c, dh_out, dh_rec, dc)
    else:
        _lstm_bwd_rows(gates, c_prev, c, dh_out, dh_rec, dc, 0, B)


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


@kernel
def _rows_blocks(a, b, out, accumulate, lo, hi):
    """Blocks [lo, hi) of ``ROW_BLOCK`` output rows of ``rows_matmul``; a task function."""
    M = a.shape[0]
    for i in range(lo, hi):
        r0 = i * ROW_BLOCK
        _rows(a, b, out, r0, min(r0 + ROW_BLOCK, M), accumulate)


def rows_matmul(a, b, out, accumulate):
    """out = a @ b, each output element summed over k in order (no scratch, any strides).

    a: (M, K), b: (K, N), out: (M, N), one float dtype. ``accumulate``: out += a @ b, the
    sums starting from out's values. Rows are dealt in blocks of ``ROW_BLOCK``, one task
    each; the sums never depend on the split.

    Example:
        >>> a, b = np.array([[1.0, 2.0]]), np.array([[3.0], [4.0]])
        >>> out = np.ones((1, 1))
        >>> rows_matmul(a, b, out, True); out.tolist()         # 1 + 1 * 3 + 2 * 4
        [[12.0]]
    """
    if a.ndim != 2 or b.ndim != 2 or b.shape[0] != a.shape[1] \
            or out.shape != (a.shape[0], b.shape[1]):
        raise ValueError("rows_matmul: shapes do not match")
    (M, K), N = a.shape, b.shape[1]
    nblk = (M + ROW_BLOCK - 1) // ROW_BLOCK
    if M * K * N > MATMUL_SERIAL:
        run(_rows_blocks, nblk, True, a, b, out, accumulate)
    else:
        _rows_blocks(a, b, out, accumulate, 0, nblk)


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


@kernel
def _gru_fwd_rows(gates, rec, b_ih, b_hh, h_prev, hn, h, lo, hi):
    """Batch rows [lo, hi) of ``gru_cell_forward``; a task function."""
    for b in range(lo, hi):
        _gru_fwd_row(gates, rec, b_ih, b_hh, h_prev, hn, h, b)


def gru_cell_forward(gates, rec, b_ih, b_hh, h_prev, hn, h):
    """One GRU step after the gemms (gate order r, z, n as PyTorch's): gates in place, hn, h'.

    gates: (B, 3H) in: x @ W_ih^T; out: the activated gates r, z, n.
    rec: (B, 3H) h_prev @ W_hh^T. b_ih, b_hh: (3H,). h_prev: (B, H).
    hn: (B, H) out: h_prev @ W_hn^T + b_hn (what backward needs of the new gate's input).
    h: (B, H) out: h' = n + z * (h_prev - n). h may not alias h_prev.

    Example:
        >>> g, b = np.zeros((1, 3)), np.zeros(3)
        >>> hn, h = np.empty((1, 1)), np.empty((1, 1))
        >>> gru_cell_forward(g, np.zeros((1, 3)), b, b, np.ones((1, 1)), hn, h)
        >>> g.tolist(), h.tolist()                      # r = z = 0.5, n = 0: h' = 0.5 * h_prev
        ([[0.5, 0.5, 0.0]], [[0.5]])
    """
    S = h.shape
    G = (S[0], 3 * S[1]) if len(S) == 2 else None
    if G is None or gates.shape != G or rec.shape != G or b_ih.shape != G[1:] \
            or b_hh.shape != G[1:] or h_prev.shape != S or hn.shape != S:
        raise ValueError("gru_cell_forward: gates/rec must be (B, 3H), biases (3H,), h_prev/hn/h (B, H)")
    B, H = S
    if B * H > SERIAL_MAX:
        run(_gru_fwd_rows, B, True, gates, rec, b_ih, b_hh, h_prev, hn, h)
    else:
        _gru_fwd_rows(gates, rec, b_ih, b_hh, h_prev, hn, h, 0, B)


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


@kernel
def _gru_bwd_rows(gates, hn, h_prev, dh_out, dh, dgh, lo, hi):
    """Batch rows [lo, hi) of ``gru_cell_backward``; a task function."""
    for b in range(lo, hi):
        _gru_bwd_row(gates, hn, h_prev, dh_out, dh, dgh, b)


def gru_cell_backward(gates, hn, h_prev, dh_out, dh, dgh):
    """Backward of one GRU step (see ``gru_cell_forward``), before the recurrent product.

    gates: (B, 3H) in: r, z, n; out: the gradients of x @ W_ih^T + b_ih (dr, dz, dn).
    hn: (B, H) in: h_prev @ W_hn^T + b_hn; out: its gradient (dn * r).
    h_prev, dh_out: (B, H) the state entering the step, the gradient from the step's output.
    dh: (B, H) in: the gradient from the next step; out: the direct part of dL/dh_prev (dh' * z),
    to which the caller adds dgh @ W_hh. dgh: (B, 3H) out: the gradient of h_prev @ W_hh^T + b_hh.

    Example:
        >>> g = np.array([[0.5, 0.5, 0.0]])                  # r = z = 0.5, n = 0
        >>> hn, dh, dgh = np.ones((1, 1)), np.ones((1, 1)), np.empty((1, 3))
        >>> gru_cell_backward(g, hn, np.ones((1, 1)), np.zeros((1, 1)), dh, dgh)
        >>> g.tolist(), dh.tolist()
        ([[0.125, 0.25, 0.5]], [[0.5]])
    """
    S = dh.shape
    G = (S[0], 3 * S[1]) if len(S) == 2 else None
    if G is None or gates.shape != G or hn.shape != S or h_prev.shape != S \
            or dh_out.shape != S or dgh.shape != G:
        raise ValueError("gru_cell_backward: gates/dgh must be (B, 3H), the states (B, H)")
    B, H = S
    if B * H > SERIAL_MAX:
        run(_gru_bwd_rows, B, True, gates, hn, h_prev, dh_out, dh, dgh)
    else:
        _gru_bwd_rows(gates, hn, h_prev, dh_out, dh, dgh, 0, B)


@helper
def _rnn_fwd_row(gates, rec, bias, h, relu, b):
    H = h.shape[1]
    for j in range(H):
        v = gates[b, j] + rec[b, j] + bias[j]
        if relu:
            h[b, j] = v if v > 0.0 else 0.0
        else:
            h[b, j] = math.tanh(v)


@kernel
def _rnn_fwd_rows(gates, rec, bias, h, relu, lo, hi):
    """Batch rows [lo, hi) of ``rnn_cell_forward``; a task function."""
    for b in range(lo, hi):
        _rnn_fwd_row(gates, rec, bias, h, relu, b)


def rnn_cell_forward(gates, rec, bias, h, relu):
    """One Elman RNN step after the gemms: h' = act(gates + rec + bias), act tanh or relu.

    gates: (B, H) x @ W_ih^T (only read). rec: (B, H) h_prev @ W_hh^T. bias: (H,) b_ih + b_hh.
    h: (B, H) out. relu: True for relu, False for tanh.

    Example:
        >>> h = np.empty((1, 2))
        >>> rnn_cell_forward(np.array([[1.0, -3.0]]), np.ones((1, 2)), np.zeros(2), h, True)
        >>> h.tolist()
        [[2.0, 0.0]]
    """
    S = h.shape
    if len(S) != 2 or gates.shape != S or rec.shape != S or bias.shape != S[1:]:
        raise ValueError("rnn_cell_forward: gates/rec/h must be (B, H), bias (H,)")
    B, H = S
    if B * H > SERIAL_MAX:
        run(_rnn_fwd_rows, B, True, gates, rec, bias, h, relu)
    else:
        _rnn_fwd_rows(gates, rec, bias, h, relu, 0, B)


@helper
def _rnn_bwd_row(h, dh_out, dh_rec, dpre, relu, b):
    H = h.shape[1]
    for j in range(H):
        g = dh_out[b, j] + dh_rec[b, j]
        if relu:
            dpre[b, j] = g if h[b, j] > 0.0 else 0.0
        else:
            dpre[b, j] = g * (1.0 - h[b, j] * h[b, j])


@kernel
def _rnn_bwd_rows(h, dh_out, dh_rec, dpre, relu, lo, hi):
    """Batch rows [lo, hi) of ``rnn_cell_backward``; a task function."""
    for b in range(lo, hi):
        _rnn_bwd_row(h, dh_out, dh_rec, dpre, relu, b)


def rnn_cell_backward(h, dh_out, dh_rec, dpre, relu):
    """Backward of one Elman step (see ``rnn_cell_forward``): the pre-activation's gradient.

    h: (B, H) the step's output. dh_out, dh_rec: (B, H) the two parts of dL/dh' (from the
    step's output, from the next step). dpre: (B, H) out. relu as in the forward.

    Example:
        >>> dpre = np.empty((1, 2))
        >>> rnn_cell_backward(np.array([[0.5, 0.0]]), np.ones((1, 2)), np.ones((1, 2)), dpre, False)
        >>> dpre.tolist()                                       # 2 * (1 - h * h)
        [[1.5, 2.0]]
    """
    S = h.shape
    if len(S) != 2 or dh_out.shape != S or dh_rec.shape != S or dpre.shape != S:
        raise ValueError("rnn_cell_backward: all arrays must be (B, H)")
    B, H = S
    if B * H > SERIAL_MAX:
        run(_rnn_bwd_rows, B, True, h, dh_out, dh_rec, dpre, relu)
    else:
        _rnn_bwd_rows(h, dh_out, dh_rec, dpre, relu, 0, B)
