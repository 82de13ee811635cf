"""Normalisation kernels: batch norm per channel of (N, C, L), layer norm per row of (M, K).

Layout: C-contiguous arrays (``ops/`` makes them so). Statistics are float64
(C,) or (M,) arrays; parameters are (C,) / (K,) arrays of the input's dtype,
or empty arrays meaning "no affine" (weight 1, bias 0).

Determinism (DESIGN.md): batch norm gives each channel to one ``prange``
iteration, which sums its N * L terms serially in a fixed order (four
interleaved accumulators, a split fixed by L). Layer norm gives each row to
one iteration; the parameter gradients (sums over rows) give each block of
columns to one iteration, adding the rows in increasing order. Sums are
float64. At or below ``SERIAL_MAX`` elements the calling thread runs the same
loops, so serial and parallel results are the same bits.

Cold start: each kernel is a serial task function over channels, rows or
columns [lo, hi), launched in parallel through ``tasks.driver`` (no parallel
copy of its body).
"""
import math

from numba.core import types

from .jit import helper, kernel
from .specialize import entry
from .tasks import driver, signature

__all__ = ["batch_norm_forward", "batch_norm_backward", "layer_norm_rows",
           "layer_norm_backward", "layer_norm_param_grad"]

SERIAL_MAX = 32768     # at or below this many elements: no thread launch
ROW_WORK = 16384       # elements per prange task of the layer-norm row loops (about)
COL_BLOCK = 64         # columns per task of layer_norm_param_grad


def _launch(task, n, chunk, par, *args):
    """Task function ``task(*args, lo, hi)`` over [0, n): chunks of ``chunk`` items on numba's
    threads when ``par``, else [0, n) on this thread (each item is computed on its own)."""
    sig = signature(args)
    if par:
        driver(task, sig, chunk)(n, *args)
    elif n:
        entry(task, sig + (types.int64, types.int64))(*args, 0, n)


@helper
def _sum_dev(row, shift):
    """sum(row - shift) and sum((row - shift)**2) in float64, four interleaved accumulators."""
    n = row.shape[0]
    a0 = a1 = a2 = a3 = 0.0
    q0 = q1 = q2 = q3 = 0.0
    n4 = n - n % 4
    for i in range(0, n4, 4):
        d0 = row[i] - shift
        d1 = row[i + 1] - shift
        d2 = row[i + 2] - shift
        d3 = row[i + 3] - shift
        a0 += d0
        a1 += d1
        a2 += d2
        a3 += d3
        q0 += d0 * d0
        q1 += d1 * d1
        q2 += d2 * d2
        q3 += d3 * d3
    for i in range(n4, n):
        d = row[i] - shift
        a0 += d
        q0 += d * d
    return (a0 + a1) + (a2 + a3), (q0 + q1) + (q2 + q3)


@helper
def _dot_dev(g, row, shift):
    """sum(g) and sum(g * (row - shift)) in float64, four interleaved accumulators."""
    n = row.shape[0]
    a0 = a1 = a2 = a3 = 0.0
    b0 = b1 = b2 = b3 = 0.0
    n4 = n - n % 4
    for i in range(0, n4, 4):
        a0 += g[i]
        a1 += g[i + 1]
        a2 += g[i + 2]
        a3 += g[i + 3]
        b0 += g[i] * (row[i] - shift)
        b1 += g[i + 1] * (row[i + 1] - shift)
        b2 += g[i + 2] * (row[i + 2] - shift)
        b3 += g[i + 3] * (row[i + 3] - shift)
    for i in range(n4, n):
        a0 += g[i]
        b0 += g[i] * (row[i] - shift)
    return (a0 + a1) + (a2 + a3), (b0 + b1) + (b2 + b3)


@helper
def _wdot_dev(g, w, row, shift):
    """sum(g * w) and sum(g * w * (row - shift)) in float64, four interleaved accumulators."""
    n = row.shape[0]
    a0 = a1 = a2 = a3 = 0.0
    b0 = b1 = b2 = b3 = 0.0
    n4 = n - n % 4
    for i in range(0, n4, 4):
        g0 = g[i] * w[i]
        g1 = g[i + 1] * w[i + 1]
        g2 = g[i + 2] * w[i + 2]
        g3 = g[i + 3] * w[i + 3]
        a0 += g0
        a1 += g1
        a2 += g2
        a3 += g3
        b0 += g0 * (row[i] - shift)
        b1 += g1 * (row[i + 1] - shift)
        b2 += g2 * (row[i + 2] - shift)
        b3 += g3 * (row[i + 3] - shift)
    for i in range(n4, n):
        gi = g[i] * w[i]
        a0 += gi
        b0 += gi * (row[i] - shift)
    return (a0 + a1) + (a2 + a3), (b0 + b1) + (b2 + b3)


@helper
def _channel_stats(x, c, mean, var):
    N, _, L = x.shape
    s = 0.0
    for n in range(N):
        s += _sum_dev(x[n, c], 0.0)[0]
    m = s / (N * L)
    q = 0.0
    for n in range(N):
        q += _sum_dev(x[n, c], m)[1]
    mean[c] = m
    var[c] = q / (N * L)


