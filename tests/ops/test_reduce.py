"""Reductions against numpy: all/given dims, negative and non-adjacent dims, keepdim, dtypes, NaN."""
import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import newch

DIMS = [None, 0, 1, 2, -1, -2, (0, 2), (0, 1), (1, 2), (2, 0), (0, 1, 2), (-1, -3)]


def npdims(dim):
    return tuple(dim) if isinstance(dim, tuple) else dim


def close(x, want, dtype=None, **tol):
    want = np.asarray(want)
    assert tuple(x.shape) == want.shape, (tuple(x.shape), want.shape)
    if dtype is not None:
        assert x.dtype is dtype, (x.dtype, dtype)
    got = x.numpy()
    if got.dtype.kind == "f":
        np.testing.assert_allclose(got, want, **({"rtol": 1e-5, "atol": 1e-6} | tol))
    else:
        np.testing.assert_array_equal(got, want)


def data(rng, shape=(3, 4, 5), dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


@pytest.mark.parametrize("dim", DIMS, ids=str)
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("name, ref", [
    ("sum", np.sum), ("mean", np.mean), ("amax", np.max), ("amin", np.min),
    ("var", lambda a, axis, keepdims: np.var(a, axis=axis, keepdims=keepdims, ddof=1)),
    ("std", lambda a, axis, keepdims: np.std(a, axis=axis, keepdims=keepdims, ddof=1)),
    ("logsumexp", lambda a, axis, keepdims: np.log(np.sum(np.exp(a), axis=axis, keepdims=keepdims))),
    ("all", lambda a, axis, keepdims: np.all(a > -0.5, axis=axis, keepdims=keepdims)),
    ("any", lambda a, axis, keepdims: np.any(a > 1.5, axis=axis, keepdims=keepdims)),
])
def test_reductions_over_dims(rng, name, ref, dim, keepdim):
    a = data(rng)
    x = newch.tensor(a)
    if name in ("all", "any"):
        x = (x > -0.5) if name == "all" else (x > 1.5)
    if name == "logsumexp" and dim is None:
        dim = (0, 1, 2)
    fn = getattr(newch, name)
    got = fn(x, dim, keepdim=keepdim) if dim is not None or keepdim else fn(x)
    close(got, ref(a.astype(np.float64), axis=npdims(dim), keepdims=keepdim))
    # the same on a non-contiguous (transposed, then permuted back) input
    y = newch.tensor(np.ascontiguousarray(a.transpose(2, 0, 1))).permute(1, 2, 0)
    if name in ("all", "any"):
        y = (y > -0.5) if name == "all" else (y > 1.5)
    got = fn(y, dim, keepdim=keepdim) if dim is not None or keepdim else fn(y)
    close(got, ref(a.astype(np.float64), axis=npdims(dim), keepdims=keepdim))


@pytest.mark.parametrize("dim", [None, 0, 1, -1, 2])
@pytest.mark.parametrize("keepdim", [False, True])
def test_prod_max_min_argmax_argmin(rng, dim, keepdim):
    a = rng.uniform(0.5, 1.5, (3, 4, 5)).astype(np.float32)
    x = newch.tensor(a)
    kw = {} if dim is None else {"dim": dim, "keepdim": keepdim}
    npkw = {"axis": dim, "keepdims": keepdim and dim is not None}
    close(newch.prod(x, **kw), np.prod(a.astype(np.float64), **npkw))
    close(x.argmax(**kw), np.argmax(a, axis=dim, keepdims=npkw["keepdims"]), dtype=newch.int64)
    close(x.argmin(**kw), np.argmin(a, axis=dim, keepdims=npkw["keepdims"]), dtype=newch.int64)
    if dim is None:
        close(x.max(), a.max())
        close(x.min(), a.min())
    else:
        v, i = x.max(dim, keepdim)
        close(v, a.max(axis=dim, keepdims=keepdim))
        close(i, np.argmax(a, axis=dim, keepdims=keepdim), dtype=newch.int64)
        r = x.min(dim=dim, keepdim=keepdim)
        close(r.values, a.min(axis=dim, keepdims=keepdim))
        close(r.indices, np.argmin(a, axis=dim, keepdims=keepdim))


def test_sum_over_non_adjacent_dims_of_a_strided_view(rng):
    a = data(rng, (4, 6, 5, 3))
    x = newch.tensor(a)[:, ::2].permute(3, 1, 0, 2)
    want = a[:, ::2].transpose(3, 1, 0, 2)
    close(x.sum((0, 2)), want.sum(axis=(0, 2)))
    close(x.sum((1, 3), keepdim=True), want.sum(axis=(1, 3), keepdims=True))
    close(x.mean((-1, 0)), want.mean(axis=(3, 0)))
    close(x.amax((0, 3)), want.max(axis=(0, 3)))
    close(x.var((0, 2)), want.var(axis=(0, 2), ddof=1))


def test_var_std_corrections(rng):
    a = data(rng, (6, 7))
    x = newch.tensor(a)
    close(x.var(), a.var(ddof=1))
    close(x.var(unbiased=False), a.var())
    close(x.var(1, correction=0), a.var(axis=1))
    close(x.std(0, keepdim=True), a.std(axis=0, ddof=1, keepdims=True))
    close(x.std(unbiased=False), a.std())
    close(x.var(0, correction=2), a.var(axis=0, ddof=2))
    assert np.isnan(newch.tensor([1.0]).var().item())


def test_var_of_large_offset_data_is_accurate(rng):
    a = (1e4 + rng.standard_normal(10_000)).astype(np.float32)
    np.testing.assert_allclose(newch.tensor(a).var().item(), a.astype(np.float64).var(ddof=1),
                               rtol=1e-3)


@pytest.mark.parametrize("dtype, want", [(newch.int32, newch.int64), (newch.uint8, newch.int64),
                                         (newch.bool, newch.int64), (newch.int64, newch.int64),
                                         (newch.float64, newch.float64)])
def test_sum_and_prod_dtypes(dtype, want):
    a = np.array([[1, 0, 1], [1, 1, 1]]).astype(dtype.np)
    x = newch.tensor(a)
    close(x.sum(), a.sum(dtype=want.np), dtype=want)
    close(x.sum(0), a.sum(axis=0, dtype=want.np), dtype=want)
    close(x.prod(1), a.prod(axis=1, dtype=want.np), dtype=want)
    assert x.sum(dtype=newch.float64).dtype is newch.float64


def test_uint8_sum_does_not_wrap():
    x = newch.full((1000,), 200, dtype=newch.uint8)
    assert x.sum().item() == 200_000
    assert x.sum(0).item() == 200_000


def test_max_min_keep_integer_dtype():
    x = newch.tensor([[3, 9, 2], [7, 1, 8]], dtype=newch.int32)
    assert x.max().dtype is newch.int32 and x.max().item() == 9
    v, i = x.min(1)
    assert v.tolist() == [2, 1] and i.tolist() == [2, 1] and v.dtype is newch.int32
    assert x.amax(0).tolist() == [7, 9, 8]
    b = newch.tensor([False, True, False])
    assert b.max().item() is True and b.any().item() is True
    with pytest.raises(TypeError, match="argmax"):
        b.argmax()      # as in torch: no argmax for bool


def test_mean_of_integers_is_a_type_error():
    with pytest.raises(TypeError, match="mean"):
        newch.tensor([1, 2, 3]).mean()
    assert newch.tensor([1, 2]).mean(dtype=newch.float64).item() == 1.5
    with pytest.raises(TypeError, match="var"):
        newch.tensor([1, 2, 3]).var()


def test_ties_pick_the_first_index():
    x = newch.tensor([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 2.0, 2.0]])
    assert x.argmax(1).tolist() == [1, 0]
    assert x.max(1).indices.tolist() == [1, 0]
    assert x.argmin(1).tolist() == [3, 0]
    assert x.argmax().item() == 1
    y = newch.tensor([5, 1, 5, 1])
    assert y.argmax().item() == 0 and y.argmin().item() == 1
    assert y.min(0).indices.item() == 1


