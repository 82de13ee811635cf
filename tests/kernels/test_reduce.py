"""Reduction kernels against their numpy twins, and bit-for-bit determinism across threads."""

import numpy as np
import pytest
numba = pytest.importorskip("numba", reason="JIT kernel tests need numba (not installed: the ref backend is tested elsewhere)")
from .thread_check import outputs_on_1_and_2_threads, run_1_3_4_threads

from newch.kernels import codes as C
from newch.kernels import reduce as K
from newch.kernels.ref import reduce as REF

EPS64 = np.finfo(np.float64).eps
CODES = [C.SUM, C.PROD, C.MAX, C.MIN, C.ALL, C.ANY, C.SUMSQDEV, C.SUMEXP, C.NANSUM]
FLOAT_ONLY = (C.SUMSQDEV, C.SUMEXP)
DTYPES = [np.float32, np.float64, np.int32, np.int64, np.uint8, np.bool_]
# (O, R, I): zero sizes, odd sizes, I == 1 and I > 1, and sizes past the serial threshold.
SHAPES = [(0, 3, 4), (3, 0, 4), (2, 5, 0), (1, 1, 1), (3, 7, 1), (1, 13, 5), (4, 9, 33),
          (2, 20001, 1), (1, 700, 300), (37, 1000, 3), (5, 3, 4099)]