@helper
def _channel_apply(x, c, mean, var, eps, weight, bias, out):
    invstd = 1.0 / math.sqrt(var[c] + eps)
    scale = invstd * weight[c] if weight.shape[0] else invstd
    shift = (bias[c] if bias.shape[0] else 0.0) - mean[c] * scale
    N, _, L = x.shape
    for n in range(N):
        xr = x[n, c]
        orow = out[n, c]
        for i in range(L):
            orow[i] = xr[i] * scale + shift


@helper
def _channel_forward(x, c, mean, var, eps, weight, bias, train, run_mean, run_var, momentum, out):
    if train:
        _channel_stats(x, c, mean, var)
        if run_mean.shape[0]:
            m = x.shape[0] * x.shape[2]
            unbiased = var[c] * m / (m - 1) if m > 1 else var[c]
            run_mean[c] = (1.0 - momentum) * run_mean[c] + momentum * mean[c]
            run_var[c] = (1.0 - momentum) * run_var[c] + momentum * unbiased
    _channel_apply(x, c, mean, var, eps, weight, bias, out)


@kernel
def _bn_forward_channels(x, mean, var, eps, weight, bias, train, run_mean, run_var, momentum, out,
                         lo, hi):
    """Channels [lo, hi) of ``batch_norm_forward``; a task function."""
    for c in range(lo, hi):
        _channel_forward(x, c, mean, var, eps, weight, bias, train, run_mean, run_var, momentum,
                         out)


def batch_norm_forward(x, mean, var, eps, weight, bias, train, run_mean, run_var, momentum, out):
    """out = (x - mean) / sqrt(var + eps) * weight + bias, per channel of x (N, C, L).

    x: (N, C, L) C-contiguous float. mean, var: (C,) float64: with ``train``
    they are outputs (the batch's mean and biased variance, two passes, N * L
    >= 1), else inputs (the running statistics). weight, bias: (C,) of x's
    dtype, or empty (1 and 0). run_mean, run_var: (C,) running statistics of
    x's dtype, or empty; with ``train`` each becomes (1 - momentum) * itself +
    momentum * the batch's mean / unbiased variance. out: (N, C, L)
    C-contiguous, x's dtype. Per channel the output is x * a + b with
    a = weight / sqrt(var + eps), b = bias - mean * a, computed in float64.
    Example: ``batch_norm_forward(x3, mean, var, 1e-5, w, b, True, rm, rv, 0.1, out)``.
    """
    _launch(_bn_forward_channels, x.shape[1], 1, x.size > SERIAL_MAX,
            x, mean, var, eps, weight, bias, train, run_mean, run_var, momentum, out)


@helper
def _channel_backward(x, dy, c, mean, var, eps, weight, train, dx, dweight, dbias):
    N, _, L = x.shape
    m = mean[c]
    invstd = 1.0 / math.sqrt(var[c] + eps)
    sg = 0.0
    sgx = 0.0
    for n in range(N):
        a, b = _dot_dev(dy[n, c], x[n, c], m)
        sg += a
        sgx += b
    dweight[c] = sgx * invstd
    dbias[c] = sg
    if dx.shape[0] == 0:
        return
    w = weight[c] if weight.shape[0] else 1.0
    k = invstd * w
    mg = sg / (N * L) if train else 0.0
    mx = sgx * invstd * invstd / (N * L) if train else 0.0
    for n in range(N):
        xr = x[n, c]
        gr = dy[n, c]
        orow = dx[n, c]
        for i in range(L):
            orow[i] = (gr[i] - mg - (xr[i] - m) * mx) * k


@kernel
def _bn_backward_channels(x, dy, mean, var, eps, weight, train, dx, dweight, dbias, lo, hi):
    """Channels [lo, hi) of ``batch_norm_backward``; a task function."""
    for c in range(lo, hi):
        _channel_backward(x, dy, c, mean, var, eps, weight, train, dx, dweight, dbias)


def batch_norm_backward(x, dy, mean, var, eps, weight, train, dx, dweight, dbias):
    """Gradients of batch_norm_forward for x (N, C, L) and upstream dy (same shape).

    mean, var: (C,) float64 (the batch's when ``train``, the running ones else).
    weight: (C,) or empty. dx: (N, C, L) of x's dtype, or an empty (0, C, L)
    array to skip it. dweight = sum(dy * xhat), dbias = sum(dy): (C,) float64.
    With ``train`` the statistics depend on x: dx = (dy - mean(dy) - xhat *
    mean(dy * xhat)) * weight / sqrt(var + eps); otherwise dx = dy * weight / sqrt(var + eps).
    """
    _launch(_bn_backward_channels, x.shape[1], 1, x.size > SERIAL_MAX,
            x, dy, mean, var, eps, weight, train, dx, dweight, dbias)


