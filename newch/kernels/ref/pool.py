"""Numpy twins of ``kernels/pool.py``: same names and signatures, one output position at a time."""
import numpy as np

__all__ = ["max_pool", "max_pool_backward", "avg_pool", "avg_pool_backward"]


def _window(x, oh, ow, hs, hc, ws, wc, dh, dw):
    """x[:, rows, cols] of the window of (oh, ow), shape (P, hc, wc)."""
    rows = hs[oh] + np.arange(hc[oh]) * dh
    cols = ws[ow] + np.arange(wc[ow]) * dw
    return x[:, rows[:, None], cols[None, :]], rows, cols


def max_pool(x, out, arg, hs, hc, ws, wc, dh, dw):
    """out = window max, arg = its row-major position in the window (first max; a NaN wins)."""
    P = x.shape[0]
    for oh in range(out.shape[1]):
        for ow in range(out.shape[2]):
            win = _window(x, oh, ow, hs, hc, ws, wc, dh, dw)[0].reshape(P, -1)
            nan = np.isnan(win)
            last_nan = win.shape[1] - 1 - np.argmax(nan[:, ::-1], axis=1)
            pos = np.where(nan.any(axis=1), last_nan, np.argmax(win, axis=1))
            arg[:, oh, ow] = pos
            out[:, oh, ow] = win[np.arange(P), pos]


def max_pool_backward(g, arg, hs, hc, ws, wc, dh, dw, dx):
    """dx = zeros plus each g added at the input position its arg names."""
    dx[...] = 0
    P = dx.shape[0]
    for oh in range(g.shape[1]):
        for ow in range(g.shape[2]):
            a = arg[:, oh, ow].astype(np.int64)
            rows = hs[oh] + a // wc[ow] * dh
            cols = ws[ow] + a % wc[ow] * dw
            dx[np.arange(P), rows, cols] += g[:, oh, ow]


def _den(oh, ow, hden, wden, divisor):
    return divisor if divisor > 0 else hden[oh] * wden[ow]


def avg_pool(x, out, hs, hc, ws, wc, hden, wden, divisor):
    """out = window sum / divisor (or hden[oh] * wden[ow])."""
    for oh in range(out.shape[1]):
        for ow in range(out.shape[2]):
            win = _window(x, oh, ow, hs, hc, ws, wc, 1, 1)[0]
            out[:, oh, ow] = win.sum(axis=(1, 2)) / _den(oh, ow, hden, wden, divisor)


def avg_pool_backward(g, hs, hc, ws, wc, hden, wden, divisor, dx):
    """dx = each g / divisor spread over its window."""
    dx[...] = 0
    for oh in range(g.shape[1]):
        for ow in range(g.shape[2]):
            rows = slice(hs[oh], hs[oh] + hc[oh])
            cols = slice(ws[ow], ws[ow] + wc[ow])
            dx[:, rows, cols] += (g[:, oh, ow] / _den(oh, ow, hden, wden, divisor))[:, None, None]
