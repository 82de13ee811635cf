"""Elementwise kernels: numba backend vs the numpy ref twin, semantics, determinism."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
numba = pytest.importorskip("numba", reason="JIT kernel tests need numba (not installed: the ref backend is tested elsewhere)")

from newch.kernels import codes as C
from newch.kernels import elementwise as NB
from newch.kernels.ref import elementwise as REF
from newch.kernels.specialize import BINARY, UNARY

FLOATS = (np.float32, np.float64)
INTS = (np.int32, np.int64, np.uint8)
ALL = FLOATS + INTS + (np.bool_,)

UNARY_FLOAT = [c for c, kinds in UNARY.items() if "f" in kinds and c != C.LOGICAL_NOT]
UNARY_INT = [C.NEG, C.ABS, C.SIGN, C.SQUARE, C.RELU]
# Codes numpy computes exactly (correctly rounded or exact): compared bit for bit.
EXACT_UNARY = {C.NEG, C.ABS, C.SQRT, C.RSQRT, C.RELU, C.SIGN, C.SQUARE, C.RECIPROCAL,
               C.FLOOR, C.CEIL, C.ROUND, C.TRUNC}
BINARY_FLOAT = [C.ADD, C.SUB, C.MUL, C.DIV, C.POW, C.MAXIMUM, C.MINIMUM, C.FLOOR_DIVIDE,
                C.REMAINDER, C.ATAN2, C.RSUB, C.RDIV, C.RPOW, C.FMOD]
INEXACT_BINARY = {C.POW, C.RPOW, C.ATAN2}
BINARY_INT = [C.ADD, C.SUB, C.MUL, C.POW, C.MAXIMUM, C.MINIMUM, C.FLOOR_DIVIDE, C.REMAINDER,
              C.RSUB, C.RPOW, C.BITWISE_AND, C.BITWISE_OR, C.BITWISE_XOR, C.FMOD]
COMPARE = [C.EQ, C.NE, C.LT, C.LE, C.GT, C.GE, C.LOGICAL_AND, C.LOGICAL_OR, C.LOGICAL_XOR]
BINARY_BOOL = [C.ADD, C.MUL, C.MAXIMUM, C.MINIMUM, C.BITWISE_AND, C.BITWISE_OR,
               C.BITWISE_XOR] + COMPARE
# NOTE: every op on the serial path; the parallel driver is one loop for all ops, so
# ``test_parallel_path`` runs it (n = 40001 > SERIAL_MAX) on one op of each kind.
SIZES = (0, 1, 7, 1000)
NAMES = {v: v for v in list(UNARY) + list(BINARY)}


# ---------------------------------------------------------------- data

def data(dtype, n, seed, small=False):
    """Random values of ``dtype`` with the awkward cases mixed in at random places."""
    rng = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return rng.random(n) < 0.5
    if dt.kind == "f":
        x = rng.standard_normal(n) * rng.choice([0.01, 1.0, 10.0, 100.0], n)
        special = [0.0, -0.0, np.inf, -np.inf, np.nan, 1, -1, 0.5, -0.5, 1.5, 2.5, -2.5,
                   3, -3, 1e30, -1e30, 1e-40, 88.7, -88.7, 700, -700]
    else:
        info = np.iinfo(dt)
        x = rng.integers(info.min, info.max, n, endpoint=True, dtype=dt)
        small_vals = rng.integers(-9, 10, n)
        if info.min == 0:
            small_vals = np.abs(small_vals)
        x = np.where(rng.random(n) < 0.5, small_vals.astype(dt), x)
        special = [0, 1, 2, 3, 7, info.max, info.min, info.min + 1]
        if info.min < 0:
            special += [-1, -2, -3, -7]
    x = x.astype(dt)
    if small and dt.kind in "iu":            # exponents: keep most of them small
        x = (x % 40).astype(dt) - (3 if dt.kind == "i" else 0)
    k = min(n, len(special))
    x[rng.choice(n, k, replace=False)] = np.array(special[:k]).astype(dt)
    return x


def assert_match(got, want, ulps=0, floor=0.0, atol=0.0, what=""):
    """Exact comparison (NaN equal to NaN), or within ``ulps`` units in the last place."""
    assert got.dtype == want.dtype and got.shape == want.shape, what
    if ulps == 0 or got.dtype.kind != "f":
        np.testing.assert_array_equal(got, want, err_msg=what)
        return
    g, w = got.astype(np.float64), want.astype(np.float64)
    nan = np.isnan(w)
    np.testing.assert_array_equal(np.isnan(g), nan, err_msg=what + " (NaN positions)")
    inf = np.isinf(w) | np.isinf(g)
    np.testing.assert_array_equal(g[inf], w[inf], err_msg=what + " (infinities)")
    fin = ~nan & ~inf
    scale = np.maximum(np.abs(want[fin]), want.dtype.type(floor))
    tol = ulps * np.spacing(scale).astype(np.float64) + (atol[fin] if np.ndim(atol) else atol)
    err = np.abs(g[fin] - w[fin])
    bad = np.flatnonzero(err > tol)
    assert bad.size == 0, f"{what}: {bad.size} values off, e.g. got {g[fin][bad[:3]]} " \
                          f"want {w[fin][bad[:3]]}"


def unary_tolerance(code, x):
    """(ulps, floor, atol) for comparing a float unary ``code`` with numpy."""
    if code in EXACT_UNARY:
        return 0, 0.0, 0.0
    eps = np.finfo(x.dtype).eps
    floor = 1e-30 if x.dtype == np.float32 else 1e-290     # tiny results: absolute error
    if code == C.GELU_ERF:           # 1 + erf(x) cancels for x << 0: error ~ |x| * eps
        with np.errstate(all="ignore"):
            return 4, floor, 2 * eps * np.nan_to_num(np.abs(x.astype(np.float64)), posinf=0)
    return 4, floor, 0.0


def run_both(name, *args):
    """Run kernel ``name`` of both backends on copies of ``args`` (last arg is the output)."""
    a1 = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    a2 = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    getattr(NB, name)(*a1)
    getattr(REF, name)(*a2)
    return a1[-1], a2[-1]


# ------------------------------------------------------------- flat unary

@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n", SIZES)
def test_unary_float(dtype, n):
    x = data(dtype, n, seed=n)
    for code in UNARY_FLOAT:
        got, want = run_both("unary", code, x, np.empty_like(x))
        ulps, floor, atol = unary_tolerance(code, x)
        assert_match(got, want, ulps, floor, atol, f"{NAMES[code]} {np.dtype(dtype)} n={n}")


@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("n", SIZES)
def test_unary_int(dtype, n):
    x = data(dtype, n, seed=n)
    for code in UNARY_INT:
        got, want = run_both("unary", code, x, np.empty_like(x))
        assert_match(got, want, what=f"{NAMES[code]} {np.dtype(dtype)}")


@pytest.mark.parametrize("dtype", ALL)
def test_logical_not(dtype):
    x = data(dtype, 1000, seed=1)
    got, want = run_both("unary", C.LOGICAL_NOT, x, np.empty(x.shape, np.bool_))
    assert_match(got, want)
    assert got.sum() == (x == 0).sum()


def test_unary_semantics():
    x = np.array([np.nan, -0.0, 0.0, 2.5, -2.5, 0.5, -100.0, 100.0, -np.inf], np.float32)
    out = np.empty_like(x)
    NB.unary(C.SIGN, x, out)
    assert np.array_equal(out, [0, 0, 0, 1, -1, 1, -1, 1, -1])      # SIGN(NaN) = 0 (torch)
    NB.unary(C.RELU, x, out)
    assert np.isnan(out[0]) and np.array_equal(out[1:], [0, 0, 2.5, 0, 0.5, 0, 100, 0])
    NB.unary(C.ROUND, x, out)
    assert np.array_equal(out[3:6], [2, -2, 0])                     # half to even
    NB.unary(C.SIGMOID, x, out)
    assert 0 < out[6] < 1e-40 and out[7] == 1 and out[8] == 0      # no overflow at -100
    NB.unary(C.RSQRT, np.array([4.0, 0.0], np.float32), out[:2])
    assert np.array_equal(out[:2], [0.5, np.inf])
    i = np.array([-128, -1, 0, 5], np.int8).astype(np.int32) * 16777216
    oi = np.empty_like(i)
    NB.unary(C.ABS, i, oi)
    assert oi[0] == np.iinfo(np.int32).min                          # wraps like numpy
    u = np.array([0, 1, 200], np.uint8)
    ou = np.empty_like(u)
    NB.unary(C.NEG, u, ou)
    assert np.array_equal(ou, [0, 255, 56])


@pytest.mark.parametrize("backend", [NB, REF])
def test_unary_rejects_unsupported(backend):
    x = np.arange(5, dtype=np.int32)
    with pytest.raises(ValueError):
        backend.unary(C.EXP, x, np.empty_like(x))
    with pytest.raises(ValueError):
        backend.unary(C.LOGICAL_NOT, x, np.empty_like(x))


# ------------------------------------------------------------ flat binary

def binary_cases(dtype):
    """(codes, out dtype, ulps for code) for the binary families of ``dtype``."""
    if dtype == np.bool_:
        return [(BINARY_BOOL, np.bool_)]
    arith = BINARY_FLOAT if np.dtype(dtype).kind == "f" else BINARY_INT
    return [(arith, dtype), (COMPARE, np.bool_)]


def binary_ulps(code, out_dtype):
    return 4 if code in INEXACT_BINARY and np.dtype(out_dtype).kind == "f" else 0


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("n", SIZES)
def test_binary(dtype, n):
    a = data(dtype, n, seed=n)
    b = data(dtype, n, seed=n + 1)
    e = data(dtype, n, seed=n + 2, small=True)      # small integer exponents for POW
    for codes, odt in binary_cases(dtype):
        for code in codes:
            lhs, rhs = a, b
            if code == C.POW and dtype in INTS:
                rhs = e                   # the exponent
            elif code == C.RPOW and dtype in INTS:
                lhs, rhs = e, a           # RPOW: rhs ** lhs
            got, want = run_both("binary", code, lhs, rhs, np.empty(n, odt))
            assert_match(got, want, binary_ulps(code, odt),
                         what=f"{NAMES[code]} {np.dtype(dtype)} n={n}")


@pytest.mark.parametrize("dtype", ALL)
def test_binary_scalar(dtype):
    a = data(dtype, 1000, seed=3)
    scalars = data(dtype, 8, seed=4) if dtype != np.bool_ else np.array([True, False])
    for codes, odt in binary_cases(dtype):
        for code in codes:
            for s in scalars[:4]:
                if code in (C.POW, C.RPOW) and dtype in INTS:
                    s = np.dtype(dtype).type(abs(int(s)) % 5)
                got, want = run_both("binary_scalar", code, a, s, np.empty(a.shape, odt))
                assert_match(got, want, binary_ulps(code, odt),
                             what=f"{NAMES[code]} {np.dtype(dtype)} s={s}")


PARALLEL_CASES = [("unary", C.EXP, np.float32, None), ("unary", C.RELU, np.float64, None),
                  ("unary", C.NEG, np.uint8, None), ("unary", C.LOGICAL_NOT, np.int32, np.bool_),
                  ("binary", C.ADD, np.float32, None), ("binary", C.POW, np.float64, None),
                  ("binary", C.FLOOR_DIVIDE, np.int64, None), ("binary", C.LT, np.float32, np.bool_),
                  ("binary", C.ADD, np.bool_, None), ("binary_scalar", C.MUL, np.float32, None),
                  ("binary_scalar", C.RSUB, np.int32, None)]


@pytest.mark.parametrize("kernel,code,dtype,odt", PARALLEL_CASES)
def test_parallel_path(kernel, code, dtype, odt):
    n = 40001                                   # > SERIAL_MAX: the prange driver
    a, b = data(dtype, n, seed=30), data(dtype, n, seed=31)
    out = np.empty(n, odt or dtype)
    args = {"unary": (code, a, out), "binary": (code, a, b, out),
            "binary_scalar": (code, a, b[7], out)}[kernel]
    got, want = run_both(kernel, *args)
    assert_match(got, want, 4 if code in (C.EXP, C.POW) else 0, floor=1e-30,
                 what=f"{code} {np.dtype(dtype)}")


@pytest.mark.parametrize("dtype", (np.int32, np.int64))
def test_integer_division_edges(dtype):
    mn = np.iinfo(dtype).min
    a = np.array([7, -7, 7, -7, 5, mn, mn, 0, 2, 2, -1, -1, 1, 3], dtype)
    b = np.array([2, 2, -2, -2, 0, -1, 0, 0, -1, -2, -3, -4, -9, 0], dtype)
    expect = {  # x op 0 is 0; MIN // -1 wraps to MIN; negative powers truncate
        C.FLOOR_DIVIDE: [3, -4, -4, 3, 0, mn, 0, 0, -2, -1, 0, 0, -1, 0],
        C.REMAINDER: [1, 1, -1, -1, 0, 0, 0, 0, 0, 0, -1, -1, -8, 0],
        C.FMOD: [1, -1, 1, -1, 0, 0, 0, 0, 0, 0, -1, -1, 1, 0],
        C.POW: [49, 49, 0, 0, 1, 0, 1, 1, 0, 0, -1, 1, 1, 1],
    }
    for code, want in expect.items():
        for backend in (NB, REF):
            out = np.empty_like(a)
            backend.binary(code, a, b, out)
            assert np.array_equal(out, np.array(want, dtype)), (backend.__name__, NAMES[code])


def test_float_semantics():
    a = np.array([np.nan, 1.0, -0.0, 5.0, -5.0, 5.0, 1.0, np.inf], np.float32)
    b = np.array([1.0, np.nan, 0.0, 3.0, 3.0, -3.0, 0.0, 2.0], np.float32)
    out = np.empty_like(a)
    NB.binary(C.MAXIMUM, a, b, out)
    assert np.isnan(out[:2]).all() and out[3] == 5
    NB.binary(C.REMAINDER, a, b, out)
    assert np.array_equal(out[3:6], [2, 1, -1]) and np.isnan(out[6])    # sign of divisor
    NB.binary(C.FMOD, a, b, out)
    assert np.array_equal(out[3:6], [2, -2, 2])                          # sign of dividend
    NB.binary(C.FLOOR_DIVIDE, a, b, out)
    assert np.array_equal(out[3:7], [1, -2, -2, np.inf])
    NB.binary(C.POW, np.array([np.nan], np.float32), np.array([0], np.float32), out[:1])
    assert out[0] == 1
    NB.binary_scalar(C.RSUB, a[3:6], np.float32(1), out[:3])
    assert np.array_equal(out[:3], [-4, 6, -4])
    NB.binary_scalar(C.RDIV, a[3:4], np.float32(10), out[:1])
    assert out[0] == np.float32(2)


@pytest.mark.parametrize("backend", [NB, REF])
def test_binary_rejects_unsupported(backend):
    f = np.ones(4, np.float32)
    i = np.ones(4, np.int32)
    for code, x, o in [(C.BITWISE_AND, f, f), (C.DIV, i, i), (C.ATAN2, i, i),
                       (C.SUB, np.ones(4, bool), np.ones(4, bool)), (C.ADD, f, f.astype(bool))]:
        with pytest.raises(ValueError):
            backend.binary(code, x, x, o.copy())


# ---------------------------------------------------------------- nd views

def layouts(shape, dtype, seed):
    """(name, 4-D array of ``shape``) pairs with assorted strides over random data."""
    n0, n1, n2, n3 = shape
    base = data(dtype, 2 * n0 * n1 * n2 * n3 + n1 + n3 + 1, seed)
    c = base[:n0 * n1 * n2 * n3].reshape(shape)
    out = [("contiguous", c),
           ("transposed", base[:c.size].reshape(n0, n1, n3, n2).transpose(0, 1, 3, 2)),
           ("reversed", base[:c.size].reshape(n3, n2, n1, n0).transpose(3, 2, 1, 0)),
           ("stepped", base[:2 * c.size].reshape(n0, n1, n2, 2 * n3)[..., ::2]),
           ("flipped", c[:, ::-1, :, ::-1]),
           ("bias", np.broadcast_to(base[:n1].reshape(1, n1, 1, 1), shape)),
           ("row", np.broadcast_to(base[:n3].reshape(1, 1, 1, n3), shape)),
           ("scalar", np.broadcast_to(base[:1].reshape(1, 1, 1, 1), shape)),
           ("writable bias", np.lib.stride_tricks.as_strided(
               base[:n1], shape, (0, base.itemsize, 0, 0)))]
    return out


ND_SHAPES = [(2, 3, 5, 7), (3, 16, 33, 35), (1, 1, 1, 1), (0, 3, 4, 5), (4, 1, 9, 1)]


@pytest.mark.parametrize("shape", ND_SHAPES)
@pytest.mark.parametrize("dtype", (np.float32, np.int64))
def test_unary_nd(shape, dtype):
    codes = [C.NEG, C.EXP, C.SIGN, C.TANH] if dtype == np.float32 else [C.NEG, C.RELU]
    for name, x in layouts(shape, dtype, seed=5):
        for code in codes:
            got, want = run_both("unary_nd", code, x, np.empty(shape, dtype))
            ulps = 0 if code in EXACT_UNARY else 4
            assert_match(got, want, ulps, floor=1e-30, what=f"{NAMES[code]} {name}")
        got, want = run_both("unary_nd", C.LOGICAL_NOT, x, np.empty(shape, np.bool_))
        assert_match(got, want, what=f"LOGICAL_NOT {name}")


@pytest.mark.parametrize("shape", ND_SHAPES)
@pytest.mark.parametrize("dtype", (np.float32, np.int32, np.bool_))
def test_binary_nd(shape, dtype):
    if dtype == np.float32:
        codes = [(C.ADD, dtype), (C.SUB, dtype), (C.DIV, dtype), (C.MAXIMUM, dtype),
                 (C.POW, dtype), (C.REMAINDER, dtype), (C.LT, np.bool_), (C.EQ, np.bool_)]
    elif dtype == np.int32:
        codes = [(C.ADD, dtype), (C.RSUB, dtype), (C.FLOOR_DIVIDE, dtype),
                 (C.BITWISE_XOR, dtype), (C.GE, np.bool_)]
    else:
        codes = [(C.ADD, dtype), (C.LOGICAL_XOR, dtype), (C.LT, dtype)]
    lay_a = layouts(shape, dtype, seed=6)
    lay_b = layouts(shape, dtype, seed=7)
    for (na, a), (nb, b) in [(x, y) for x in lay_a for y in lay_b
                             if x[0] in ("contiguous", "transposed") or y[0] == "contiguous"]:
        for code, odt in codes:
            got, want = run_both("binary_nd", code, a, b, np.empty(shape, odt))
            assert_match(got, want, binary_ulps(code, odt), what=f"{NAMES[code]} {na}/{nb}")


@pytest.mark.parametrize("shape", ND_SHAPES)
@pytest.mark.parametrize("dtype", (np.float32, np.uint8, np.bool_))
def test_where_nd(shape, dtype):
    conds = layouts(shape, np.bool_, seed=8)
    lay = layouts(shape, dtype, seed=9)
    for i, (nc, c) in enumerate(conds):
        (na, a), (nb, b) = lay[i % len(lay)], lay[(i + 3) % len(lay)]
        got, want = run_both("where_nd", c, a, b, np.empty(shape, dtype))
        assert_match(got, want, what=f"{nc}/{na}/{nb}")


def in_range(dtype, x):
    """Float values that every target dtype of copy_nd can hold (uint8: negatives wrap)."""
    if np.dtype(dtype).kind != "f":
        return x
    return np.nan_to_num(np.clip(x, -100, 100), nan=3.0).astype(dtype)


@pytest.mark.parametrize("src_dtype", ALL)
@pytest.mark.parametrize("dst_dtype", ALL)
def test_copy_nd_convert(src_dtype, dst_dtype):
    shape = (3, 16, 33, 35)                                # above SERIAL_MAX
    buf = np.zeros(shape[:3] + (2 * shape[3],), dst_dtype)
    for name, s in layouts(shape, src_dtype, seed=10)[1:2]:     # transposed source
        if np.dtype(dst_dtype).kind in "iu":
            s = in_range(src_dtype, s)
        got, want = buf.copy(), buf.copy()
        NB.copy_nd(s, dst_views(got, "stepped"))
        REF.copy_nd(s, dst_views(want, "stepped"))
        assert_match(got, want, what=f"{name} -> {np.dtype(dst_dtype)}")
        assert not got[..., ::2].any()                     # untouched between the strides


def dst_views(buf, name):
    """A view of ``buf`` (shape (n0, n1, n2, 2*n3)) of shape (n0, n1, n2, n3) with some strides."""
    n3 = buf.shape[3] // 2
    return {"contiguous": buf[..., :n3], "stepped": buf[..., 1::2],
            "flipped": buf[::-1, :, ::-1, ::2],
            "permuted": buf[..., :n3].copy().transpose(0, 2, 1, 3)}[name]


@pytest.mark.parametrize("shape", ND_SHAPES)
def test_copy_nd_layouts(shape):
    buf = np.zeros(shape[:3] + (2 * shape[3],), np.float32)
    for ns, s in layouts(shape, np.float32, seed=11):
        for nd in ("contiguous", "stepped", "flipped"):
            got, want = buf.copy(), buf.copy()
            NB.copy_nd(s, dst_views(got, nd))
            REF.copy_nd(s, dst_views(want, nd))
            assert_match(got, want, what=f"{ns} -> {nd}")   # also: nothing else written


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("shape", ND_SHAPES)
def test_fill_nd(dtype, shape):
    value = data(dtype, 3, seed=13)[1]
    buf = np.zeros(shape[:3] + (2 * shape[3],), dtype)
    for name in ("contiguous", "stepped", "flipped"):
        got, want = buf.copy(), buf.copy()
        NB.fill_nd(dst_views(got, name), value)
        REF.fill_nd(dst_views(want, name), value)
        assert_match(got, want, what=f"{name}")
    perm = dst_views(buf, "permuted")
    NB.fill_nd(perm, value)
    assert_match(perm, np.full(perm.shape, value, dtype), what="permuted")


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n", SIZES)
def test_axpby(dtype, n):
    x, y = data(dtype, n, seed=14), data(dtype, n, seed=15)
    a, b = dtype(0.9), dtype(-0.01)
    got, want = run_both("axpby", a, x, b, y, np.empty_like(x))
    assert_match(got, want, what="axpby")
    x2 = x.copy()
    NB.axpby(a, x2, b, y, x2)                              # in place, out is x
    assert_match(x2, want, what="axpby in place")


def test_nd_rejects_bad_shapes():
    a = np.zeros((2, 3, 4, 5), np.float32)
    with pytest.raises(ValueError):
        NB.binary_nd(C.ADD, a, np.zeros((2, 3, 4, 6), np.float32), a.copy())
    with pytest.raises(ValueError):
        NB.unary_nd(C.NEG, a, np.zeros((2, 3, 4, 4), np.float32))
    with pytest.raises(TypeError):
        NB.binary_nd(C.ADD, a, a.astype(np.float64), a.copy())
    with pytest.raises(ValueError):
        NB.binary(C.ADD, a.ravel()[::2], a.ravel()[::2], np.zeros(60, np.float32))


def test_nd_writes_strided_out():
    a = np.arange(120, dtype=np.float32).reshape(2, 3, 4, 5)
    out = np.zeros((2, 3, 4, 10), np.float32)
    NB.unary_nd(C.NEG, a, out[..., ::2])
    assert np.array_equal(out[..., ::2], -a) and not out[..., 1::2].any()
    with pytest.raises(ValueError):
        NB.copy_nd(a, np.zeros((2, 3, 5, 4), np.float32))


@pytest.mark.parametrize("rows, cols", [(64, 256), (2, 1), (1, 5), (3000, 17)])
def test_binary_nd_row_broadcast_takes_the_row_loop_with_the_same_bits(rows, cols):
    # out = a op row (a Linear layer's bias add) runs a 1-D loop over rows; it must give the
    # bits of numpy and of the 4-D loop (a row given as a strided copy takes that one).
    a = data(np.float32, rows * cols, seed=30).reshape(1, 1, rows, cols)
    row = data(np.float32, cols, seed=31)
    b = np.broadcast_to(row, a.shape)
    assert (NB._row_broadcast(a, b, np.empty_like(a)) is not None) == (rows > 1)
    b_strided = np.broadcast_to(np.repeat(row, 2)[::2], a.shape)
    for code in (C.ADD, C.SUB, C.DIV, C.MAXIMUM):
        out, out_nd = np.full_like(a, np.nan), np.full_like(a, np.nan)
        NB.binary_nd(code, a, b, out)
        NB.binary_nd(code, a, b_strided, out_nd)
        want = np.empty_like(a)
        REF.binary_nd(code, a, b, want)
        assert_match(out, want, what=code)
        assert np.array_equal(out.view(np.int32), out_nd.view(np.int32)), code


# ------------------------------------------------------------ determinism

def determinism_cases():
    """(name, kernel name, args) with sizes above SERIAL_MAX, so the prange path runs."""
    n = 300007
    x = data(np.float32, n, seed=20)
    y = data(np.float32, n, seed=21)
    x4 = data(np.float32, 6 * 32 * 41 * 37, seed=22).reshape(6, 32, 41, 37)
    t4 = x4.transpose(0, 1, 3, 2).copy().transpose(0, 1, 3, 2)
    bias = np.broadcast_to(data(np.float32, 32, seed=23).reshape(1, 32, 1, 1), x4.shape)
    row = np.broadcast_to(data(np.float32, 37, seed=24), x4.shape)     # a Linear layer's bias
    return [
        ("exp", "unary", (C.EXP, x, np.empty_like(x))),
        ("gelu", "unary", (C.GELU_ERF, x, np.empty_like(x))),
        ("add", "binary", (C.ADD, x, y, np.empty_like(x))),
        ("pow", "binary", (C.POW, x, y, np.empty_like(x))),
        ("mul scalar", "binary_scalar", (C.MUL, x, np.float32(0.37), np.empty_like(x))),
        ("axpby", "axpby", (np.float32(0.9), x, np.float32(0.1), y, np.empty_like(x))),
        ("tanh nd", "unary_nd", (C.TANH, t4, np.empty_like(x4))),
        ("bias sub", "binary_nd", (C.SUB, bias, x4, np.empty_like(x4))),
        ("row bias div", "binary_nd", (C.DIV, x4, row, np.empty_like(x4))),
        ("transposed div", "binary_nd", (C.DIV, t4, x4, np.empty_like(x4))),
        ("where", "where_nd", (x4 > 0, t4, bias, np.empty_like(x4))),
        ("copy", "copy_nd", (t4, np.empty(x4.shape, np.float64))),
        ("fill", "fill_nd", (np.empty(x4.shape, np.float32)[:, :, ::-1], np.float32(2.5))),
    ]


def run_with_threads(threads):
    """Outputs of every determinism case run with ``threads`` numba threads."""
    old = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        outs = []
        for _, name, args in determinism_cases():
            getattr(NB, name)(*args)
            outs.append(args[-2] if name == "fill_nd" else args[-1])
        return [np.ascontiguousarray(o).tobytes() for o in outs]
    finally:
        numba.set_num_threads(old)


def test_deterministic_one_vs_two_threads():
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("needs 2 numba threads")
    one, two = run_with_threads(1), run_with_threads(2)
    for (case, _, _), a, b in zip(determinism_cases(), one, two):
        assert a == b, case


def test_deterministic_subprocess_threads():
    script = textwrap.dedent("""
        import numba
        from tests.kernels.test_elementwise import run_with_threads
        assert numba.config.NUMBA_NUM_THREADS == 4
        ref = run_with_threads(1)
        for t in (3, 4):
            assert run_with_threads(t) == ref, t
        print("SAME")
    """)
    env = dict(os.environ, NUMBA_NUM_THREADS="4")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    r = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                       timeout=1200)
    assert r.returncode == 0 and "SAME" in r.stdout, r.stdout + r.stderr


def test_determinism_cases_match_ref():
    # The cases compared across thread counts are themselves correct.
    for case, name, args in determinism_cases()[:4]:
        got, want = run_both(name, *args)
        assert_match(got, want, 4, floor=1e-30,
                     atol=4e-7 * np.abs(args[1]) if case == "gelu" else 0.0, what=case)