def test_ties_in_long_rows_and_columns(rng):
    a = rng.integers(0, 3, (50, 2000)).astype(np.float32)
    x = newch.tensor(a)
    close(x.argmax(1), np.argmax(a, axis=1))
    close(x.argmin(0), np.argmin(a, axis=0))
    close(x.T.argmax(0), np.argmax(a.T, axis=0))
    close(x.max(0).indices, np.argmax(a, axis=0))


def test_nan_propagates():
    a = np.array([[1.0, np.nan, 3.0], [4.0, 5.0, 6.0]], np.float32)
    x = newch.tensor(a)
    assert np.isnan(x.max().item()) and np.isnan(x.min().item())
    assert np.isnan(x.sum().item()) and np.isnan(x.mean().item())
    v, i = x.max(1)
    assert np.isnan(v.tolist()[0]) and v.tolist()[1] == 6.0
    assert i.tolist() == [1, 2]
    assert x.min(1).indices.tolist() == [1, 0]
    assert x.argmax().item() == 1 and x.argmin().item() == 1
    close(x.amax(0), [4.0, np.nan, 6.0], equal_nan=True)
    close(x.amin(1), [np.nan, 4.0], equal_nan=True)
    close(x.sum(0), [5.0, np.nan, 9.0], equal_nan=True)
    close(x.logsumexp(1)[0:1], [np.nan], equal_nan=True)
    assert newch.nansum(x).item() == 19.0


