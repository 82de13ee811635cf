"""The kernel package's rules: one decorator, a ref twin per kernel, a safe cache directory."""
import importlib
import inspect
import re
import os
import subprocess
import sys

import pytest
numba = pytest.importorskip("numba", reason="JIT kernel tests need numba (not installed: the ref backend is tested elsewhere)")

import newch.kernels as K
from newch.kernels import jit


def _numba_dispatchers(mod):
    return {n: f for n, f in vars(mod).items() if isinstance(f, numba.core.registry.CPUDispatcher)}


@pytest.mark.parametrize("name", K.MODULES)
def test_every_jitted_function_goes_through_the_decorator(name):
    mod = importlib.import_module(f"newch.kernels.{name}")
    for fname, f in _numba_dispatchers(mod).items():
        if f.py_func.__module__ != mod.__name__:
            continue
        assert getattr(f, "newch_kernel", False) or f in jit.HELPERS, \
            f"{name}.{fname} is jitted outside newch.kernels.jit"
        opts = f.targetoptions
        assert opts.get("fastmath", False) is False
        if opts.get("parallel"):
            assert opts["parallel"] == jit.PRANGE_ONLY


@pytest.mark.parametrize("name", K.MODULES)
def test_every_kernel_has_a_ref_twin_with_the_same_signature(name):
    jitm = importlib.import_module(f"newch.kernels.{name}")
    refm = importlib.import_module(f"newch.kernels.ref.{name}")
    assert list(jitm.__all__) == list(refm.__all__)
    for k in jitm.__all__:
        a, b = getattr(jitm, k), getattr(refm, k)
        pa = inspect.signature(getattr(a, "py_func", a)).parameters
        pb = inspect.signature(b).parameters
        assert list(pa) == list(pb), k


def test_both_backends_expose_the_same_names():
    assert set(vars(K.load("numba"))) == set(vars(K.load("ref")))


def _import_in(env):
    code = ("import newch, os, newch._cache as c; "
            "print(os.environ.get('NUMBA_CACHE_DIR'), c.CACHE_ENABLED, c.CACHE_DIR)")
    res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 0, res.stderr
    return res.stdout.split()


def _env(**kw):
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "NEWCH_CACHE_DIR")}
    env.update(kw)
    return env


def test_user_numba_cache_dir_is_left_alone_and_newch_keys_its_own_part(tmp_path):
    from newch._cache import kernel_sources_hash
    d = str(tmp_path / "mine")
    out = _import_in(_env(NUMBA_CACHE_DIR=d))
    assert out == [d, "True", os.path.join(d, "newch", kernel_sources_hash())]


def test_newch_picks_its_own_cache_dir_keyed_by_the_kernel_sources(tmp_path):
    from newch._cache import kernel_sources_hash
    d = str(tmp_path / "nc")
    key = kernel_sources_hash()
    assert len(key) == 16
    # NOTE: newch's choice does not go into the environment (child processes inherit it)
    assert _import_in(_env(NEWCH_CACHE_DIR=d)) == ["None", "True", os.path.join(d, key)]


@pytest.mark.skipif(os.geteuid() == 0 if hasattr(os, "geteuid") else True,
                    reason="root can write anywhere; see the unwritable-file variant")
def test_unwritable_cache_dir_means_no_cache(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    out = _import_in(_env(NEWCH_CACHE_DIR=str(ro / "x"), HOME=str(ro), XDG_CACHE_HOME=str(ro)))
    assert out[1] == "False"


def test_cache_path_that_cannot_be_a_directory_means_no_cache_not_an_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    env = _env(NEWCH_CACHE_DIR=str(blocker / "sub"), XDG_CACHE_HOME=str(blocker / "x"),
               HOME=str(blocker))
    code = ("import newch, newch._cache as c; x = newch.ones(3) * 2; "
            "print(c.CACHE_ENABLED, x.sum().item())")
    res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["False", "6.0"]


# -- every kernel file, not only the namespaces (elementwise_math, elementwise_rows, ...) --------
KERNEL_DIR = os.path.dirname(K.__file__)
KERNEL_FILES = sorted(
    os.path.relpath(os.path.join(d, f), KERNEL_DIR)
    for d, _, fs in os.walk(KERNEL_DIR) for f in fs if f.endswith(".py"))
# compile entry points and flags that only kernels/jit.py may spell out
_FORBIDDEN = re.compile(r"\bnjit\b|\bnumba\.jit\b|@jit\b|numba\.vectorize|@vectorize|\bguvectorize\b"
                        r"|\bcfunc\b|\bgenerated_jit\b"
                        r"|\bfastmath\b|\berror_model\b|\bnogil\b|\bcache\s*="
                        r"|from numba\.extending import [^\n]*\bintrinsic\b")


def _module_of(rel):
    return "newch.kernels." + rel[:-3].replace(os.sep, ".").replace(".__init__", "").rstrip(".")


def test_kernel_files_are_all_found():
    assert {"jit.py", "matmul.py", "elementwise_math.py", "elementwise.py", "specialize.py"} <= set(KERNEL_FILES)


@pytest.mark.parametrize("rel", [f for f in KERNEL_FILES if f != "jit.py"])
def test_no_kernel_file_sets_compile_flags_of_its_own(rel):
    with open(os.path.join(KERNEL_DIR, rel)) as f:
        src = f.read()
    code = re.sub(r'""".*?"""', "", src, flags=re.S)                 # docstrings may name flags
    code = "\n".join(line.split("#")[0] for line in code.splitlines())
    bad = _FORBIDDEN.findall(code)
    assert not bad, f"{rel} spells compile flags itself: {bad}; use newch.kernels.jit"
    mod = importlib.import_module(_module_of(rel))
    for m in re.finditer(r"jit_options\s*=\s*(\w+)", code):
        assert getattr(mod, m.group(1)) is jit.OVERLOAD_OPTS, f"{rel}: {m.group(0)}"
    numba_overload = re.search(r"from numba\.extending import [^\n]*\boverload\b", code)
    for m in re.finditer(r"@overload\(([^)]*)\)", code):
        if numba_overload:
            assert "jit_options" in m.group(1), f"{rel}: {m.group(0)} without jit.OVERLOAD_OPTS"


@pytest.mark.parametrize("rel", [f for f in KERNEL_FILES if f.count(os.sep) == 0])
def test_every_dispatcher_in_every_kernel_file_goes_through_the_decorator(rel):
    mod = importlib.import_module(_module_of(rel))
    for fname, f in _numba_dispatchers(mod).items():
        if f.py_func.__module__ != mod.__name__:
            continue
        assert getattr(f, "newch_kernel", False) or f in jit.HELPERS, f"{rel}: {fname}"
        assert f.targetoptions.get("fastmath", False) is False
        assert f.targetoptions.get("parallel") in (None, False, jit.PRANGE_ONLY)
