"""numpy twin of ``kernels/rnn.py``: the fused LSTM cell steps as whole-array expressions."""
import numpy as np

__all__ = ["lstm_cell_forward", "lstm_cell_backward", "rows_matmul", "gru_cell_forward",
           "gru_cell_backward", "rnn_cell_forward", "rnn_cell_backward"]


def _sigmoid(x):
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def lstm_cell_forward(gates, rec, bias, c_prev, c, h):
    """Activated gates in place, c' and h'; see kernels.rnn."""
    B, H = c.shape if c.ndim == 2 else (-1, -1)
    if B < 0 or gates.shape != (B, 4 * H) or rec.shape != (B, 4 * H) or bias.shape != (4 * H,) \
            or c_prev.shape != (B, H) or h.shape != (B, H):
        raise ValueError("lstm_cell_forward: gates/rec must be (B, 4H), c_prev/c/h (B, H)")
    pre = gates.astype(np.float64) + rec + bias
    i, f = _sigmoid(pre[:, :H]), _sigmoid(pre[:, H:2 * H])
    g, o = np.tanh(pre[:, 2 * H:3 * H]), _sigmoid(pre[:, 3 * H:])
    cn = (f * c_prev + i * g).astype(c.dtype)
    gates[...] = np.concatenate([i, f, g, o], axis=1)
    c[...] = cn
    h[...] = o * np.tanh(cn.astype(np.float64))


def lstm_cell_backward(gates, c_prev, c, dh_out, dh_rec, dc):
    """Gate pre-activation gradients in place of the gates, dc_prev in place of dc; see kernels.rnn."""
    B, H = c.shape if c.ndim == 2 else (-1, -1)
    if B < 0 or gates.shape != (B, 4 * H) or c_prev.shape != c.shape or dh_out.shape != c.shape \
            or dh_rec.shape != c.shape or dc.shape != c.shape:
        raise ValueError("lstm_cell_backward: gates must be (B, 4H), the states (B, H)")
    G = gates.astype(np.float64)
    i, f, g, o = G[:, :H], G[:, H:2 * H], G[:, 2 * H:3 * H], G[:, 3 * H:]
    tc = np.tanh(c.astype(np.float64))
    dh = dh_out.astype(np.float64) + dh_rec
    dct = dc + dh * o * (1.0 - tc * tc)
    out = np.concatenate([dct * g * i * (1.0 - i), dct * c_prev * f * (1.0 - f),
                          dct * i * (1.0 - g * g), dh * tc * o * (1.0 - o)], axis=1)
    gates[...] = out
    dc[...] = dct * f


def rows_matmul(a, b, out, accumulate):
    """out = a @ b (``accumulate``: out += a @ b); see kernels.rnn."""
    if a.ndim != 2 or b.ndim != 2 or b.shape[0] != a.shape[1] or out.shape != (a.shape[0], b.shape[1]):
        raise ValueError("rows_matmul: shapes do not match")
    if accumulate:
        out += np.matmul(a, b)
    else:
        np.matmul(a, b, out=out)


def gru_cell_forward(gates, rec, b_ih, b_hh, h_prev, hn, h):
    """Activated gates r, z, n in place, hn and h'; see kernels.rnn."""
    B, H = h.shape if h.ndim == 2 else (-1, -1)
    if B < 0 or gates.shape != (B, 3 * H) or rec.shape != (B, 3 * H) or b_ih.shape != (3 * H,) \
            or b_hh.shape != (3 * H,) or h_prev.shape != (B, H) or hn.shape != (B, H):
        raise ValueError("gru_cell_forward: gates/rec must be (B, 3H), biases (3H,), h_prev/hn/h (B, H)")
    x = gates.astype(np.float64) + b_ih
    hh = rec.astype(np.float64) + b_hh
    r, z = _sigmoid(x[:, :H] + hh[:, :H]), _sigmoid(x[:, H:2 * H] + hh[:, H:2 * H])
    n = np.tanh(x[:, 2 * H:] + r * hh[:, 2 * H:])
    gates[...] = np.concatenate([r, z, n], axis=1)
    hn[...] = hh[:, 2 * H:]
    h[...] = n + z * (h_prev - n)


def gru_cell_backward(gates, hn, h_prev, dh_out, dh, dgh):
    """Gradients of the GRU step's products in place; see kernels.rnn."""
    B, H = dh.shape if dh.ndim == 2 else (-1, -1)
    if B < 0 or gates.shape != (B, 3 * H) or hn.shape != (B, H) or h_prev.shape != (B, H) \
            or dh_out.shape != (B, H) or dgh.shape != (B, 3 * H):
        raise ValueError("gru_cell_backward: gates/dgh must be (B, 3H), the states (B, H)")
    G = gates.astype(np.float64)
    r, z, n = G[:, :H], G[:, H:2 * H], G[:, 2 * H:]
    g = dh_out.astype(np.float64) + dh
    dn = g * (1.0 - z) * (1.0 - n * n)
    dr = dn * hn * r * (1.0 - r)
    dz = g * (h_prev - n) * z * (1.0 - z)
    gates[...] = np.concatenate([dr, dz, dn], axis=1)
    hn[...] = dn * r
    dgh[...] = np.concatenate([dr, dz, dn * r], axis=1)
    dh[...] = g * z


def rnn_cell_forward(gates, rec, bias, h, relu):
    """h' = act(gates + rec + bias); see kernels.rnn."""
    if h.ndim != 2 or gates.shape != h.shape or rec.shape != h.shape or bias.shape != h.shape[1:]:
        raise ValueError("rnn_cell_forward: gates/rec/h must be (B, H), bias (H,)")
    v = gates.astype(np.float64) + rec + bias
    h[...] = np.where(v > 0, v, 0.0) if relu else np.tanh(v)


def rnn_cell_backward(h, dh_out, dh_rec, dpre, relu):
    """The pre-activation's gradient; see kernels.rnn."""
    if h.ndim != 2 or dh_out.shape != h.shape or dh_rec.shape != h.shape or dpre.shape != h.shape:
        raise ValueError("rnn_cell_backward: all arrays must be (B, H)")
    g = dh_out.astype(np.float64) + dh_rec
    hv = h.astype(np.float64)
    dpre[...] = np.where(hv > 0, g, 0.0) if relu else g * (1.0 - hv * hv)