def test_nan_matches_torch(torch):
    a = np.array([[1.0, np.nan, np.nan, -np.inf], [np.inf, 2.0, np.nan, 0.0]], np.float32)
    x, t = newch.tensor(a), torch.tensor(a)
    for d in (0, 1):
        np.testing.assert_array_equal(x.max(d).indices.numpy(), t.max(d).indices.numpy())
        np.testing.assert_array_equal(x.min(d).indices.numpy(), t.min(d).indices.numpy())
        np.testing.assert_array_equal(x.argmax(d).numpy(), t.argmax(d).numpy())
        np.testing.assert_array_equal(x.max(d).values.numpy(), t.max(d).values.numpy())


def test_logsumexp_is_stable():
    x = newch.tensor([[1000.0, 1000.0], [-1000.0, -1000.0], [-np.inf, -np.inf]])
    close(x.logsumexp(1), [1000 + np.log(2), -1000 + np.log(2), -np.inf])
    close(newch.logsumexp(x[:2], (0, 1)), 1000 + np.log(2))
    close(newch.tensor([np.inf, 1.0]).logsumexp(0), np.inf)
    assert newch.logsumexp(newch.tensor([1, 2]), 0).dtype is newch.float32


def test_all_any_on_numbers():
    x = newch.tensor([[0.0, 1.0], [2.0, 3.0]])
    assert x.all().item() is False and x.any().item() is True
    close(x.all(1), [False, True], dtype=newch.bool)
    close(x.any(0), [True, True])
    close(newch.tensor([[0, 0], [0, 5]]).any(1, keepdim=True), [[False], [True]])
    assert newch.zeros(0).all().item() is True and newch.zeros(0).any().item() is False


def test_empty_reductions():
    z = newch.zeros(0, 3)
    close(z.sum(), 0.0)
    close(z.sum(0), np.zeros(3))
    close(z.prod(0), np.ones(3))
    assert np.isnan(z.mean().item())
    close(z.sum(1), np.zeros(0))
    close(z.amax(1), np.zeros(0))
    with pytest.raises(IndexError):
        z.max()
    with pytest.raises(IndexError):
        z.argmax()
    with pytest.raises(IndexError):
        z.max(0)


def test_reductions_of_0_dim_tensors():
    x = newch.tensor(2.5)
    assert x.sum().item() == 2.5 and x.sum(0).item() == 2.5 and x.sum(-1).shape == ()
    assert x.mean().item() == 2.5 and x.max().item() == 2.5
    assert x.argmax().item() == 0 and x.max(0).indices.item() == 0
    assert x.amax().item() == 2.5 and x.prod().item() == 2.5
    assert x.sum(0, keepdim=True).shape == ()


@pytest.mark.parametrize("shape, dim", [((1000, 300), None), ((1000, 300), 0), ((1000, 300), 1),
                                        ((20, 5000, 3), 1), ((200_001,), 0), ((64, 64, 64), (0, 2))])
