"""Numba kernels and their numpy ``ref`` twins: arrays in, arrays out, nothing else.

Every kernel takes numpy arrays and scalars, writes into the ``out`` arrays it
is given and returns None. It never allocates: scratch space is passed in.
Kernels know nothing of tensors, autograd or contexts. ``ops/`` validates
input, allocates outputs and picks the kernel.

Two backends expose the same names: ``load("numba")`` (the JIT kernels in this
package) and ``load("ref")`` (plain numpy in ``kernels/ref/``, the fallback where
numba is unavailable and the oracle for tests).

Shape conventions (``ops/`` canonicalises before calling):
- "flat": 1-D C-contiguous arrays of equal length.
- "nd": exactly 4-D arrays; inputs may have any strides (0 for broadcast
  axes), outputs are C-contiguous unless the kernel says otherwise.
- "3d reduce": the input viewed as (O, R, I), reduced over R into (O, I).

Determinism: every output element is written by exactly one ``prange``
iteration; the split depends on shapes only. Small inputs take a serial path.
"""
import types

MODULES = ("elementwise", "reduce", "matmul", "indexing", "optim", "optim_adam", "optim_rms", "norm",
           "dropout", "loss", "conv", "pool", "mask", "rnn")
_loaded = {}


def _namespace(mods):
    ns = {}
    for m in mods:
        for name in getattr(m, "__all__"):
            if name in ns:
                raise RuntimeError(f"kernel name {name!r} defined twice")
            ns[name] = getattr(m, name)
    return types.SimpleNamespace(**ns)


def load(backend):
    """Return the kernel namespace of ``backend`` ("numba" or "ref")."""
    if backend not in _loaded:
        import importlib
        pkg = __name__ + (".ref" if backend == "ref" else "")
        mods = [importlib.import_module(f"{pkg}.{m}") for m in MODULES]
        ns = _namespace(mods)
        if backend != "ref":
            from .jit import launcher
            ns = types.SimpleNamespace(**{k: launcher(f) for k, f in vars(ns).items()})
        _loaded[backend] = ns
    return _loaded[backend]


_numba_state = {}   # "ok": bool, "why": the reason numba could not be used


def numba_available():
    """True when numba and llvmlite load (the JIT backend can be used).

    When they are missing or fail to load (no wheel for this machine, a broken
    install), warn once that newch runs on the numpy ``ref`` kernels.

    Example:
        >>> isinstance(numba_available(), bool)
        True
    """
    if "ok" not in _numba_state:
        try:
            import numba  # noqa: F401
            import llvmlite.binding  # noqa: F401
            _numba_state["ok"] = True
        except Exception as e:  # ImportError, or a broken build raising anything at load
            _numba_state.update(ok=False, why=f"{type(e).__name__}: {e}")
            import warnings
            warnings.warn(f"newch: numba is not usable here ({_numba_state['why']}); running on the "
                          "numpy kernels, ctx.backend == 'ref' (slower; results agree to rounding). "
                          "pip install 'newch[jit]' where a numba wheel exists.",
                          RuntimeWarning, stacklevel=3)
    return _numba_state["ok"]


def simd_level():
    """Name the widest SIMD level LLVM targets on this CPU: avx512, avx2, neon, sse, generic."""
    import llvmlite.binding as llvm
    feats = set(f[1:] for f in llvm.get_host_cpu_features().flatten().split(",") if f[:1] == "+")
    for name, flag in (("avx512", "avx512f"), ("avx2", "avx2"), ("neon", "neon"),
                       ("neon", "asimd"), ("sse", "sse2")):
        if flag in feats:
            return name
    import platform
    return "neon" if platform.machine().lower() in ("aarch64", "arm64") else "generic"
