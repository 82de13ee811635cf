"""A kernel compiles once per dtype, whatever shapes or callers reach it (cold start).

Each case below once compiled a kernel again for the same dtype: a whole-tensor variance
took its centre with the input's ndim (one ``reduce_all`` per ndim), and the convolution's
serial gemm passed literal ``False`` flags to matmul's task functions (their own
signatures, beside those a Linear layer compiles). ``newch.kernels.report.records()`` lists
every signature this process compiled or loaded from the disk cache.
"""
import numpy as np
import pytest
pytest.importorskip("numba", reason="compile records need the JIT backend")

import newch
from newch.kernels import report

pytestmark = pytest.mark.skipif(newch.default_context().backend == "ref",
                                reason="compile records of the JIT kernels")


def _sigs(prefix):
    return {(r["name"], r["sig"]) for r in report.records() if r["name"].startswith(prefix)}


def _center(sig):
    return sig[1:-1].split(", ")[1]


def test_whole_tensor_variance_compiles_one_reduction_for_every_ndim():
    rng = np.random.default_rng(0)
    for shape in ((7,), (3, 5), (2, 3, 4), (2, 2, 3, 2), (1, 2, 1, 3, 2)):
        x = rng.standard_normal(shape)
        t = newch.tensor(x)
        assert np.isclose(t.var().item(), x.var(ddof=1), rtol=1e-12)
        assert np.isclose(t.std(correction=0).item(), x.std(), rtol=1e-12)
        lse = newch.logsumexp(t, dim=tuple(range(len(shape)))).item()
        assert np.isclose(lse, np.log(np.exp(x).sum()), rtol=1e-12)
        newch.step_end()
    centres = {_center(s) for _, s in _sigs("reduce._reduce_all")}
    assert centres and centres <= {"f64[1d,C]"}, centres


def test_convolution_and_linear_layers_share_the_gemm_task_functions():
    rng = np.random.default_rng(1)
    model = newch.nn.Sequential(newch.nn.Conv2d(1, 4, 3), newch.nn.ReLU(), newch.nn.Flatten(),
                                newch.nn.Linear(4 * 6 * 6, 5))
    x = newch.tensor(rng.standard_normal((3, 1, 8, 8)).astype(np.float32))
    model(x).sum().backward()
    newch.step_end()
    sigs = _sigs("matmul._tasks") | _sigs("matmul._pack_b")
    assert sigs, "the model ran no gemm through the JIT kernels"
    assert not [s for _, s in sigs if "Literal" in s], sigs
    f32 = [s for n, s in sigs if n == "matmul._tasks" and "f32" in s]
    assert len(f32) == 1, f32
