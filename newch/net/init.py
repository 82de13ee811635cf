"""Weight initialisation (``newch.nn.init``): fill a tensor in place, with PyTorch's defaults.

Every function runs under ``no_grad`` and writes straight into the tensor's
memory: initialising a parameter allocates nothing in the step arena
(random draws go directly into contiguous memory).
"""
import math
import warnings

import numpy as np

from ..graph import no_grad
from ..generator import rng_of
from ..ops.creation import from_numpy
from ..tensor import Tensor

_LINEAR_LIKE = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                "conv_transpose3d", "sigmoid")


def _check(op, tensor):
    if not isinstance(tensor, Tensor):
        raise TypeError(f"{op}: expected a Tensor, got {type(tensor).__name__}")
    return tensor


def calculate_gain(nonlinearity, param=None):
    """The recommended scale of weights feeding ``nonlinearity`` (PyTorch's table).

    Args:
        nonlinearity: 'linear', 'conv1d'..'conv_transpose3d', 'sigmoid', 'tanh',
            'relu', 'leaky_relu' or 'selu'.
        param: the negative slope for 'leaky_relu' (default 0.01).

    Example:
        >>> round(calculate_gain("relu"), 4)
        1.4142
    """
    if nonlinearity in _LINEAR_LIKE:
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, (int, float)) and not isinstance(param, bool):
            slope = param
        else:
            raise ValueError(f"calculate_gain: negative_slope {param!r} is not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"calculate_gain: unsupported nonlinearity {nonlinearity!r}; expected one of "
                     f"{', '.join(_LINEAR_LIKE)}, tanh, relu, leaky_relu, selu")


def _calculate_fan_in_and_fan_out(tensor):
    """(fan_in, fan_out) of a weight: dim 1 and dim 0 sizes times the receptive field.

    Example:
        >>> _calculate_fan_in_and_fan_out(newch.empty(5, 3))
        (3, 5)
    """
    if tensor.ndim < 2:
        raise ValueError(f"init: fan in and fan out can not be computed for a tensor with fewer "
                         f"than 2 dimensions, got shape {tuple(tensor.shape)}")
    receptive = 1
    for s in tuple(tensor.shape)[2:]:
        receptive *= s
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _fan(op, tensor, mode):
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"{op}: mode {mode!r} is not supported, expected 'fan_in' or 'fan_out'")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """Fill ``tensor`` with samples from U(a, b).

    Example:
        >>> w = uniform_(newch.empty(3, 5), -1.0, 1.0)
    """
    _check("uniform_", tensor)
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """Fill ``tensor`` with samples from N(mean, std**2).

    Example:
        >>> w = normal_(newch.empty(3, 5), std=0.02)
    """
    _check("normal_", tensor)
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def constant_(tensor, val):
    """Fill ``tensor`` with ``val``.

    Example:
        >>> constant_(newch.empty(2), 0.5).tolist()
        [0.5, 0.5]
    """
    _check("constant_", tensor)
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor):
    """Fill ``tensor`` with ones.

    Example:
        >>> ones_(newch.empty(2)).tolist()
        [1.0, 1.0]
    """
    return constant_(tensor, 1.0)


def zeros_(tensor):
    """Fill ``tensor`` with zeros.

    Example:
        >>> zeros_(newch.empty(2)).tolist()
        [0.0, 0.0]
    """
    return constant_(tensor, 0.0)


def eye_(tensor):
    """Fill a 2-D ``tensor`` with the identity matrix (ones on the diagonal).

    Example:
        >>> eye_(newch.empty(2, 2)).tolist()
        [[1.0, 0.0], [0.0, 1.0]]
    """
    _check("eye_", tensor)
    if tensor.ndim != 2:
        raise ValueError(f"eye_: only 2-D tensors are supported, got shape {tuple(tensor.shape)}")
    return _write("eye_", tensor, np.eye(*tuple(tensor.shape)))


