"""What compiling leaves in memory (newch.kernels.compile_memory): pass managers freed, heap trimmed."""
import gc
import sys

import pytest

numba = pytest.importorskip("numba", reason="JIT kernel tests need numba (not installed: the ref backend is tested elsewhere)")
pytest.importorskip("llvmlite.binding.newpassmanagers",
                    reason="llvmlite < 0.45 has only the legacy pass managers (the fix does not apply)")
from llvmlite import binding as llvm
from llvmlite.binding import ffi
from numba.core import event

from newch.kernels import compile_memory, jit  # noqa: F401  (jit installs the fixes)

DISPOSE = {"fpm": "LLVMPY_DisposeNewFunctionPassManger", "mpm": "LLVMPY_DisposeNewModulePassManger"}
BUILD = {"fpm": "LLVMPY_buildFunctionSimplificationPipeline", "mpm": "LLVMPY_buildPerModuleDefaultPipeline"}


@pytest.fixture
def ffi_calls(monkeypatch):
    """Counts of the llvmlite C calls named in DISPOSE and BUILD made during the test."""
    counts = {}
    for name in list(DISPOSE.values()) + list(BUILD.values()):
        real = getattr(ffi.lib, name)          # the wrapper llvmlite made (fills its table)

        def counting(*args, _real=real, _name=name):
            counts[_name] = counts.get(_name, 0) + 1
            return _real(*args)
        monkeypatch.setitem(ffi.lib._fntab, name, counting)
    return counts


def test_jit_installs_the_pass_manager_fix():
    assert compile_memory.pass_managers_disposed()
    assert compile_memory.fix_pass_manager_leak() == []          # already applied: nothing to patch


@pytest.mark.parametrize("kind,make", [("fpm", llvm.create_new_function_pass_manager),
                                       ("mpm", llvm.create_new_module_pass_manager)])
def test_a_collected_pass_manager_frees_its_llvm_object(ffi_calls, kind, make):
    pm = make()
    del pm
    gc.collect()
    assert ffi_calls.get(DISPOSE[kind]) == 1


def test_every_pass_manager_numba_builds_in_a_compile_is_freed(ffi_calls):
    import numpy as np

    @numba.njit
    def helper(a, i):
        return a[i] * 2.0 + 1.0

    @numba.njit
    def kernel(a, out):
        for i in range(a.shape[0]):
            out[i] = helper(a, i)
    a = np.arange(4.0)
    out = np.zeros(4)
    kernel(a, out)
    assert out.tolist() == [1.0, 3.0, 5.0, 7.0]
    gc.collect()
    built_f, built_m = ffi_calls.get(BUILD["fpm"], 0), ffi_calls.get(BUILD["mpm"], 0)
    assert built_f > 0 and built_m > 0                 # the compile did build pass managers...
    assert ffi_calls.get(DISPOSE["fpm"], 0) == built_f  # ...and every one was freed
    assert ffi_calls.get(DISPOSE["mpm"], 0) == built_m


def test_the_fix_patches_only_a_shadowed_dispose(monkeypatch):
    from llvmlite.binding import newpassmanagers as npm
    monkeypatch.setattr(npm.FunctionPassManager, "_dispose", ffi.ObjectRef._dispose)
    assert not compile_memory.pass_managers_disposed()
    assert compile_memory.fix_pass_manager_leak() == ["FunctionPassManager"]
    assert npm.FunctionPassManager._dispose is npm.NewPassManager._dispose
    assert compile_memory.pass_managers_disposed()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="malloc_trim is glibc's")
def test_release_freed_memory_trims_the_heap_on_glibc():
    import platform
    if platform.libc_ver()[0] != "glibc":
        pytest.skip("not glibc")
    assert compile_memory.release_freed_memory() is True


def test_the_heap_is_trimmed_once_per_outermost_compilation(monkeypatch):
    import numpy as np
    calls = []
    monkeypatch.setattr(compile_memory, "release_freed_memory", lambda: calls.append(1))
    compiles = []

    class Count(event.Listener):
        def on_start(self, ev):
            compiles.append(ev.data["dispatcher"])

        def on_end(self, ev):
            pass

    @numba.njit
    def inner(v):
        return v * 3

    @numba.njit
    def outer(a):
        return inner(a[0])
    with event.install_listener("numba:compile", Count()):
        assert outer(np.ones(2)) == 3.0
    assert len(compiles) == 2            # the kernel, and the helper typed inside its compile
    assert calls == [1]                  # one trim, when the outermost one ended
