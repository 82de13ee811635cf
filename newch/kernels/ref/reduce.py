"""Numpy twins of ``kernels/reduce.py``: same names, same signatures, obvious code.

They are the test oracle and the fallback where numba is missing. Sums use
numpy's own (pairwise) order, so floats agree with the JIT kernels to rounding,
not bit for bit; integers agree exactly.
"""
import numpy as np

from ..codes import SUM, PROD, MAX, MIN, ALL, ANY, SUMSQDEV, SUMEXP, NANSUM, ARGMAX

__all__ = ["reduce_blocks", "reduce_3d", "reduce_all", "argreduce_3d"]

BLOCK = 4096  # elements per partial in reduce_all (same as the JIT kernel)


def reduce_blocks(n):
    """Number of partials ``reduce_all`` needs for ``n`` elements (at least 1)."""
    return max(1, -(-n // BLOCK))


def _widen(x):
    """x as float64 (float input) or int64 (int/bool input): the accumulator type."""
    return x.astype(np.float64 if x.dtype.kind == "f" else np.int64)


def reduce_3d(code, x, center, out):
    """Reduce x (O, R, I) over axis 1 into out (O, I); see the JIT kernel for the codes."""
    if code == ALL:
        out[...] = (x != 0).all(axis=1)
        return
    if code == ANY:
        out[...] = (x != 0).any(axis=1)
        return
    w = _widen(x)
    if (code == MAX or code == MIN) and w.shape[1] == 0:
        # NOTE: as the JIT kernel: an empty MAX/MIN gives 0 (ops refuse it; softmax of an
        # empty tensor only uses it as a centre for no element).
        out[...] = 0
        return
    if code == SUM:
        res = w.sum(axis=1)
    elif code == NANSUM:
        res = np.nansum(w, axis=1) if w.dtype.kind == "f" else w.sum(axis=1)
    elif code == PROD:
        res = w.prod(axis=1)
    elif code == MAX:
        res = w.max(axis=1)
    elif code == MIN:
        res = w.min(axis=1)
    elif code == SUMSQDEV:
        res = ((w - center[:, None, :]) ** 2).sum(axis=1)
    elif code == SUMEXP:
        res = np.exp(w - center[:, None, :]).sum(axis=1)
    else:
        raise ValueError(f"reduce_3d: unknown code {code}")
    out[...] = res


def reduce_all(code, x, center, partials, out):
    """Reduce flat x into out (1,); ``partials`` is accepted for the signature and unused."""
    reduce_3d(code, x.reshape(1, -1, 1), center.reshape(1, 1), out.reshape(1, 1))


def argreduce_3d(code, x, out_val, out_idx):
    """ARGMAX/ARGMIN of x (O, R, I) over axis 1: first index of the extreme, first NaN wins."""
    # NOTE: numpy's argmax/argmin already return the first NaN and the first of ties.
    idx = np.argmax(x, axis=1) if code == ARGMAX else np.argmin(x, axis=1)
    out_idx[...] = idx
    out_val[...] = np.take_along_axis(x, idx[:, None, :], axis=1)[:, 0, :]
