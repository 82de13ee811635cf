"""Recurrent layers RNN, LSTM and GRU: stacked, optionally bidirectional, over padded or packed
batches. Parameter names, shapes, gate order and initialisation are PyTorch's.

On a padded batch (and LSTM without ``proj_size``) each layer-direction is one graph node on
fused kernels (``rnn_fused``, ``rnn_fused_gru``). Otherwise (packed batches, ``proj_size``,
``rnn_fused.ENABLED = False``) each layer runs the step functions of ``rnn_cells`` over time. A
packed batch runs padded with a per-step mask: a sequence that has ended keeps its state, and
its outputs past its end are zero.
"""
import math

from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter, empty_persistent
from . import rnn_fused
from .rnn_fused_gru import gru_sequence, rnn_sequence
from .rnn_cells import gru_step, lstm_step, rnn_step
from .utils.rnn import PackedSequence, pack_padded_sequence, pad_packed_sequence
from .. import dtypes as D
from ..ops.creation import tensor
from ..ops.join import cat, stack
from ..ops.conditional import where

_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


class RNNBase(Module):
    """What RNN, LSTM and GRU share: parameters, input checks, layers and directions."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        name = type(self).__name__
        for what, v in (("input_size", input_size), ("hidden_size", hidden_size),
                        ("num_layers", num_layers)):
            if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
                raise ValueError(f"{name}: {what} must be a positive int, got {v!r}")
        if isinstance(dropout, bool) or not isinstance(dropout, (int, float)) or not 0 <= dropout <= 1:
            raise ValueError(f"{name}: dropout should be a number in range [0, 1], got {dropout!r}")
        if not isinstance(proj_size, int) or proj_size < 0:
            raise ValueError(f"{name}: proj_size should be a non-negative int, got {proj_size!r}")
        if proj_size and mode != "LSTM":
            raise ValueError(f"{name}: proj_size argument is only supported for LSTM, not RNN or GRU")
        if proj_size >= hidden_size:
            raise ValueError(f"{name}: proj_size ({proj_size}) has to be smaller than hidden_size "
                             f"({hidden_size})")
        self.mode, self.input_size, self.hidden_size = mode, input_size, hidden_size
        self.num_layers, self.bias, self.batch_first = num_layers, bias, batch_first
        self.dropout, self.bidirectional, self.proj_size = float(dropout), bidirectional, proj_size
        dirs = 2 if bidirectional else 1
        real = proj_size or hidden_size
        g = _GATES[mode] * hidden_size
        self._flat_weights_names = []
        for layer in range(num_layers):
            for d in range(dirs):
                sfx = f"_l{layer}" + ("_reverse" if d else "")
                shapes = [("weight_ih", (g, input_size if layer == 0 else real * dirs)),
                          ("weight_hh", (g, real))]
                if bias:
                    shapes += [("bias_ih", (g,)), ("bias_hh", (g,))]
                if proj_size:
                    shapes.append(("weight_hr", (proj_size, hidden_size)))
                for base, shp in shapes:
                    setattr(self, base + sfx, Parameter(empty_persistent(shp, dtype)))
                    self._flat_weights_names.append(base + sfx)
        self.reset_parameters()

    def reset_parameters(self):
        """Every parameter ~ U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)), as in PyTorch."""
        k = 1.0 / math.sqrt(self.hidden_size)
        for p in self.parameters():
            init.uniform_(p, -k, k)

    @property
    def all_weights(self):
        return [[getattr(self, n) for n in self._flat_weights_names if n.endswith(sfx)]
                for sfx in self._suffixes()]

    def _suffixes(self):
        dirs = 2 if self.bidirectional else 1
        return [f"_l{layer}" + ("_reverse" if d else "") for layer in range(self.num_layers)
                for d in range(dirs)]

    def _weights(self, sfx):
        get = lambda base: getattr(self, base + sfx, None)   # noqa: E731
        return get("weight_ih"), get("weight_hh"), get("bias_ih"), get("bias_hh"), get("weight_hr")

    def _check_input(self, x, batched):
        name = type(self).__name__
        if x.ndim != (3 if batched else 2):
            raise ValueError(f"{name}: expected input to be 2-D (unbatched) or 3-D, got {x.ndim}-D")
        if x.shape[-1] != self.input_size:
            raise RuntimeError(f"{name}: input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {x.shape[-1]}")

    def _initial(self, hx, x, b, batched):
        """The initial (h, c) lists per layer-direction, shaped (B, H) each."""
        dirs = 2 if self.bidirectional else 1
        real = self.proj_size or self.hidden_size
        n = self.num_layers * dirs
        if hx is None:
            h = x.new_zeros(n, b, real)
            c = x.new_zeros(n, b, self.hidden_size) if self.mode == "LSTM" else None
        else:
            h, c = hx if self.mode == "LSTM" else (hx, None)
            if not batched:
                h, c = h.unsqueeze(1), (c.unsqueeze(1) if c is not None else None)
            if tuple(h.shape) != (n, b, real):
                raise RuntimeError(f"{type(self).__name__}: expected hidden size {(n, b, real)}, got "
                                   f"{tuple(h.shape)}")
            if c is not None and tuple(c.shape) != (n, b, self.hidden_size):
                raise RuntimeError(f"{type(self).__name__}: expected cell size "
                                   f"{(n, b, self.hidden_size)}, got {tuple(c.shape)}")
        return h.unbind(0), (c.unbind(0) if c is not None else None)

    def _direction(self, xs, h, c, sfx, reverse, mask):
        """Run one direction of one layer over the steps ``xs`` (a list of (B, I) tensors);
        returns (list of (B, H) outputs, h, c).

        NOTE: x_t @ W_ih^T is computed per step, not for all steps at once and then sliced: a
        slice's backward makes a gradient the size of the whole (T, B, gates) tensor at every
        step, which doubled the arena peak of backward through time.
        """
        w_ih, w_hh, b_ih, b_hh, w_hr = self._weights(sfx)
        t_len = len(xs)
        outs = [None] * t_len
        for t in (range(t_len - 1, -1, -1) if reverse else range(t_len)):
            gx = F.linear(xs[t], w_ih, b_ih)
            if self.mode == "LSTM":
                h2, c2 = lstm_step(gx, h, c, w_hh, b_hh, w_hr)
            elif self.mode == "GRU":
                h2, c2 = gru_step(gx, h, w_hh, b_hh), None
            else:
                h2, c2 = rnn_step(gx, h, w_hh, b_hh, "tanh" if self.mode == "RNN_TANH" else "relu"), None
            if mask is not None:
                m = mask[t]
                h2 = where(m, h2, h)
                c2 = where(m, c2, c) if c2 is not None else None
                outs[t] = where(m, h2, 0.0)
            else:
                outs[t] = h2
            h, c = h2, c2
        return outs, h, c

    def forward(self, input, hx=None):
        packed = isinstance(input, PackedSequence)
        mask = None
        if packed:
            x, lengths = pad_packed_sequence(input)
            batched = True
            ls = lengths.numpy()
            mask = [tensor((ls > t)[:, None], dtype=D.bool_) for t in range(x.shape[0])]
        else:
            batched = input.ndim == 3
            x = input
            self._check_input(x, batched)
            if not batched:
                x = x.unsqueeze(1)
            elif self.batch_first:
                x = x.transpose(0, 1)
        hs, cs = self._initial(hx, x, x.shape[1], batched)
        if not self.proj_size and mask is None and rnn_fused.ENABLED:
            x, h_n, c_n = self._forward_fused(x, hs, cs)
        else:
            x, h_n, c_n = self._forward_steps(x, hs, cs, mask)
        h_out = stack(h_n, 0)
        c_out = stack(c_n, 0) if self.mode == "LSTM" else None
        if packed:
            out = pack_padded_sequence(x, lengths, enforce_sorted=input.sorted_indices is None)
            out = PackedSequence(out.data, input.batch_sizes, input.sorted_indices, input.unsorted_indices)
        elif not batched:
            out = x.squeeze(1)
            h_out = h_out.squeeze(1)
            c_out = c_out.squeeze(1) if c_out is not None else None
        else:
            out = x.transpose(0, 1) if self.batch_first else x
        return out, ((h_out, c_out) if self.mode == "LSTM" else h_out)

    def _forward_fused(self, x, hs, cs):
        """Layers on ``rnn_fused`` / ``rnn_fused_gru``: one graph node per layer-direction."""
        dirs = 2 if self.bidirectional else 1
        sfx = self._suffixes()
        h_n, c_n = [], []
        for layer in range(self.num_layers):
            outs = []
            for d in range(dirs):
                k = layer * dirs + d
                w_ih, w_hh, b_ih, b_hh, _ = self._weights(sfx[k])
                if self.mode == "LSTM":
                    o, h, c = rnn_fused.lstm_sequence(x, hs[k], cs[k], w_ih, w_hh, b_ih, b_hh, d == 1)
                elif self.mode == "GRU":
                    (o, h), c = gru_sequence(x, hs[k], w_ih, w_hh, b_ih, b_hh, d == 1), None
                else:
                    act = "relu" if self.mode == "RNN_RELU" else "tanh"
                    (o, h), c = rnn_sequence(x, hs[k], w_ih, w_hh, b_ih, b_hh, act, d == 1), None
                outs.append(o)
                h_n.append(h)
                c_n.append(c)
            x = outs[0] if dirs == 1 else cat(outs, 2)
            if self.dropout and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, True)
        return x, h_n, c_n

    def _forward_steps(self, x, hs, cs, mask):
        """Any recurrent layer, one step at a time on ``rnn_cells`` (packed batches, proj_size)."""
        xs = list(x.unbind(0))
        dirs = 2 if self.bidirectional else 1
        h_n, c_n = [], []
        for layer in range(self.num_layers):
            outs = []
            for d in range(dirs):
                k = layer * dirs + d
                o, h, c = self._direction(xs, hs[k], cs[k] if cs is not None else None,
                                          self._suffixes()[k], d == 1, mask)
                outs.append(o)
                h_n.append(h)
                c_n.append(c)
            xs = outs[0] if dirs == 1 else [cat([a, b], 1) for a, b in zip(*outs)]
            if self.dropout and self.training and layer < self.num_layers - 1:
                xs = [F.dropout(v, self.dropout, True) for v in xs]
        return stack(xs, 0), h_n, c_n

    def flatten_parameters(self):
        """Accepted for compatibility (cuDNN weight packing); does nothing on newch."""

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if not self.bias:
            s += ", bias=False"
        if self.batch_first:
            s += ", batch_first=True"
        if self.dropout:
            s += f", dropout={self.dropout}"
        if self.bidirectional:
            s += ", bidirectional=True"
        return s


class RNN(RNNBase):
    """Elman RNN: h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh) (``nonlinearity='relu'``
    for relu), stacked ``num_layers`` deep. Returns (output, h_n).

    Example:
        >>> rnn = RNN(4, 8, num_layers=2, batch_first=True)
        >>> out, h = rnn(newch.randn(3, 5, 4))
        >>> out.shape, h.shape
        (newch.Size([3, 5, 8]), newch.Size([2, 3, 8]))
    """

    def __init__(self, input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, device=None, dtype=None,
                 proj_size=0):
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"RNN: unknown nonlinearity {nonlinearity!r} (expected 'tanh' or 'relu')")
        self.nonlinearity = nonlinearity
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", input_size, hidden_size,
                         num_layers, bias, batch_first, dropout, bidirectional, proj_size, device, dtype)


class LSTM(RNNBase):
    """Long short-term memory layers; returns (output, (h_n, c_n)). ``proj_size`` > 0 projects h.

    Example:
        >>> lstm = LSTM(4, 8)
        >>> out, (h, c) = lstm(newch.randn(5, 3, 4))
        >>> out.shape, c.shape
        (newch.Size([5, 3, 8]), newch.Size([1, 3, 8]))
    """

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, proj_size, device, dtype)


class GRU(RNNBase):
    """Gated recurrent unit layers; returns (output, h_n).

    Example:
        >>> gru = GRU(4, 8, bidirectional=True)
        >>> gru(newch.randn(5, 3, 4))[0].shape
        newch.Size([5, 3, 16])
    """

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, device=None, dtype=None, proj_size=0):
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, proj_size, device, dtype)


