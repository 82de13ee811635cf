"""Optimizer update kernels: one fused pass over a parameter, its gradient and its state.

An optimizer step reads and writes every parameter element once, so it is
memory bound: doing the whole update rule in one pass (instead of one op per
term, each with a temporary) keeps it at one read of each array and one write
of each updated array, and allocates nothing.

Layout (DESIGN.md, "Kernels and threads"): flat 1-D C-contiguous arrays of one
float dtype, updated in place. The element range is cut into fixed chunks of
``CHUNK`` elements, one ``prange`` iteration per chunk, so every element has
exactly one writer and the split depends on the length only. At or below
``SERIAL_MAX`` elements the calling thread does all the work. Each element's
update is independent of every other, so results never depend on the split.

Rounding follows the update rule written as separate array operations in the
parameter's dtype: scalars are rounded to that dtype once, every product and
sum is rounded on its own (no fused multiply-add).
"""
from numba.core import types

from .jit import kernel
from .specialize import array, entry, scalar
from .tasks import driver

__all__ = ["sgd_step"]

CHUNK = 16384          # elements owned by one prange iteration
SERIAL_MAX = 32768     # at or below this many elements: no thread launch


@kernel
def _sgd_span(p, g, b, nlr, wd, mom, damp, use_wd, use_mom, nesterov, maximize, first, lo, hi):
    """The SGD update of elements [lo, hi) (scalars already in the arrays' dtype); a task function."""
    p, g = p[lo:hi], g[lo:hi]
    b = b[lo:hi] if use_mom else b
    # NOTE: the loop runs from 0 over whole (sliced) arrays and the option
    # branches are loop invariant: LLVM unswitches them and vectorizes each case.
    for i in range(p.shape[0]):
        d = -g[i] if maximize else g[i]
        if use_wd:
            d = d + wd * p[i]
        if use_mom:
            v = d if first else mom * b[i] + damp * d
            b[i] = v
            d = d + mom * v if nesterov else v
        p[i] = p[i] + nlr * d


_ENTRY = {}


def check_state(what, param, *arrays):
    """Length of ``param``; ValueError/TypeError unless param and ``arrays`` are 1-D
    C-contiguous arrays of one float dtype and one length (the entry points trust it)."""
    n = param.shape[0]
    if param.dtype.kind != "f":
        raise TypeError(f"{what}: expected a float32/float64 param, got {param.dtype}")
    for x in (param,) + arrays:
        if x.ndim != 1 or not x.flags.c_contiguous or x.shape[0] != n:
            raise ValueError(f"{what}: grad or state (shape {x.shape}) length differs from param "
                             f"length {n}, or is not 1-D contiguous")
        if x.dtype != param.dtype:
            raise TypeError(f"{what}: expected every array in {param.dtype}, got {x.dtype}")
    return n


def _launcher(dtype, parallel):
    """The serial entry point of ``_sgd_span`` for ``dtype``, or its parallel launcher."""
    key = (dtype, parallel)
    fn = _ENTRY.get(key)
    if fn is None:
        arr, s, flag = array(dtype, 1, "C"), scalar(dtype), types.boolean
        argtypes = (arr, arr, arr, s, s, s, s) + (flag,) * 5
        fn = _ENTRY[key] = (driver(_sgd_span, argtypes, CHUNK) if parallel
                            else entry(_sgd_span, argtypes + (types.int64, types.int64)))
    return fn


def sgd_step(param, grad, buf, lr, weight_decay, momentum, dampening, nesterov, maximize, first):
    """One SGD step on ``param`` in place (and on ``buf``, the momentum buffer).

    With d = grad (negated when ``maximize``), plus weight_decay * param:
    without momentum param -= lr * d; with it buf = d on the ``first`` step,
    else buf = momentum * buf + (1 - dampening) * d, then param -= lr * (d +
    momentum * buf) when ``nesterov``, else lr * buf.

    param, grad, buf: 1-D C-contiguous float32/float64 arrays of one dtype and
    one length; buf may be empty when momentum == 0. lr, weight_decay,
    momentum, dampening: Python floats (rounded to the arrays' dtype here,
    1 - dampening computed in float64 first). nesterov, maximize, first: bools.

    Example:
        >>> p = np.ones(3, np.float32); g = np.full(3, 0.5, np.float32)
        >>> sgd_step(p, g, p[:0], 0.1, 0.0, 0.0, 0.0, False, False, True)
        >>> p
        array([0.95, 0.95, 0.95], dtype=float32)
    """
    n = param.shape[0]
    use_mom = momentum != 0.0
    if grad.shape[0] != n:
        raise ValueError("sgd_step: grad length differs from param length")
    if use_mom and buf.shape[0] != n:
        raise ValueError("sgd_step: momentum buffer length differs from param length")
    t = param.dtype.type
    if param.dtype.kind != "f" or grad.dtype != param.dtype or (use_mom and buf.dtype != param.dtype):
        raise TypeError(f"sgd_step: expected one float dtype, got {param.dtype}, {grad.dtype}, "
                        f"{buf.dtype}")
    for x in (param, grad, buf):
        if x.ndim != 1 or not x.flags.c_contiguous:
            raise ValueError(f"sgd_step: expected 1-D C-contiguous arrays, got shape {x.shape}")
    if not use_mom:
        buf = param[:0]      # NOTE: typed as the entry point says, never read
    args = (param, grad, buf, t(-lr), t(weight_decay), t(momentum), t(1.0 - dampening),
            weight_decay != 0.0, use_mom, bool(nesterov), bool(maximize), bool(first))
    # NOTE: one task function: the calling thread runs it on everything, or numba's threads
    # run it on chunks of CHUNK elements (``tasks.driver``): the same bits either way.
    if n > SERIAL_MAX:
        _launcher(param.dtype, True)(n, *args)
    elif n:
        _launcher(param.dtype, False)(*args, 0, n)
