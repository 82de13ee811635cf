"""The one place numba compile flags come from: every kernel, helper, overload and intrinsic.

Rules it enforces (DESIGN.md, "Kernels and threads"):
- ``fastmath=False``: results must not depend on reassociation.
- ``parallel`` limited to explicit ``prange`` loops; numba's automatic parfor
  rewrites (array expressions, reductions) stay off so the work split is ours.
- a disk cache in newch's own directory (``kernels/cache.py``), unless it is not
  writable.
- parallel launches from several Python threads: numba's ``tbb`` and ``omp``
  layers allow them, its ``workqueue`` layer aborts the process. numba's default
  order already prefers tbb, then omp; when only workqueue is left (or the user
  chose it), ``launcher`` serialises parallel launches with a process-wide lock.
"""
import importlib
import threading

import numba
from numba.core.registry import CPUDispatcher
from numba.extending import intrinsic, overload as _numba_overload  # noqa: F401 (re-exported)

from . import cache as _disk_cache
from . import compile_memory as _compile_memory

from . import report as _report

PRANGE_ONLY = dict(prange=True, comprehension=False, reduction=False, inplace_binop=False,
                   setitem=False, numpy=False, stencil=False, fusion=False)
# flags of the typed switches that ``overload`` compiles (elementwise_math / _rows)
OVERLOAD_OPTS = dict(nogil=True, fastmath=False, error_model="numpy")

_compile_memory.install()   # llvmlite's pass-manager leak; heap pages back after each compile
prange = numba.prange
# NOTE: inlining before typing re-types a helper's body in every kernel that calls it. numba
# 0.68 does that cheaply (the cold MLP step, benchmarks/cold_start.py: 4.0 s with, 4.2 s
# without); numba 0.57 does not (8.9 s with, 3.2 s without). Older numba compiles helpers on
# their own, and LLVM inlines them (versions between were not measured: they take that way).
INLINE_HELPERS = tuple(numba.version_info[:2]) >= (0, 68)
KERNELS = []   # every public kernel compiled through ``kernel``
HELPERS = []   # serial device functions compiled through ``helper``


def kernel(fn=None, *, parallel=False):
    """Compile ``fn`` as a newch kernel (``@kernel`` or ``@kernel(parallel=True)``).

    NOTE: no C-callable (cfunc) wrapper: newch calls kernels from Python or through their
    native address (``tasks``), and the wrapper cost compile time for every kernel.
    """
    def wrap(f):
        jitted = numba.njit(f, cache=False, fastmath=False, nogil=True, no_cfunc_wrapper=True,
                            parallel=PRANGE_ONLY if parallel else False, error_model="numpy")
        _disk_cache.attach(jitted)
        jitted.newch_kernel = True
        jitted.newch_parallel = parallel
        _report.track(jitted)
        KERNELS.append(jitted)
        return jitted
    return wrap(fn) if fn is not None else wrap


def compile_signature(dispatcher, sig):
    """``dispatcher.compile(sig)`` (``sig`` a tuple of numba types) run in a short-lived thread;
    returns the entry point.

    NOTE: numba's compiler leaves reference cycles of frames behind (exceptions it catches
    while typing keep their tracebacks). Compiled on the caller's stack, those frames link
    through ``f_back`` to the caller's frames, whose locals (the arrays, and the tensors of
    the op that launched the kernel) then live until the cyclic GC runs: a result dropped
    after a kernel's first call did not give its arena bytes back. A thread's frames end
    at the thread. A failure is replayed on the caller's thread, for numba's own error.
    """
    done = []
    worker = threading.Thread(target=_compile_into, args=(dispatcher, sig, done),
                              name="newch-compile", daemon=True)
    worker.start()
    worker.join()
    if done and done[0] is not None:
        return done[0]
    return dispatcher.compile(sig)


def _compile_into(dispatcher, sig, done):
    try:
        hook = getattr(dispatcher, "_compilation_chain_init_hook", None)
        if hook is not None:
            hook()
        done.append(dispatcher.compile(sig))
    except BaseException:     # noqa: BLE001  (replayed on the caller's thread)
        done.append(None)


class _HelperDispatcher(CPUDispatcher):
    """A helper's dispatcher: callable from kernels only (it has no Python entry point)."""

    def __call__(self, *args, **kwargs):
        raise TypeError(f"{self.py_func.__qualname__} is a kernel helper: it runs inside "
                        "kernels only (from Python, call its .py_func)")


def helper(fn=None, *, inline=True):
    """Compile a serial device function called from kernels (``@helper``).

    NOTE (cold start): numba inlines a helper into the kernel that calls it before typing
    (``inline="always"``), so a helper is not compiled, optimised and saved on its own before
    LLVM inlines and optimises it again inside its kernel (about a fifth of a small kernel's
    compile time). A helper gets neither a Python wrapper nor a C-callable one (compiled on
    its own, through ``tasks.address``, it runs from kernels only): calling one from Python
    raises TypeError (``.py_func`` is the Python function).

    ``@helper(inline=False)``: compiled on its own per argument types and inlined by LLVM only,
    for a helper switching on a literal argument (numba prunes the branches of other values
    in a helper compiled for the literal, not in one inlined before typing).
    """
    if fn is None:
        return lambda f: helper(f, inline=inline)
    jitted = _HelperDispatcher(py_func=fn, locals={}, targetoptions=dict(
        nopython=True, fastmath=False, nogil=True, error_model="numpy",
        inline="always" if inline and INLINE_HELPERS else "never", no_cfunc_wrapper=True, no_cpython_wrapper=True))
    _disk_cache.attach(jitted)
    _report.track(jitted)   # NOTE: after attach: track wraps the cache it installs
    HELPERS.append(jitted)
    return jitted


def overload(fn):
    """``numba.extending.overload(fn)`` with newch's flags (``OVERLOAD_OPTS``)."""
    return _numba_overload(fn, jit_options=OVERLOAD_OPTS)


# -- launching from several Python threads --------------------------------------
_LAUNCH = threading.Lock()
_serialise = [None]


def serialise_parallel_launches():
    """True when numba's parallel kernels will run on its ``workqueue`` layer (not thread-safe)."""
    if _serialise[0] is None:
        layer = str(numba.config.THREADING_LAYER).lower()
        if layer == "workqueue":
            _serialise[0] = True
        elif layer in ("tbb", "omp", "threadsafe", "safe"):
            _serialise[0] = False
        else:   # "default" / "forksafe": numba takes tbb, then omp, then workqueue
            _serialise[0] = not any(_loads(f"numba.np.ufunc.{m}") for m in ("tbbpool", "omppool"))
    return _serialise[0]


def _loads(module):
    try:
        importlib.import_module(module)
        return True
    except Exception:   # noqa: BLE001  (a missing libtbb/libgomp is an OSError or ImportError)
        return False


class _Serialised:
    """A parallel kernel whose launches hold the process-wide launch lock."""
    __slots__ = ("dispatcher",)

    def __init__(self, dispatcher):
        self.dispatcher = dispatcher

    def __call__(self, *args, **kwargs):
        with _LAUNCH:
            return self.dispatcher(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self.dispatcher, name)


def launcher(fn):
    """What ops call for kernel entry point ``fn``: ``fn`` itself, or a launcher holding the
    process-wide lock when numba's threading layer cannot take launches from two threads.

    NOTE: every entry point is serialised then, not only ``parallel`` ones: a serial kernel
    or a Python entry point (``gemm``) may launch a parallel kernel inside.
    """
    if callable(fn) and serialise_parallel_launches():
        return _Serialised(fn)
    return fn
