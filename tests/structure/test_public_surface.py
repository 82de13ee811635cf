"""The public surface is explicit: no private name leaks, every public name has a docstring,
every PyTorch spelling of a submodule imports, and newch/tensor.pyi matches the code."""
import importlib
import inspect
import pathlib
import runpy
import subprocess
import sys
import types

import pytest

import newch
import newch.ops as ops
from newch import _aliases

ROOT = pathlib.Path(__file__).resolve().parents[2]
PRIVATE = ("bind_methods", "getitem", "setitem", "select_index", "gelu_erf", "rdiv", "rsub", "rpow",
           "rmod", "rfloordiv", "shape", "pointwise", "alloc", "record", "launch", "methods")


def _is_own_submodule(name, obj):
    return isinstance(obj, types.ModuleType) and obj.__name__ == f"newch.{name}"


def test_newch_all_is_the_public_namespace():
    assert len(newch.__all__) == len(set(newch.__all__)), "a name is listed twice in newch.__all__"
    missing = [n for n in newch.__all__ if not hasattr(newch, n)]
    assert not missing, f"newch.__all__ names that do not exist: {missing}"
    extra = [n for n in dir(newch) if not n.startswith("_") and n not in newch.__all__
             and not _is_own_submodule(n, getattr(newch, n))]
    assert not extra, f"public attributes of newch missing from __all__ (or private ones leaking): {extra}"


@pytest.mark.parametrize("name", PRIVATE)
def test_private_helpers_do_not_leak(name):
    assert name not in newch.__all__ and name not in ops.__all__
    assert not hasattr(newch, name), f"newch.{name} leaks"


def test_ops_all_is_built_from_each_module():
    from newch.ops import methods
    gathered = [n for m in methods.FAMILIES for n in m.__all__]
    assert ops.__all__ == gathered
    for m in methods.FAMILIES:
        for n in m.__all__ + m.TENSOR_METHODS:
            assert callable(getattr(m, n)), f"{m.__name__}.{n} listed but not a function"


def test_no_ops_module_is_shadowed_by_an_op():
    """``newch.ops.<file>`` is always the module: no op shares its file's name."""
    for path in (ROOT / "newch" / "ops").glob("*.py"):
        if path.stem != "__init__":
            mod = importlib.import_module(f"newch.ops.{path.stem}")
            assert getattr(ops, path.stem) is mod, f"newch.ops.{path.stem} is not the module"


def _public_callables():
    for name in newch.__all__:
        obj = getattr(newch, name)
        if isinstance(obj, types.ModuleType) or not callable(obj):
            continue
        yield f"newch.{name}", obj
    for name in dir(newch.Tensor):
        if not name.startswith("_"):
            obj = getattr(newch.Tensor, name)
            yield f"Tensor.{name}", obj.fget if isinstance(obj, property) else obj


def test_every_public_function_has_a_docstring():
    bare = [n for n, obj in _public_callables()
            if not (getattr(obj, "__doc__", None) or "").strip()]
    assert not bare, f"{len(bare)} public names without a docstring: {bare}"


def test_every_spelling_imports_under_both_names():
    """``newch.nn.functional`` and ``newch.net.functional`` are the same module, by import and attribute."""
    assert {"nn", "nn.functional", "nn.init", "utils.data", "nn.utils", "nn.utils.rnn"} <= set(_aliases.ALIASES)
    for spelling, module in _aliases.ALIASES.items():
        assert importlib.import_module("newch." + spelling) is module
        obj = newch
        for part in spelling.split("."):
            obj = getattr(obj, part)
        assert obj is module
        assert importlib.import_module(module.__name__) is module


def test_every_submodule_imports_in_a_fresh_interpreter():
    """Each package under newch/ (and each alias) imports first, on its own."""
    names = sorted({".".join(p.relative_to(ROOT).with_suffix("").parts[:-1])
                    for p in (ROOT / "newch").rglob("__init__.py")})
    names += ["newch." + s for s in _aliases.ALIASES]
    code = "import importlib, sys\nfor n in sys.argv[1:]:\n    importlib.import_module(n)\n"
    for n in names:
        r = subprocess.run([sys.executable, "-c", code, n], cwd=ROOT, capture_output=True, text=True,
                           env={"NEWCH_BACKEND": "ref", "PATH": "/usr/bin:/bin"})
        assert r.returncode == 0, f"import {n} failed:\n{r.stderr[-2000:]}"


def test_tensor_pyi_is_current():
    gen = runpy.run_path(str(ROOT / "tools" / "gen_tensor_pyi.py"))
    text = gen["render"]()
    assert (ROOT / "newch" / "tensor.pyi").read_text() == text, \
        "newch/tensor.pyi is stale: run python tools/gen_tensor_pyi.py"
    assert (ROOT / "newch" / "py.typed").exists()


def test_tensor_pyi_lists_every_method():
    text = (ROOT / "newch" / "tensor.pyi").read_text()
    names = [n for n in dir(newch.Tensor) if not n.startswith("_")]
    missing = [n for n in names if f"def {n}(" not in text]
    assert not missing, missing
    sig = inspect.signature(newch.Tensor.sum)
    assert "def sum(self, dim=..., keepdim=..., *, dtype=...):" in text or str(sig)