def _rows_per_task(K):
    return max(1, ROW_WORK // max(K, 1))


@kernel
def _ln_rows(x, weight, bias, eps, out, mean, rstd, r0, r1):
    """Rows [r0, r1) of ``layer_norm_rows``; a task function."""
    K = x.shape[1]
    for r in range(r0, r1):
        row = x[r]
        m = _sum_dev(row, 0.0)[0] / K
        rs = 1.0 / math.sqrt(_sum_dev(row, m)[1] / K + eps)
        mean[r] = m
        rstd[r] = rs
        orow = out[r]
        if weight.shape[0] and bias.shape[0]:
            for i in range(K):
                orow[i] = (row[i] - m) * rs * weight[i] + bias[i]
        elif weight.shape[0]:
            for i in range(K):
                orow[i] = (row[i] - m) * rs * weight[i]
        elif bias.shape[0]:
            for i in range(K):
                orow[i] = (row[i] - m) * rs + bias[i]
        else:
            for i in range(K):
                orow[i] = (row[i] - m) * rs


def layer_norm_rows(x, weight, bias, eps, out, mean, rstd):
    """Normalise each row of x (M, K): out = (x - mean) / sqrt(var + eps) * weight + bias.

    x, out: (M, K) C-contiguous float, K >= 1. weight, bias: (K,) of x's dtype,
    or empty (1 and 0). mean, rstd: (M,) float64 outputs (the row's
    mean and 1 / sqrt(biased var + eps)), kept for the backward.
    """
    M, K = x.shape
    _launch(_ln_rows, M, _rows_per_task(K), x.size > SERIAL_MAX,
            x, weight, bias, eps, out, mean, rstd)


@kernel
def _ln_back_rows(x, dy, mean, rstd, weight, dx, r0, r1):
    """Rows [r0, r1) of ``layer_norm_backward``; a task function."""
    K = x.shape[1]
    for r in range(r0, r1):
        row = x[r]
        gr = dy[r]
        m = mean[r]
        rs = rstd[r]
        if weight.shape[0]:
            a, b = _wdot_dev(gr, weight, row, m)
        else:
            a, b = _dot_dev(gr, row, m)
        a = a / K
        b = b * rs * rs / K
        orow = dx[r]
        if weight.shape[0]:
            for i in range(K):
                orow[i] = (gr[i] * weight[i] - a - (row[i] - m) * b) * rs
        else:
            for i in range(K):
                orow[i] = (gr[i] - a - (row[i] - m) * b) * rs


def layer_norm_backward(x, dy, mean, rstd, weight, dx):
    """Input gradient of layer_norm_rows, row by row.

    With g = dy * weight and xhat = (x - mean) * rstd:
    dx = (g - mean(g) - xhat * mean(g * xhat)) * rstd.

    x, dy, dx: (M, K) C-contiguous. mean, rstd: (M,) float64. weight: (K,) or empty.
    """
    M, K = x.shape
    _launch(_ln_back_rows, M, _rows_per_task(K), x.size > SERIAL_MAX,
            x, dy, mean, rstd, weight, dx)


@kernel
def _ln_param_cols(x, dy, mean, rstd, dweight, dbias, k0, k1):
    """Columns [k0, k1) of ``layer_norm_param_grad`` (a task function): each column's sums run over the rows in order; four columns at a time
    keep eight independent accumulators in registers."""
    M = x.shape[0]
    k = k0
    while k + 4 <= k1:
        w0 = w1 = w2 = w3 = 0.0
        b0 = b1 = b2 = b3 = 0.0
        for r in range(M):
            m = mean[r]
            rs = rstd[r]
            row = x[r]
            gr = dy[r]
            w0 += gr[k] * ((row[k] - m) * rs)
            w1 += gr[k + 1] * ((row[k + 1] - m) * rs)
            w2 += gr[k + 2] * ((row[k + 2] - m) * rs)
            w3 += gr[k + 3] * ((row[k + 3] - m) * rs)
            b0 += gr[k]
            b1 += gr[k + 1]
            b2 += gr[k + 2]
            b3 += gr[k + 3]
        dweight[k], dweight[k + 1], dweight[k + 2], dweight[k + 3] = w0, w1, w2, w3
        dbias[k], dbias[k + 1], dbias[k + 2], dbias[k + 3] = b0, b1, b2, b3
        k += 4
    for j in range(k, k1):
        a = 0.0
        b = 0.0
        for r in range(M):
            a += dy[r, j] * ((x[r, j] - mean[r]) * rstd[r])
            b += dy[r, j]
        dweight[j] = a
        dbias[j] = b


def layer_norm_param_grad(x, dy, mean, rstd, dweight, dbias):
    """dweight = sum over rows of dy * xhat, dbias = sum over rows of dy, rows added in order.

    x, dy: (M, K) C-contiguous. mean, rstd: (M,) float64. dweight, dbias: (K,) float64.
    """
    _launch(_ln_param_cols, x.shape[1], COL_BLOCK, x.size > SERIAL_MAX,
            x, dy, mean, rstd, dweight, dbias)
