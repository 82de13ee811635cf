"""One recurrent step of an Elman RNN, an LSTM and a GRU, and the cell layers built on them.

Gate order and parameter layout are PyTorch's (LSTM: input, forget, cell, output; GRU: reset,
update, new), so state_dicts interchange. The steps take ``gx`` = x @ W_ih^T + b_ih already
computed (the layers compute it for every time step in one matmul).
"""
import math

from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter, empty_persistent
from ..ops.unary import sigmoid, tanh


def rnn_step(gx, h, w_hh, b_hh, nonlinearity="tanh"):
    """h' = act(gx + h @ w_hh^T + b_hh)."""
    pre = gx + F.linear(h, w_hh, b_hh)
    return tanh(pre) if nonlinearity == "tanh" else F.relu(pre)


def lstm_step(gx, h, c, w_hh, b_hh, w_hr=None):
    """(h', c') of one LSTM step; ``w_hr`` projects h' when the layer has ``proj_size``."""
    gates = gx + F.linear(h, w_hh, b_hh)
    i, f, g, o = gates.chunk(4, -1)
    c2 = sigmoid(f) * c + sigmoid(i) * tanh(g)
    h2 = sigmoid(o) * tanh(c2)
    if w_hr is not None:
        h2 = F.linear(h2, w_hr)
    return h2, c2


def gru_step(gx, h, w_hh, b_hh):
    """h' of one GRU step: n + z * (h - n) with r, z, n from the reset / update / new gates."""
    gh = F.linear(h, w_hh, b_hh)
    xr, xz, xn = gx.chunk(3, -1)
    hr, hz, hn = gh.chunk(3, -1)
    r = sigmoid(xr + hr)
    z = sigmoid(xz + hz)
    n = tanh(xn + r * hn)
    return n + z * (h - n)


class _CellBase(Module):
    def __init__(self, input_size, hidden_size, bias, gates, device=None, dtype=None):
        super().__init__()
        for name, v in (("input_size", input_size), ("hidden_size", hidden_size)):
            if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
                raise ValueError(f"{type(self).__name__}: {name} must be a positive int, got {v!r}")
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        g = gates * hidden_size
        self.weight_ih = Parameter(empty_persistent((g, input_size), dtype))
        self.weight_hh = Parameter(empty_persistent((g, hidden_size), dtype))
        if bias:
            self.bias_ih = Parameter(empty_persistent((g,), dtype))
            self.bias_hh = Parameter(empty_persistent((g,), dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self):
        """Every parameter ~ U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)), as in PyTorch."""
        k = 1.0 / math.sqrt(self.hidden_size)
        for p in self.parameters():
            init.uniform_(p, -k, k)

    def _prep(self, input, hx):
        if input.ndim not in (1, 2):
            raise ValueError(f"{type(self).__name__}: expected input to be 1-D or 2-D, got "
                             f"{input.ndim}-D")
        if input.shape[-1] != self.input_size:
            raise ValueError(f"{type(self).__name__}: input has {input.shape[-1]} features, "
                             f"expected input_size={self.input_size}")
        batched = input.ndim == 2
        x = input if batched else input.unsqueeze(0)
        if hx is None:
            return x, None, batched
        hs = hx if isinstance(hx, tuple) else (hx,)
        hs = tuple(h if batched else h.unsqueeze(0) for h in hs)
        return x, (hs if isinstance(hx, tuple) else hs[0]), batched

    def _zeros(self, x):
        return x.new_zeros(x.shape[0], self.hidden_size)

    def extra_repr(self):
        return f"{self.input_size}, {self.hidden_size}" + ("" if self.bias else ", bias=False")


class RNNCell(_CellBase):
    """One step of an Elman RNN: h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh) (or relu).

    Example:
        >>> cell = RNNCell(3, 5)
        >>> cell(newch.randn(2, 3)).shape
        newch.Size([2, 5])
    """

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"RNNCell: unknown nonlinearity {nonlinearity!r} (expected 'tanh' or 'relu')")
        self.nonlinearity = nonlinearity
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)

    def forward(self, input, hx=None):
        x, h, batched = self._prep(input, hx)
        h = self._zeros(x) if h is None else h
        out = rnn_step(F.linear(x, self.weight_ih, self.bias_ih), h, self.weight_hh, self.bias_hh,
                       self.nonlinearity)
        return out if batched else out.squeeze(0)


class LSTMCell(_CellBase):
    """One LSTM step; returns (h', c'). Gates in PyTorch's order: input, forget, cell, output.

    Example:
        >>> cell = LSTMCell(3, 5)
        >>> h, c = cell(newch.randn(2, 3))
        >>> h.shape, c.shape
        (newch.Size([2, 5]), newch.Size([2, 5]))
    """

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input, hx=None):
        x, hc, batched = self._prep(input, hx)
        h, c = (self._zeros(x), self._zeros(x)) if hc is None else hc
        h2, c2 = lstm_step(F.linear(x, self.weight_ih, self.bias_ih), h, c, self.weight_hh, self.bias_hh)
        return (h2, c2) if batched else (h2.squeeze(0), c2.squeeze(0))


class GRUCell(_CellBase):
    """One GRU step. Gates in PyTorch's order: reset, update, new.

    Example:
        >>> cell = GRUCell(3, 5)
        >>> cell(newch.randn(2, 3)).shape
        newch.Size([2, 5])
    """

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input, hx=None):
        x, h, batched = self._prep(input, hx)
        h = self._zeros(x) if h is None else h
        out = gru_step(F.linear(x, self.weight_ih, self.bias_ih), h, self.weight_hh, self.bias_hh)
        return out if batched else out.squeeze(0)
