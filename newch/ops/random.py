"""Random tensors from the context's generator: same seed, same numbers, whatever the threads."""
import numpy as np

from .. import dtypes as D
from ..generator import rng_of
from .alloc import check_writable, data, empty, norm_shape
from .creation import _check_device
from .launch import copy_into
from .record import check_inplace

__all__ = [
    "bernoulli", "bernoulli_", "normal_", "rand", "rand_like", "randint", "randint_like", "randn",
    "randn_like", "randperm", "uniform_"
]
TENSOR_METHODS = ["bernoulli", "bernoulli_", "normal_", "uniform_"]   # also bound as Tensor methods (ops/methods.py)


def _float(op, dtype):
    dt = D.from_any(dtype) if dtype is not None else D.get_default_dtype()
    if not dt.is_floating_point:
        raise TypeError(f"{op}: expected a floating point dtype, got {dt}")
    return dt


def _fill_random(op, out, draw, generator=None):
    """Write ``draw(rng, out_array)`` into out (through a contiguous buffer when needed)."""
    rng = rng_of(generator)
    a = data(out, op)
    check_writable(op, out)
    if a.size == 0:
        return out
    if a.flags.c_contiguous and a.dtype.kind == "f":
        draw(rng, a)
    else:
        tmp = empty(a.shape, D.float64 if a.dtype.kind != "f" else out.dtype)
        draw(rng, tmp._a)
        copy_into(tmp._a, a)
    out._s.version += 1
    return out


def _finish(out, requires_grad):
    if requires_grad:
        out.requires_grad_(True)
    return out


def randn(*size, dtype=None, device=None, requires_grad=False, generator=None):
    """Samples from the standard normal distribution, of shape ``size``."""
    _check_device("randn", device)
    out = empty(norm_shape("randn", size), _float("randn", dtype))
    _fill_random("randn", out, lambda rng, a: rng.standard_normal(out=a, dtype=a.dtype), generator)
    return _finish(out, requires_grad)


def rand(*size, dtype=None, device=None, requires_grad=False, generator=None):
    """Samples from the uniform distribution on [0, 1), of shape ``size``."""
    _check_device("rand", device)
    out = empty(norm_shape("rand", size), _float("rand", dtype))
    _fill_random("rand", out, lambda rng, a: rng.random(out=a, dtype=a.dtype), generator)
    return _finish(out, requires_grad)


def randint(low=0, high=None, size=None, *, dtype=None, device=None, requires_grad=False,
            generator=None):
    """Random integers in [low, high) of shape ``size`` (``randint(high, size)`` also works)."""
    _check_device("randint", device)
    if size is None:
        if high is None:
            raise TypeError("randint: size is required")
        low, high, size = 0, low, high
    elif high is None:
        low, high = 0, low
    if high <= low:
        raise ValueError(f"randint: expected low < high, got low={low}, high={high}")
    dt = D.from_any(dtype) if dtype is not None else D.int64
    rng = rng_of(generator)
    out = empty(norm_shape("randint", (tuple(size),)), dt)
    if out.numel():
        out._a[...] = rng.integers(low, high, size=out._a.shape)
    return _finish(out, requires_grad)


def randperm(n, *, dtype=None, device=None, requires_grad=False, generator=None):
    """A random permutation of 0..n-1."""
    _check_device("randperm", device)
    if not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"randperm: n must be a non-negative int, got {n!r}")
    rng = rng_of(generator)
    out = empty((int(n),), D.from_any(dtype) if dtype is not None else D.int64)
    if n:
        out._a[...] = rng.permutation(int(n))
    return out


def randn_like(input, *, dtype=None, requires_grad=False):
    """Standard normal samples with ``input``'s shape (and dtype unless given)."""
    return randn(tuple(input.shape), dtype=dtype or input.dtype, requires_grad=requires_grad)


def rand_like(input, *, dtype=None, requires_grad=False):
    """Uniform [0, 1) samples with ``input``'s shape (and dtype unless given)."""
    return rand(tuple(input.shape), dtype=dtype or input.dtype, requires_grad=requires_grad)


def randint_like(input, low=0, high=None, *, dtype=None):
    """Random integers in [low, high) with ``input``'s shape (and dtype unless given)."""
    return randint(low, high, tuple(input.shape), dtype=dtype or input.dtype)


def normal_(self, mean=0.0, std=1.0, *, generator=None):
    """Fill ``self`` in place with samples from N(mean, std**2)."""
    check_inplace("normal_", self)
    _float("normal_", self.dtype)
    return _fill_random("normal_", self, lambda rng, a: _affine(rng.standard_normal(out=a, dtype=a.dtype), std, mean), generator)


def uniform_(self, a=0.0, b=1.0, *, generator=None):
    """Fill ``self`` in place with samples from U(a, b)."""
    check_inplace("uniform_", self)
    _float("uniform_", self.dtype)
    return _fill_random("uniform_", self, lambda rng, arr: _affine(rng.random(out=arr, dtype=arr.dtype), b - a, a), generator)


def _affine(arr, scale, shift):
    if scale != 1:
        arr *= arr.dtype.type(scale)
    if shift != 0:
        arr += arr.dtype.type(shift)
    return arr


def bernoulli_(self, p=0.5, *, generator=None):
    """Fill ``self`` in place with 1 with probability ``p``, else 0."""
    check_inplace("bernoulli_", self)
    rng = rng_of(generator)
    data(self, "bernoulli_")
    check_writable("bernoulli_", self)
    tmp = empty(tuple(self.shape), D.float64)
    rng.random(out=tmp._a)
    copy_into(tmp._a < p, data(self, "bernoulli_"))
    self._s.version += 1
    return self


def bernoulli(input, p=None, *, generator=None):
    """0/1 samples: 1 with probability ``input`` (elementwise), or ``p`` for every element if given.

    Example:
        >>> bernoulli(newch.tensor([0.0, 1.0])).tolist()
        [0.0, 1.0]
    """
    if p is None:
        probs = data(input, "bernoulli")
        if (probs < 0).any() or (probs > 1).any():
            raise RuntimeError("bernoulli: expected all probabilities in [0, 1]")
    out = empty(tuple(input.shape), input.dtype)
    rng = rng_of(generator)
    draw = empty(tuple(input.shape), D.float64)
    rng.random(out=draw._a)
    copy_into(draw._a < (p if p is not None else data(input, "bernoulli")), out._a)
    return out
