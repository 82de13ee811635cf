"""Every row of THE table (``optable.TABLE``) against PyTorch: values, gradients, errors.

One test per (row, spelling). Hypothesis draws the examples (shapes, dims,
dtypes, values); each row's fixed inputs (``bad``) run first. Skipped where
torch is not installed.
"""
import zlib

import pytest

torch = pytest.importorskip("torch")

from hypothesis import given, note, seed, settings, strategies as st  # noqa: E402

import newch  # noqa: E402

from . import conftest, runner  # noqa: E402
from .optable import TABLE  # noqa: E402


def _rows():
    for row in TABLE:
        for k, label in enumerate(row.calls):
            yield pytest.param(row, label, k, id=f"{row.name}|{label}")


def _examples(row, k):
    n = row.examples if k == 0 else max(3, row.examples // 3)
    if conftest.EXAMPLES:
        n = max(1, round(n * conftest.EXAMPLES / 20))
    return n


def _fixed(row, label):
    """The row's fixed (mostly invalid) inputs, through the same comparison as drawn ones."""
    for item in row.bad:
        try:
            if row.kind == "op":
                runner.run_op(torch, row, label, item)
            elif row.kind == "layer":
                runner.run_layer(torch, row, *item)
            else:
                cfg, shapes = item
                runner.run_optim(torch, row, dict(cfg), shapes, 1, 0)
        finally:
            newch.step_end()


def _one(row, label, data):
    try:
        if row.kind == "op":
            case = row.gen(data.draw)
            note(case)
            runner.run_op(torch, row, label, case)
        elif row.kind == "layer":
            cfg, case = row.gen(data.draw)
            note((cfg, case))
            runner.run_layer(torch, row, cfg, case)
        else:
            cfg, shapes, steps = row.gen(data.draw)
            note((cfg, shapes, steps))
            runner.run_optim(torch, row, cfg, shapes, steps, data.draw(st.integers(0, 2 ** 16)))
    finally:
        newch.set_grad_enabled(True)
        newch.step_end()


@pytest.mark.parametrize("row, label, k", list(_rows()))
def test_conforms_to_torch(row, label, k):
    _fixed(row, label)

    @settings(settings.get_profile("newch-conformance"), max_examples=_examples(row, k))
    @given(st.data())
    def run(data):
        _one(row, label, data)

    if not conftest.RANDOM:
        run = seed(zlib.crc32(f"{row.name}|{label}".encode()))(run)
    run()
