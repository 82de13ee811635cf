"""The one decorator every Numba kernel goes through.

Rules it enforces (DESIGN.md, "Kernels and threads"):
- ``fastmath=False``: results must not depend on reassociation.
- ``parallel`` limited to explicit ``prange`` loops; numba's automatic parfor
  rewrites (array expressions, reductions) stay off so the work split is ours.
- ``cache=True`` into the directory newch chose before numba was imported,
  unless that directory is not writable.
"""
from .. import _cache  # noqa: F401  (chooses NUMBA_CACHE_DIR before numba loads)
import numba

from . import report as _report

PRANGE_ONLY = dict(prange=True, comprehension=False, reduction=False, inplace_binop=False,
                   setitem=False, numpy=False, stencil=False, fusion=False)

prange = numba.prange
KERNELS = []   # every public kernel compiled through ``kernel``
HELPERS = []   # serial device functions compiled through ``helper``


def kernel(fn=None, *, parallel=False):
    """Compile ``fn`` as a newch kernel (``@kernel`` or ``@kernel(parallel=True)``)."""
    def wrap(f):
        jitted = numba.njit(f, cache=_cache.CACHE_ENABLED, fastmath=False, nogil=True,
                            parallel=PRANGE_ONLY if parallel else False, error_model="numpy")
        jitted.newch_kernel = True
        jitted.newch_parallel = parallel
        _report.track(jitted)
        KERNELS.append(jitted)
        return jitted
    return wrap(fn) if fn is not None else wrap


def helper(fn):
    """Compile a serial device function called from kernels (inlined by LLVM)."""
    jitted = numba.njit(fn, cache=_cache.CACHE_ENABLED, fastmath=False, nogil=True,
                        error_model="numpy")
    _report.track(jitted)
    HELPERS.append(jitted)
    return jitted
