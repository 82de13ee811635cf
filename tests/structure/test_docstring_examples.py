"""The ``>>>`` examples in newch's docstrings run, as tests (one per module).

Each docstring runs in a fresh step (ended after) with its module's globals and
a small namespace that examples may take as given, as pytest's ``doctest_namespace``
would hold: ``newch`` (also as ``torch``), ``nn``, ``F``, ``np``, the learning-rate
schedulers, and a fresh model to train: ``model`` (``nn.Linear(4, 2)``), inputs ``x``
and targets ``y``, ``loss_fn`` (MSE), ``loss = loss_fn(model(x), y)``, ``opt`` (SGD
over the model, lr 0.1), ``w`` / ``b`` / ``p`` / ``weight`` (persistent leaves that
require grad) and ``params`` (``[w, b]``). Modules that need numba at import time
are skipped where numba is absent.
"""
import doctest
import importlib
import pathlib

import numpy as np
import pytest

import newch

ROOT = pathlib.Path(__file__).resolve().parents[2]
MODULES = sorted(
    ".".join(p.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
    for p in (ROOT / "newch").rglob("*.py") if "__main__" not in p.name)


def _import(name):
    try:
        return importlib.import_module(name)
    except ImportError as e:          # numba absent: the JIT kernel modules cannot load
        if "numba" in str(e) or "llvmlite" in str(e):
            pytest.skip(f"{name} needs numba: {e}")
        raise


def _namespace():
    from newch.optim import lr_scheduler
    ns = {"newch": newch, "torch": newch, "nn": newch.nn, "F": newch.nn.functional, "np": np}
    ns.update({n: getattr(lr_scheduler, n) for n in dir(lr_scheduler) if n[0].isupper()})
    with newch.persistent():
        model = newch.nn.Linear(4, 2)
        w = newch.randn(3, requires_grad=True)
        b = newch.zeros(3, requires_grad=True)
    x, y = newch.randn(8, 4), newch.randn(8, 2)
    loss_fn = newch.nn.MSELoss()
    ns.update(model=model, x=x, y=y, loss_fn=loss_fn, loss=loss_fn(model(x), y), w=w, b=b, p=w,
              weight=w, params=[w, b], opt=newch.optim.SGD(model.parameters(), lr=0.1))
    return ns


@pytest.mark.parametrize("name", [
    pytest.param(m, marks=pytest.mark.slow) if m.startswith("newch.kernels.") else m   # they compile
    for m in MODULES])
def test_docstring_examples(name, tmp_path, monkeypatch):
    mod = _import(name)
    tests = doctest.DocTestFinder(exclude_empty=True).find(mod, name, module=mod)
    tests = [t for t in tests if t.examples]
    if not tests:
        return
    monkeypatch.chdir(tmp_path)        # examples that write files write them here
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    for t in tests:
        newch.manual_seed(0)
        t.globs = dict(mod.__dict__, **_namespace())
        try:
            runner.run(t, out=lambda s: None)
        finally:
            newch.step_end()
    r = runner.summarize(verbose=False)
    if r.failed:
        # rerun to report the failing examples
        report = []
        for t in tests:
            one = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
            newch.manual_seed(0)
            t.globs = dict(mod.__dict__, **_namespace())
            one.run(t, out=report.append)
            newch.step_end()
        pytest.fail(f"{r.failed} of {r.attempted} examples failed in {name}:\n" + "".join(report)[-4000:])