def values(rng, shape, dtype, nan=False):
    """Random test values; small ints keep products exact, floats get NaNs on request."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.7
    if dtype.kind in "iu":
        return rng.integers(0 if dtype.kind == "u" else -3, 4, size=shape).astype(dtype)
    x = rng.standard_normal(shape).astype(dtype)
    if nan and x.size:
        x.flat[rng.integers(0, x.size, size=max(1, x.size // 50))] = np.nan
    return x


def view(x, layout):
    """x itself or a non-contiguous view of equal contents: strided, transposed or reversed."""
    if layout == "c":
        return x
    if layout == "strided":
        big = np.zeros((x.shape[0], x.shape[1], 2 * x.shape[2]), x.dtype)
        big[:, :, ::2] = x
        return big[:, :, ::2]
    if layout == "transposed":
        big = np.zeros((x.shape[2], x.shape[1], x.shape[0] + 1), x.dtype)
        big[:, :, :x.shape[0]] = x.transpose(2, 1, 0)
        return big[:, :, :x.shape[0]].transpose(2, 1, 0)
    r = np.ascontiguousarray(x[:, ::-1])
    return r[:, ::-1]


def out_dtype(code, dtype):
    dtype = np.dtype(dtype)
    if code in (C.ALL, C.ANY):
        return np.dtype(np.bool_)
    if code in (C.MAX, C.MIN):
        return dtype
    return dtype if dtype.kind == "f" else np.dtype(np.int64)


def center_for(code, x):
    O, R, I = x.shape
    if code == C.SUMSQDEV and R:
        return x.astype(np.float64).mean(axis=1)
    if code == C.SUMEXP and R:
        return np.nan_to_num(x.astype(np.float64).max(axis=1))
    return np.zeros((max(O, 1), max(I, 1)))


def tolerance(code, x, want):
    """Allowed |got - want|: float64 rounding of R ordered terms plus one float32 ulp."""
    R = max(x.shape[1], 1)
    w = np.abs(x.astype(np.float64))
    if code in (C.SUM, C.NANSUM):
        scale = np.nansum(w, axis=1)
    else:
        scale = np.abs(want.astype(np.float64))
    tol = 4 * R * EPS64 * scale
    if want.dtype == np.float32:
        tol = tol + np.spacing(np.abs(want)).astype(np.float64)
    return tol


def check(code, got, want, x):
    assert got.dtype == want.dtype and got.shape == want.shape
    if got.dtype.kind != "f":
        np.testing.assert_array_equal(got, want)
        return
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    if code in (C.MAX, C.MIN):
        np.testing.assert_array_equal(got[ok], want[ok])
        return
    diff = np.abs(got[ok].astype(np.float64) - want[ok].astype(np.float64))
    tol = tolerance(code, x, want)[ok]
    inf = np.isinf(want[ok])
    assert np.all(got[ok][inf] == want[ok][inf])
    assert np.all(diff[~inf] <= tol[~inf]), (diff[~inf] - tol[~inf]).max()


def run_3d(mod, code, x, center):
    out = np.full((x.shape[0], x.shape[2]), 7, out_dtype(code, x.dtype))
    mod.reduce_3d(code, x, center, out)
    return out


# NOTE: every code and dtype runs the serial path; the parallel driver is one loop for all of
# them, so sizes past the serial threshold run on two dtypes only (each (code, dtype, path)
# is a compilation: this keeps the cold-cache test time down).
PARALLEL_DTYPES = (np.float32, np.int64)


def skip(code, dtype, shape):
    float_x = np.dtype(dtype).kind == "f"
    if int(np.prod(shape)) >= K.SERIAL_WORK and dtype not in PARALLEL_DTYPES:
        return True
    return (code in FLOAT_ONLY and not float_x) or (code in (C.MAX, C.MIN) and shape[1] == 0)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("code", CODES)
def test_reduce_3d_matches_ref(code, dtype):
    rng = np.random.default_rng(code)
    for shape in SHAPES:
        if skip(code, dtype, shape):
            continue
        x = values(rng, shape, dtype, nan=True)
        center = center_for(code, x)
        check(code, run_3d(K, code, x, center), run_3d(REF, code, x, center), x)


@pytest.mark.parametrize("layout", ["strided", "transposed", "reversed"])
@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_])
def test_reduce_3d_any_strides(layout, dtype):
    rng = np.random.default_rng(1)
    for code in CODES:
        for shape in [(3, 7, 1), (4, 9, 33), (1, 700, 300), (37, 1000, 3)]:
            if skip(code, dtype, shape):
                continue
            x = values(rng, shape, dtype, nan=True)
            xv = view(x, layout)
            assert not xv.flags.c_contiguous and np.array_equal(xv, x, equal_nan=True)
            center = center_for(code, x)
            want = run_3d(REF, code, x, center)
            check(code, run_3d(K, code, xv, center), want, x)


def test_reduce_3d_empty_identities():
    x = np.zeros((2, 0, 3), np.float32)
    dummy = np.zeros((1, 1))
    expect = {C.SUM: 0, C.NANSUM: 0, C.SUMSQDEV: 0, C.SUMEXP: 0, C.PROD: 1,
              C.ALL: True, C.ANY: False}
    for code, value in expect.items():
        got = run_3d(K, code, x, dummy if code not in FLOAT_ONLY else np.zeros((2, 3)))
        assert np.all(got == value), code


def test_max_min_nan_and_all_any():
    x = np.array([[1.0, np.nan, 3.0], [2.0, 5.0, -1.0], [np.nan, np.nan, 0.0]])[:, :, None]
    dummy = np.zeros((1, 1))
    mx, mn = run_3d(K, C.MAX, x, dummy)[:, 0], run_3d(K, C.MIN, x, dummy)[:, 0]
    np.testing.assert_array_equal(mx, [np.nan, 5.0, np.nan])
    np.testing.assert_array_equal(mn, [np.nan, -1.0, np.nan])
    # NOTE: NaN is nonzero, so it is "true" for ALL/ANY as in torch.
    assert run_3d(K, C.ALL, x, dummy)[:, 0].tolist() == [True, True, False]
    nan_sum = run_3d(K, C.NANSUM, x, dummy)[:, 0]
    np.testing.assert_array_equal(nan_sum, [4.0, 6.0, 0.0])


def run_all(mod, code, x):
    finite = x[np.isfinite(x)] if x.dtype.kind == "f" else x
    center = np.zeros(1)
    if code == C.SUMSQDEV and finite.size:
        center[0] = finite.mean()
    elif code == C.SUMEXP and finite.size:
        center[0] = finite.max()
    acc = np.float64 if x.dtype.kind == "f" else np.int64
    partials = np.full(mod.reduce_blocks(x.size), 99, acc)
    out = np.full(1, 7, out_dtype(code, x.dtype))
    mod.reduce_all(code, x, center, partials, out)
    return out


@pytest.mark.parametrize("dtype", DTYPES)
def test_reduce_all_matches_ref(dtype):
    rng = np.random.default_rng(5)
    for n in (0, 1, 17, 4096, 4097, 50001):
        for code in CODES:
            if skip(code, dtype, (1, n, 1)):
                continue
            x = values(rng, n, dtype, nan=(n % 2 == 1))
            check(code, run_all(K, code, x), run_all(REF, code, x), x.reshape(1, -1, 1))


def test_reduce_blocks():
    for n in (0, 1, 4095, 4096, 4097, 10 ** 6):
        assert K.reduce_blocks(n) == REF.reduce_blocks(n) == max(1, -(-n // K.BLOCK))


def run_arg(mod, code, x):
    val = np.zeros((x.shape[0], x.shape[2]), x.dtype)
    idx = np.full((x.shape[0], x.shape[2]), -1, np.int64)
    mod.argreduce_3d(code, x, val, idx)
    return val, idx


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", ["c", "transposed"])
def test_argreduce_matches_ref(dtype, layout):
    rng = np.random.default_rng(9)
    for shape in SHAPES:
        if shape[1] == 0 or skip(C.ARGMAX, dtype, shape):
            continue
        x = values(rng, shape, dtype, nan=True)
        for code in (C.ARGMAX, C.ARGMIN):
            got_v, got_i = run_arg(K, code, view(x, layout) if x.size else x)
            want_v, want_i = run_arg(REF, code, x)
            np.testing.assert_array_equal(got_i, want_i)
            np.testing.assert_array_equal(got_v, want_v)


def test_argreduce_ties_and_nan():
    x = np.array([[2.0, 5.0, 5.0, 1.0, 1.0], [1.0, np.nan, 3.0, np.nan, -9.0]])[:, :, None]
    _, imax = run_arg(K, C.ARGMAX, x)
    _, imin = run_arg(K, C.ARGMIN, x)
    assert imax[:, 0].tolist() == [1, 1] and imin[:, 0].tolist() == [3, 1]


def test_tile_plan_covers_each_output_once():
    for M, Kr, I in [(1, 1, 1), (7, 3, 1), (1, 5000, 300), (37, 1000, 3), (1000, 2, 1000),
                     (3, 1, 4099)]:
        ntask, per, ib, nib = K.tile_plan.py_func(M, Kr, I)
        seen = np.zeros((M, I), np.int64)
        for t in range(ntask):
            o0, o1, i0, i1 = K.tile_bounds.py_func(t, per, ib, nib, M, I)
            seen[o0:o1, i0:i1] += 1
        assert np.all(seen == 1)


def det_inputs():
    """Inputs big enough for the parallel paths, with NaN-free floats."""
    rng = np.random.default_rng(42)
    xs = [rng.standard_normal((3, 20001, 1)).astype(np.float32),
          rng.standard_normal((1, 900, 333)),
          rng.standard_normal((40, 300, 7)).astype(np.float32).transpose(2, 1, 0)[:5]]
    return xs, rng.standard_normal(123457).astype(np.float32)


def det_outputs():
    """Every parallel code of every kernel on det_inputs(), as bytes."""
    xs, flat = det_inputs()
    res = []
    for x in xs:
        for code in (C.SUM, C.MAX, C.SUMSQDEV, C.SUMEXP):
            res.append(run_3d(K, code, x, center_for(code, x)).tobytes())
        for code in (C.ARGMAX, C.ARGMIN):
            res.extend(a.tobytes() for a in run_arg(K, code, x))
    for code in (C.SUM, C.MAX, C.SUMSQDEV, C.SUMEXP, C.PROD):
        res.append(run_all(K, code, flat).tobytes())
    return res


def test_determinism_one_vs_two_threads():
    one, two = outputs_on_1_and_2_threads(det_outputs)
    assert one == two


def test_determinism_subprocess_1_3_4_threads():
    res = run_1_3_4_threads("test_reduce")
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip().endswith("SAME"), res.stdout


def test_repeated_calls_take_the_remembered_plan_for_their_own_layout_only():
    """A repeated reduce_3d goes straight to its remembered launcher; the same shape with other
    strides, dtypes or codes must not take another call's launcher (each is checked against
    numpy, and against the first call's bits)."""
    rng = np.random.default_rng(5)
    dummy = np.zeros((1, 1))
    base = rng.standard_normal((6, 40, 8))
    views = [base.astype(np.float32), base.astype(np.float64),
             np.ascontiguousarray(base.transpose(2, 1, 0)).transpose(2, 1, 0).astype(np.float32),
             base.astype(np.float32)[:, ::-1], base.astype(np.float32)[:, :, ::-1]]
    first = {}
    for rep in range(3):
        for n, x in enumerate(views):
            for code, ref in ((C.SUM, np.sum), (C.MAX, np.max)):
                out = np.full((6, 8), np.nan, x.dtype)
                K.reduce_3d(code, x, dummy, out)
                np.testing.assert_allclose(out, ref(x.astype(np.float64), axis=1), rtol=1e-5)
                if rep == 0:
                    first[(n, code)] = out.tobytes()
                assert out.tobytes() == first[(n, code)]