def xavier_uniform_(tensor, gain=1.0, generator=None):
    """Glorot uniform: U(-b, b) with b = gain * sqrt(6 / (fan_in + fan_out)).

    Example:
        >>> w = xavier_uniform_(newch.empty(3, 5))
    """
    _check("xavier_uniform_", tensor)
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    bound = math.sqrt(3.0) * gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    """Glorot normal: N(0, std**2) with std = gain * sqrt(2 / (fan_in + fan_out)).

    Example:
        >>> w = xavier_normal_(newch.empty(3, 5))
    """
    _check("xavier_normal_", tensor)
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def _kaiming_std(op, tensor, a, mode, nonlinearity):
    _check(op, tensor)
    if 0 in tuple(tensor.shape):
        warnings.warn(f"{op}: initializing a zero-element tensor is a no-op", UserWarning,
                      stacklevel=3)
        return None
    return calculate_gain(nonlinearity, a) / math.sqrt(_fan(op, tensor, mode))


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """He uniform: U(-b, b) with b = gain * sqrt(3 / fan).

    Args:
        a: negative slope of the rectifier after this layer (for 'leaky_relu').
        mode: 'fan_in' (keeps the forward variance) or 'fan_out' (the backward one).
        nonlinearity: passed to ``calculate_gain``.

    Example:
        >>> w = kaiming_uniform_(newch.empty(3, 5), a=math.sqrt(5))
    """
    std = _kaiming_std("kaiming_uniform_", tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """He normal: N(0, std**2) with std = gain / sqrt(fan).

    Example:
        >>> w = kaiming_normal_(newch.empty(3, 5), mode="fan_out", nonlinearity="relu")
    """
    std = _kaiming_std("kaiming_normal_", tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    return normal_(tensor, 0.0, std, generator)


def _normal_cdf(x):
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Fill ``tensor`` with N(mean, std**2) samples redrawn until they fall in [a, b].

    ``a`` and ``b`` are absolute bounds (not in units of std), as in PyTorch.

    Example:
        >>> w = trunc_normal_(newch.empty(64, 64), std=0.02)
    """
    _check("trunc_normal_", tensor)
    if not a < b:
        raise ValueError(f"trunc_normal_: expected a < b, got a={a}, b={b}")
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("trunc_normal_: mean is more than 2 std from [a, b]; the distribution of "
                      "values may be incorrect", UserWarning, stacklevel=2)
    lo, hi = (a - mean) / std, (b - mean) / std
    mass = _normal_cdf(hi) - _normal_cdf(lo)
    if mass < 1e-6:
        raise ValueError(f"trunc_normal_: [a, b] = [{a}, {b}] holds only {mass:.3g} of the "
                         f"N({mean}, {std}**2) mass; rejection sampling cannot fill it")
    n = tensor.numel()
    vals = np.empty(n)
    rng, filled = rng_of(generator), 0
    while filled < n:
        want = n - filled
        draw = rng.standard_normal(min(int(want / mass * 1.1) + 16, 1 << 22))
        keep = draw[(draw >= lo) & (draw <= hi)][:want]
        vals[filled:filled + keep.size] = keep
        filled += keep.size
    vals = np.clip(vals * std + mean, a, b)
    return _write("trunc_normal_", tensor, vals.reshape(tuple(tensor.shape)))


def orthogonal_(tensor, gain=1, generator=None):
    """Fill ``tensor`` (2+ dims, viewed as rows x rest) with a (semi-)orthogonal matrix.

    The rows (or columns, whichever are fewer) are orthonormal, then scaled by ``gain``.

    Example:
        >>> w = orthogonal_(newch.empty(4, 4))
    """
    _check("orthogonal_", tensor)
    if tensor.ndim < 2:
        raise ValueError(f"orthogonal_: only tensors with 2 or more dimensions are supported, "
                         f"got shape {tuple(tensor.shape)}")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flat = rng_of(generator).standard_normal((rows, cols))
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    # NOTE: scaling by the signs of R's diagonal makes Q uniform over orthogonal matrices.
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    return _write("orthogonal_", tensor, (q * gain).reshape(tuple(tensor.shape)))


def _write(op, tensor, values):
    """Copy numpy ``values`` into ``tensor`` in place (no arena memory is used)."""
    with no_grad():
        tensor.copy_(from_numpy(np.ascontiguousarray(values, dtype=np.float64)))
    return tensor


__all__ = ["calculate_gain", "uniform_", "normal_", "constant_", "ones_", "zeros_", "eye_",
           "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_",
           "trunc_normal_", "orthogonal_"]
