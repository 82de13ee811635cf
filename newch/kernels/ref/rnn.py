"""numpy twin of ``kernels/rnn.py``: the fused LSTM cell steps as whole-array expressions."""
import numpy as np

__all__ = ["lstm_cell_forward", "lstm_cell_backward", "rows_matmul"]


def _sigmoid(x):
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def lstm_cell_forward(gates, rec, bias, c_prev, c, h):
    """Activated gates in place, c' and h'; see kernels.rnn."""
    B, H = c.shape
    if gates.shape != (B, 4 * H) or rec.shape != (B, 4 * H) or bias.shape != (4 * H,) \
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
    B, H = c.shape
    if gates.shape != (B, 4 * H) or c_prev.shape != c.shape or dh_out.shape != c.shape \
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
    if b.shape[0] != a.shape[1] or out.shape != (a.shape[0], b.shape[1]):
        raise ValueError("rows_matmul: shapes do not match")
    if accumulate:
        out += np.matmul(a, b)
    else:
        np.matmul(a, b, out=out)