def test_large_reductions_take_the_parallel_path(rng, shape, dim):
    a = rng.standard_normal(shape).astype(np.float32)
    x = newch.tensor(a)
    a64 = a.astype(np.float64)
    kw = {} if dim is None else {"dim": dim}
    close(x.sum(**kw), a64.sum(axis=dim), rtol=1e-4, atol=1e-3)
    close(x.mean(**kw), a64.mean(axis=dim), rtol=1e-4, atol=1e-5)
    close(x.amax(**kw), a.max(axis=dim))
    close(x.var(**kw), a64.var(axis=dim, ddof=1), rtol=1e-4)
    if not isinstance(dim, tuple):
        close(x.argmin(**kw), np.argmin(a, axis=dim))


_THREADS_SCRIPT = """
import hashlib, json, numpy as np, newch
a = np.random.default_rng(0).standard_normal((333, 777)).astype(np.float32)
out = {}
for threads in (1, 2):
    ctx = newch.Context(seed=0, threads=threads)
    newch.set_default_context(ctx)
    x = newch.tensor(a)
    res = [x.sum(), x.sum(0), x.sum(1), x.T.mean(1), x.var(0), x.logsumexp(1)]
    out[threads] = [ctx.threads, [hashlib.sha256(r.numpy().tobytes()).hexdigest() for r in res]]
print(json.dumps(out))
"""


@pytest.mark.slow
def test_reductions_are_the_same_on_1_and_2_threads():
    """Bit-identical on 1 and 2 threads, in a process that really has 2 (NUMBA_NUM_THREADS=2)."""
    if os.environ.get("NEWCH_BACKEND") == "ref":
        pytest.skip("the ref backend runs no parallel kernels")
    pytest.importorskip("numba")
    root = pathlib.Path(__file__).resolve().parents[2]
    env = dict(os.environ, NUMBA_NUM_THREADS="2",
               PYTHONPATH=str(root) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-c", _THREADS_SCRIPT], env=env, capture_output=True,
                       text=True, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["1"][0] == 1 and out["2"][0] == 2, f"thread counts not applied: {out}"
    assert out["1"][1] == out["2"][1]


def test_reductions_match_torch(torch, rng):
    a = data(rng, (4, 5, 6))
    x, t = newch.tensor(a), torch.tensor(a)
    for d in (0, (0, 2), -1):
        np.testing.assert_allclose(x.sum(d).numpy(), t.sum(d).numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(x.std(d).numpy(), t.std(d).numpy(), rtol=1e-5)
        np.testing.assert_allclose(x.logsumexp(d).numpy(), t.logsumexp(d).numpy(), rtol=1e-5)
        np.testing.assert_allclose(x.amin(d).numpy(), t.amin(d).numpy())
    i = newch.tensor(a > 0)
    assert i.sum().item() == torch.tensor(a > 0).sum().item()


def test_reductions_of_a_6_dim_permuted_tensor(rng):
    a = rng.standard_normal((2, 3, 4, 2, 3, 2)).astype(np.float32)
    p = (4, 0, 5, 2, 1, 3)
    x = newch.tensor(a).permute(p)
    w = a.transpose(p).astype(np.float64)
    close(x.sum((1, 3, 5)), w.sum(axis=(1, 3, 5)))
    close(x.amax((0, 2)), w.max(axis=(0, 2)))
    close(x.mean(-1, keepdim=True), w.mean(axis=-1, keepdims=True))
    close(x.argmax(3), np.argmax(w, axis=3))
    close(x.sum(), w.sum(), rtol=1e-5)


def test_sum_of_float32_into_float64():
    a = np.full(100_000, 0.1, np.float32)
    s = newch.tensor(a).sum(dtype=newch.float64)
    assert s.dtype is newch.float64
    assert s.item() == pytest.approx(a.astype(np.float64).sum(), rel=1e-12)
    s0 = newch.tensor(a.reshape(100, 1000)).sum(0, dtype=newch.float64)
    close(s0, a.reshape(100, 1000).astype(np.float64).sum(0), rtol=1e-12)
