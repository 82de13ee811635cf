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
import numpy as np

from .jit import helper, prange
from .specialize import instance

__all__ = ["sgd_step"]

CHUNK = 16384          # elements owned by one prange iteration
SERIAL_MAX = 32768     # at or below this many elements: no thread launch


@helper
def _sgd_rows(p, g, b, nlr, wd, mom, damp, use_wd, use_mom, nesterov, maximize, first):
    """The SGD update of every element of ``p`` (scalars already in the arrays' dtype)."""
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


def _sgd_chunks(param, grad, buf, nlr, wd, mom, damp, use_wd, use_mom, nesterov, maximize,
                first):
    n = param.shape[0]
    for c in _range((n + CHUNK - 1) // CHUNK):  # noqa: F821
        lo = np.int64(c) * CHUNK
        hi = min(lo + CHUNK, n)
        _sgd_rows(param[lo:hi], grad[lo:hi], buf[lo:hi], nlr, wd, mom, damp,
                  use_wd, use_mom, nesterov, maximize, first)


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
    par = n > SERIAL_MAX
    # NOTE: one loop text, two instances: serial (``range``) and parallel (``prange``).
    k = instance(_sgd_chunks, "par" if par else "ser", parallel=par,
                 _range=prange if par else range)
    k(param, grad, buf, t(-lr), t(weight_decay), t(momentum), t(1.0 - dampening),
      weight_decay != 0.0, use_mom, bool(nesterov), bool(maximize), bool(first))
