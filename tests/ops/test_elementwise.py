"""Elementwise ops against numpy: operators, unary math, broadcasting up to 6 dims, strides, NaN/inf."""
import operator

import numpy as np
import pytest

import newch

F32 = dict(rtol=2e-6, atol=1e-7)


def check(x, want, dtype=None, **tol):
    """``x`` (a tensor) equals numpy's ``want`` in shape, dtype and value."""
    want = np.asarray(want)
    assert tuple(x.shape) == want.shape, (tuple(x.shape), want.shape)
    if dtype is not None:
        assert x.dtype is dtype, (x.dtype, dtype)
    got = x.numpy()
    if got.dtype.kind == "f":
        np.testing.assert_allclose(got, want, **{**F32, **tol})
    else:
        np.testing.assert_array_equal(got, want)


BINARY = [
    ("add", operator.add, np.add),
    ("sub", operator.sub, np.subtract),
    ("mul", operator.mul, np.multiply),
    ("truediv", operator.truediv, np.true_divide),
    ("floordiv", operator.floordiv, np.floor_divide),
    ("mod", operator.mod, np.mod),
    ("pow", operator.pow, np.power),
    ("eq", operator.eq, np.equal), ("ne", operator.ne, np.not_equal),
    ("lt", operator.lt, np.less), ("le", operator.le, np.less_equal),
    ("gt", operator.gt, np.greater), ("ge", operator.ge, np.greater_equal),
]

SHAPES = [
    ((3, 4), (3, 4)), ((3, 4), (4,)), ((3, 1), (1, 4)), ((2, 3, 4), (3, 1)), ((5,), ()),
    ((), (2, 3)), ((1,), (7,)), ((2, 1, 4), (1, 3, 1)), ((0, 3), (1, 3)), ((4, 0), ()),
]


def operands(rng, sa, sb, dtype):
    a = rng.uniform(0.5, 3.0, sa)
    b = rng.uniform(0.5, 3.0, sb)
    if np.dtype(dtype).kind != "f":
        a, b = np.floor(a * 3) + 1, np.floor(b * 3) + 1
    return a.astype(dtype), b.astype(dtype)


@pytest.mark.parametrize("name, op, ref", BINARY, ids=[b[0] for b in BINARY])
@pytest.mark.parametrize("sa, sb", SHAPES)
def test_binary_float32_broadcast(rng, name, op, ref, sa, sb):
    a, b = operands(rng, sa, sb, np.float32)
    check(op(newch.tensor(a), newch.tensor(b)), ref(a, b), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name, op, ref", BINARY, ids=[b[0] for b in BINARY])
@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.int32, np.uint8])
def test_binary_dtypes(rng, name, op, ref, dtype):
    a, b = operands(rng, (4, 5), (5,), dtype)
    x, y = newch.tensor(a), newch.tensor(b)
    want = ref(a, b)
    if name == "truediv":
        want = want.astype(np.float64 if dtype == np.float64 else np.float32)
    check(op(x, y), want, rtol=1e-12 if dtype == np.float64 else 1e-6)
    assert op(x, y).dtype.np == want.dtype


def test_integer_floordiv_and_mod_follow_python_signs():
    a = np.array([7, -7, 7, -7, 0, 5], np.int64)
    b = np.array([2, 2, -2, -2, 3, 5], np.int64)
    x, y = newch.tensor(a), newch.tensor(b)
    check(x // y, a // b)
    check(x % y, a % b)
    check(newch.fmod(x, y), np.fmod(a, b))
    check(newch.div(x, y, rounding_mode="trunc"), np.trunc(a / b).astype(np.int64), dtype=newch.int64)
    check(newch.div(x, y, rounding_mode="floor"), a // b)


def test_float_floordiv_and_mod_follow_python_signs():
    a = np.array([7.5, -7.5, 7.5, -7.5, 0.0], np.float32)
    b = np.array([2.0, 2.0, -2.0, -2.0, 3.0], np.float32)
    x, y = newch.tensor(a), newch.tensor(b)
    check(x // y, np.floor_divide(a, b))
    check(x % y, np.mod(a, b))
    check(newch.fmod(x, y), np.fmod(a, b))
    check(newch.remainder(x, 2.0), np.mod(a, np.float32(2.0)))


@pytest.mark.parametrize("scalar", [2, 2.5, -3])
def test_reflected_operators(rng, scalar):
    a = rng.uniform(0.5, 2.0, (3, 4)).astype(np.float32)
    x = newch.tensor(a)
    s = np.float32(scalar)
    check(scalar + x, s + a)
    check(scalar - x, s - a)
    check(scalar * x, s * a)
    check(scalar / x, s / a)
    with np.errstate(invalid="ignore"):
        check(scalar ** x, np.power(s, a), rtol=1e-5, equal_nan=True)
    check(scalar // x, np.floor_divide(s, a))
    check(scalar % x, np.mod(s, a))
    check(x - scalar, a - s)
    check(x ** scalar, np.power(a, s), rtol=1e-5)
    check(scalar < x, s < a)
    check(scalar >= x, s >= a)
    check(scalar == x, s == a)


def test_reflected_operators_on_int_tensors():
    a = np.array([1, 2, 3, 4], np.int64)
    x = newch.tensor(a)
    check(2 - x, 2 - a, dtype=newch.int64)
    check(2 / x, 2 / a, dtype=newch.float32)
    check(2 ** x, 2 ** a, dtype=newch.int64)
    check(2.0 ** x, 2.0 ** a, dtype=newch.float32)
    check(2.5 - x, 2.5 - a, dtype=newch.float32)
    check(10 // x, 10 // a, dtype=newch.int64)
    check(10 % x, 10 % a, dtype=newch.int64)
    check(x ** 2, a ** 2, dtype=newch.int64)
    check(x ** 0.5, np.sqrt(a), dtype=newch.float32)


def test_pow_variants(rng):
    a = rng.uniform(0.1, 3.0, (5, 3)).astype(np.float32)
    b = rng.uniform(-2.0, 2.0, (3,)).astype(np.float32)
    x = newch.tensor(a)
    check(newch.pow(x, newch.tensor(b)), np.power(a, b), rtol=1e-5)
    check(x.pow(2), a * a, rtol=1e-6)
    check(x ** 0, np.ones_like(a))
    check(x ** -1, 1 / a, rtol=1e-6)
    check(newch.pow(x, 0.5), np.sqrt(a), rtol=1e-6)
    check(newch.tensor([-8.0]) ** (1 / 3), [np.nan], equal_nan=True)


@pytest.mark.parametrize("fn, ref", [(newch.maximum, np.maximum), (newch.minimum, np.minimum)])
def test_maximum_minimum_propagate_nan(fn, ref):
    a = np.array([1.0, np.nan, 3.0, -np.inf, np.nan], np.float32)
    b = np.array([2.0, 1.0, np.nan, 0.0, np.nan], np.float32)
    check(fn(newch.tensor(a), newch.tensor(b)), ref(a, b), equal_nan=True)
    check(fn(newch.tensor(b), newch.tensor(a)), ref(b, a), equal_nan=True)
    check(fn(newch.tensor([1, 5, 3]), newch.tensor([4, 2, 3])), ref([1, 5, 3], [4, 2, 3]),
          dtype=newch.int64)
    assert fn(newch.tensor([1, 5]), newch.tensor([2.5, 0.5])).dtype is newch.float32


def test_comparisons_with_nan_and_inf():
    a = np.array([np.nan, np.inf, -np.inf, 1.0], np.float32)
    x = newch.tensor(a)
    for op in (operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge):
        check(op(x, x), op(a, a))
        check(op(x, 1.0), op(a, np.float32(1.0)))
    check(newch.isnan(x), np.isnan(a))
    check(newch.isinf(x), np.isinf(a))
    check(newch.isfinite(x), np.isfinite(a))
    check(newch.isinf(newch.tensor([1, 2])), [False, False])


def test_division_by_zero_gives_inf_and_nan():
    x = newch.tensor([1.0, -1.0, 0.0])
    check(x / 0.0, [np.inf, -np.inf, np.nan], equal_nan=True)
    check(x / newch.zeros(3), [np.inf, -np.inf, np.nan], equal_nan=True)
    check(newch.tensor([1, -1, 0]) / 0, [np.inf, -np.inf, np.nan], equal_nan=True)


# -- bitwise and logical ------------------------------------------------------
def test_bitwise_operators_on_ints_and_bools():
    a = np.array([0b1100, 0b1010, -1, 0], np.int64)
    b = np.array([0b1010, 0b0110, 5, 7], np.int64)
    x, y = newch.tensor(a), newch.tensor(b)
    check(x & y, a & b)
    check(x | y, a | b)
    check(x ^ y, a ^ b)
    check(~x, ~a, dtype=newch.int64)
    check(x & 6, a & 6)
    check(6 | x, 6 | a)
    u = np.array([0, 1, 200, 255], np.uint8)
    check(~newch.tensor(u), ~u, dtype=newch.uint8)
    p = np.array([True, True, False, False])
    q = np.array([True, False, True, False])
    bp, bq = newch.tensor(p), newch.tensor(q)
    check(bp & bq, p & q, dtype=newch.bool)
    check(bp | bq, p | q, dtype=newch.bool)
    check(bp ^ bq, p ^ q, dtype=newch.bool)
    check(~bp, ~p, dtype=newch.bool)
    check(bp & True, p & True, dtype=newch.bool)
    i32 = np.array([5, -6], np.int32)
    check(~newch.tensor(i32), ~i32, dtype=newch.int32)


def test_logical_ops_use_truth_values():
    a = np.array([0.0, 2.0, -1.0, 0.0], np.float32)
    b = np.array([0, 0, 3, 4], np.int64)
    x, y = newch.tensor(a), newch.tensor(b)
    check(newch.logical_and(x, y), np.logical_and(a, b), dtype=newch.bool)
    check(newch.logical_or(x, y), np.logical_or(a, b), dtype=newch.bool)
    check(newch.logical_xor(x, y), np.logical_xor(a, b), dtype=newch.bool)
    check(newch.logical_not(x), np.logical_not(a), dtype=newch.bool)
    check(x.logical_not(), np.logical_not(a))
    check(newch.logical_and(x, True), np.logical_and(a, True))


def test_bool_arithmetic_like_torch():
    p = newch.tensor([True, False, True])
    q = newch.tensor([True, True, False])
    check(p + q, [True, True, True], dtype=newch.bool)
    check(p * q, [True, False, False], dtype=newch.bool)
    check(p + 1, [2, 1, 2], dtype=newch.int64)
    check(p * 2.5, [2.5, 0, 2.5], dtype=newch.float32)


# -- unary -----------------------------------------------------------------------
UNARY = [
    ("neg", newch.neg, np.negative, (-3, 3)),
    ("abs", newch.abs, np.abs, (-3, 3)),
    ("exp", newch.exp, np.exp, (-5, 5)),
    ("log", newch.log, np.log, (0.01, 10)),
    ("log1p", newch.log1p, np.log1p, (-0.9, 10)),
    ("sqrt", newch.sqrt, np.sqrt, (0, 10)),
    ("rsqrt", newch.rsqrt, lambda a: 1 / np.sqrt(a), (0.01, 10)),
    ("sin", newch.sin, np.sin, (-6, 6)),
    ("cos", newch.cos, np.cos, (-6, 6)),
    ("tanh", newch.tanh, np.tanh, (-6, 6)),
    ("sigmoid", newch.sigmoid, lambda a: 1 / (1 + np.exp(-a)), (-20, 20)),
    ("relu", newch.relu, lambda a: np.maximum(a, 0), (-3, 3)),
    ("square", newch.square, np.square, (-3, 3)),
    ("reciprocal", newch.reciprocal, np.reciprocal, (0.1, 3)),
    ("expm1", newch.expm1, np.expm1, (-3, 3)),
    ("log2", newch.log2, np.log2, (0.1, 10)),
    ("floor", newch.floor, np.floor, (-3, 3)),
    ("ceil", newch.ceil, np.ceil, (-3, 3)),
    ("trunc", newch.trunc, np.trunc, (-3, 3)),
    ("round", newch.round, np.round, (-3, 3)),
    ("sign", newch.sign, np.sign, (-3, 3)),
]


@pytest.mark.parametrize("name, fn, ref, rng_", UNARY, ids=[u[0] for u in UNARY])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_unary_math(rng, name, fn, ref, rng_, dtype):
    a = rng.uniform(*rng_, (7, 9)).astype(dtype)
    tol = dict(rtol=2e-6, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-13, atol=1e-15)
    check(fn(newch.tensor(a)), ref(a.astype(np.float64)).astype(dtype), **tol)
    check(getattr(newch.tensor(a), name)(), ref(a.astype(np.float64)).astype(dtype), **tol)
    # a transposed, strided input
    s = a.T[::2]
    check(fn(newch.tensor(a).T[::2]), ref(s.astype(np.float64)).astype(dtype), **tol)


def test_unary_on_large_tensor_uses_all_paths(rng):
    a = rng.standard_normal((300, 257)).astype(np.float32)
    x = newch.tensor(a)
    check(newch.tanh(x), np.tanh(a), rtol=1e-6, atol=1e-6)
    check(newch.exp(x.T), np.exp(a.T), rtol=1e-6)
    check(newch.relu(x[:, 1::3]), np.maximum(a[:, 1::3], 0))


def test_unary_special_values():
    a = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -1.0], np.float32)
    x = newch.tensor(a)
    with np.errstate(all="ignore"):
        for fn, ref in [(newch.log, np.log), (newch.sqrt, np.sqrt), (newch.exp, np.exp),
                        (newch.tanh, np.tanh), (newch.abs, np.abs), (newch.neg, np.negative)]:
            check(fn(x), ref(a), equal_nan=True)
        check(newch.sigmoid(x), [0.5, 0.5, 1.0, 0.0, np.nan, 1 / (1 + np.e)], equal_nan=True)
        check(newch.relu(x), [0, 0, np.inf, 0, np.nan, 0], equal_nan=True)
        check(newch.rsqrt(x), 1 / np.sqrt(a), equal_nan=True)
        check(newch.log1p(newch.tensor([-1.0, -2.0])), [-np.inf, np.nan], equal_nan=True)


def test_sigmoid_saturates_without_overflow():
    x = newch.tensor([-1000.0, -100.0, 100.0, 1000.0])
    check(newch.sigmoid(x), [0.0, 0.0, 1.0, 1.0], atol=1e-30)
    x64 = newch.tensor([-800.0, 800.0], dtype=newch.float64)
    check(newch.sigmoid(x64), [0.0, 1.0], atol=1e-300)


def test_unary_on_int_tensors_promotes_like_torch():
    a = np.array([1, 2, 4], np.int64)
    x = newch.tensor(a)
    check(newch.exp(x), np.exp(a).astype(np.float32), dtype=newch.float32, rtol=1e-6)
    check(newch.sqrt(x), np.sqrt(a).astype(np.float32), dtype=newch.float32)
    check(newch.sigmoid(x), 1 / (1 + np.exp(-a)), dtype=newch.float32, rtol=1e-6)
    check(newch.abs(-x), a, dtype=newch.int64)
    check(-x, -a, dtype=newch.int64)
    check(newch.relu(newch.tensor([-1, 2])), [0, 2], dtype=newch.int64)
    check(newch.floor(x), a, dtype=newch.int64)
    check(newch.sqrt(newch.tensor([True, False])), [1.0, 0.0], dtype=newch.float32)


def test_unary_matches_torch(torch, rng):
    a = rng.standard_normal((5, 6)).astype(np.float32)
    x, t = newch.tensor(a), torch.tensor(a)
    for name in ("exp", "tanh", "sigmoid", "relu", "sin", "cos", "abs", "neg", "erf", "atan",
                 "sinh", "cosh", "expm1", "square", "sign"):
        np.testing.assert_allclose(getattr(x, name)().numpy(), getattr(t, name)().numpy(),
                                   rtol=1e-5, atol=1e-6, err_msg=name)
    ap = np.abs(a) + 0.1
    for name in ("log", "log1p", "sqrt", "rsqrt", "log2", "reciprocal"):
        np.testing.assert_allclose(getattr(newch.tensor(ap), name)().numpy(),
                                   getattr(torch.tensor(ap), name)().numpy(), rtol=1e-5, err_msg=name)


# -- clamp and where ----------------------------------------------------------
def test_clamp_variants(rng):
    a = rng.uniform(-3, 3, (4, 5)).astype(np.float32)
    x = newch.tensor(a)
    check(newch.clamp(x, -1, 1), np.clip(a, -1, 1))
    check(x.clamp(min=0.5), np.maximum(a, 0.5))
    check(x.clamp(max=0.5), np.minimum(a, 0.5))
    check(x.clamp_min(0.0), np.maximum(a, 0))
    check(x.clamp_max(0.0), np.minimum(a, 0))
    check(newch.clip(x, -2, 2), np.clip(a, -2, 2))
    lo = rng.uniform(-1, 0, (5,)).astype(np.float32)
    hi = rng.uniform(0, 1, (4, 1)).astype(np.float32)
    check(x.clamp(newch.tensor(lo), newch.tensor(hi)), np.minimum(np.maximum(a, lo), hi))
    i = newch.tensor([-5, 0, 5])
    check(i.clamp(-2, 2), [-2, 0, 2], dtype=newch.int64)
    check(i.clamp(min=0.5), [0.5, 0.5, 5.0], dtype=newch.float32)
    check(newch.tensor([np.nan, 1.0]).clamp(0, 0.5), [np.nan, 0.5], equal_nan=True)


def test_where_broadcasts_and_promotes(rng):
    c = rng.uniform(size=(3, 1, 4)) > 0.5
    a = rng.standard_normal((2, 4)).astype(np.float32)
    b = rng.standard_normal((3, 2, 1)).astype(np.float32)
    check(newch.where(newch.tensor(c), newch.tensor(a), newch.tensor(b)), np.where(c, a, b))
    check(newch.where(newch.tensor(c), newch.tensor(a), 0.0), np.where(c, a, np.float32(0)))
    check(newch.where(newch.tensor(c), 1.0, newch.tensor(b)), np.where(c, np.float32(1), b))
    r = newch.where(newch.tensor([True, False]), newch.tensor([1, 2]), 2.5)
    check(r, [1.0, 2.5], dtype=newch.float32)
    r = newch.where(newch.tensor([True, False]), newch.tensor([1, 2]), newch.tensor([7, 8],
                    dtype=newch.int32))
    check(r, [1, 8], dtype=newch.int64)
    check(newch.where(newch.tensor([1.0, 0.0]) > 0, newch.tensor(3.0), newch.tensor(4.0)),
          [3.0, 4.0])
    x = newch.tensor(a)
    check(x.where(x > 0, -x), np.abs(a))


def test_where_with_two_scalars_takes_their_dtype():
    c = newch.tensor([True, False, True])
    r = newch.where(c, 1.0, 0.0)
    assert r.dtype is newch.float32 and r.tolist() == [1.0, 0.0, 1.0]
    r = newch.where(c, 1, 0)
    assert r.dtype is newch.int64 and r.tolist() == [1, 0, 1]


def test_where_with_one_argument_is_nonzero():
    rows, cols = newch.where(newch.tensor([[0, 1], [1, 0]]))
    assert rows.tolist() == [0, 1] and cols.tolist() == [1, 0]


def test_lerp_addcmul_addcdiv(rng):
    a, b, c = (rng.uniform(0.5, 2, (3, 4)).astype(np.float32) for _ in range(3))
    x, y, z = newch.tensor(a), newch.tensor(b), newch.tensor(c)
    check(newch.lerp(x, y, 0.25), a + 0.25 * (b - a))
    check(newch.lerp(x, y, z), a + c * (b - a), rtol=1e-5)
    check(newch.addcmul(x, y, z, value=0.5), a + 0.5 * b * c, rtol=1e-5)
    check(newch.addcdiv(x, y, z, value=-2), a - 2 * b / c, rtol=1e-5)


# -- broadcasting, strides, sizes ---------------------------------------------
BIG_SHAPES = [
    ((2, 1, 3, 1, 2, 3), (1, 4, 1, 5, 1, 3)),
    ((2, 3, 1, 4, 1, 2), (3, 2, 4, 3, 2)),
    ((1, 2, 1, 2, 1, 2), (2, 1, 2, 1, 2, 1)),
    ((3, 1, 2, 1, 4), (1, 3, 1, 2, 1)),
    ((2, 2, 2, 2, 2, 2), (2, 2, 2, 2, 2, 2)),
    ((5, 1, 1, 1, 1, 6), (1, 1, 1, 1, 1, 1)),
]


@pytest.mark.parametrize("sa, sb", BIG_SHAPES)
def test_broadcast_up_to_6_dims(rng, sa, sb):
    a = rng.standard_normal(sa).astype(np.float32)
    b = rng.standard_normal(sb).astype(np.float32)
    check(newch.tensor(a) + newch.tensor(b), a + b)
    check(newch.tensor(a) * newch.tensor(b), a * b)
    check(newch.maximum(newch.tensor(a), newch.tensor(b)), np.maximum(a, b))
    check(newch.tensor(a) < newch.tensor(b), a < b)


def test_6_dim_permuted_inputs(rng):
    a = rng.standard_normal((2, 3, 4, 2, 3, 2)).astype(np.float32)
    b = rng.standard_normal((3, 2, 3, 4, 2, 2)).astype(np.float32)
    pa = (5, 0, 4, 1, 3, 2)
    pb = (4, 1, 2, 0, 5, 3)
    x = newch.tensor(a).permute(pa)
    y = newch.tensor(b).permute(pb)[:, :, :, :, :, :]
    want = a.transpose(pa) - b.transpose(pb)
    check(x - y, want)
    check(newch.exp(x), np.exp(a.transpose(pa)), rtol=1e-6)
    check(x.contiguous(), a.transpose(pa))
    check(newch.where(x > 0, x, y), np.where(a.transpose(pa) > 0, a.transpose(pa), b.transpose(pb)))


def test_non_contiguous_and_transposed_operands(rng):
    a = rng.standard_normal((6, 8)).astype(np.float32)
    b = rng.standard_normal((8, 6)).astype(np.float32)
    x, y = newch.tensor(a), newch.tensor(b)
    check(x + y.T, a + b.T)
    check(x[:, ::2] * y.T[:, 1::2], a[:, ::2] * b.T[:, 1::2])
    check(x[::3, 1:7:2] - 1.5, a[::3, 1:7:2] - np.float32(1.5))
    check(2.0 / x.T, np.float32(2.0) / a.T)
    check(x.T[2:, :] ** 2, a.T[2:, :] ** 2)
    check(x.expand(2, 6, 8) + y.T, np.broadcast_to(a, (2, 6, 8)) + b.T)


def test_large_operands_take_the_parallel_path(rng):
    a = rng.standard_normal((400, 300)).astype(np.float32)
    b = rng.standard_normal((300,)).astype(np.float32)
    x, y = newch.tensor(a), newch.tensor(b)
    check(x + y, a + b)
    check(x * 3.0, a * np.float32(3.0))
    check(x.T - y[:, None], a.T - b[:, None])
    check(newch.tensor(a) + newch.tensor(a), a + a)
    check((x > 0) & (x < 1), (a > 0) & (a < 1))


def test_zero_size_tensors():
    z = newch.zeros(0, 3)
    check(z + newch.ones(1, 3), np.zeros((0, 3)))
    check(z + 1, np.zeros((0, 3)))
    check(newch.exp(z), np.zeros((0, 3)))
    check(newch.zeros(2, 0) * newch.zeros(3, 1, 1), np.zeros((3, 2, 0)))
    check(newch.zeros(0) < 1, np.zeros(0, bool))
    check(newch.where(newch.zeros(0, dtype=newch.bool), 1.0, 2.0), np.zeros(0))


def test_zero_dim_tensors():
    a, b = newch.tensor(2.0), newch.tensor(3.0)
    r = a * b
    assert r.shape == () and r.item() == 6.0
    check(a + newch.tensor([1.0, 2.0]), [3.0, 4.0])
    check(newch.exp(a), np.exp(np.float32(2.0)))
    assert (a < b).shape == () and (a < b).item() is True
    assert (-a).item() == -2.0
    assert (2 - a).item() == 0.0 and (a ** 2).item() == 4.0


def test_broadcast_mismatch_names_the_op():
    with pytest.raises(ValueError, match=r"add.*\(2, 3\).*\(4,\)"):
        newch.ones(2, 3) + newch.ones(4)
    with pytest.raises(ValueError, match="where"):
        newch.where(newch.ones(3, dtype=newch.bool), newch.ones(2), 0.0)


def test_int64_arithmetic_is_exact_beyond_float_precision():
    big = 2 ** 62 + 3
    x = newch.tensor([big, -big])
    assert (x + 1).tolist() == [big + 1, -big + 1]
    assert (x // 7).tolist() == [big // 7, -big // 7]
    assert (x % 7).tolist() == [big % 7, -big % 7]
    assert (x * 1).tolist() == [big, -big]
    assert newch.maximum(x, newch.tensor([big - 1, 0])).tolist() == [big, 0]
    assert (x == big).tolist() == [True, False]


def test_round_is_half_to_even_like_torch():
    x = newch.tensor([0.5, 1.5, 2.5, -0.5, -1.5, 0.49999997])
    check(newch.round(x), np.round(x.numpy()))
    assert newch.round(newch.tensor([1.2345]), decimals=2).item() == pytest.approx(1.23)


def test_log1p_and_expm1_are_accurate_near_zero():
    x = newch.tensor([1e-10, -1e-10, 1e-30])
    check(newch.log1p(x), np.log1p(np.array([1e-10, -1e-10, 1e-30])), rtol=1e-6, atol=0)
    check(newch.expm1(x), np.expm1(np.array([1e-10, -1e-10, 1e-30])), rtol=1e-6, atol=0)


def test_pow_of_bools_is_bool_like_torch(torch):
    b = [False, True, False, True]
    e = [False, False, True, True]
    for s in (False, True):
        got = newch.tensor(b) ** s
        assert got.dtype is newch.bool
        assert got.tolist() == (torch.tensor(b) ** s).tolist()
    assert (newch.tensor(True) ** False).item() is True
    assert (newch.tensor(b) ** 2).tolist() == [0, 1, 0, 1]
    for f in (lambda: newch.tensor(b) ** newch.tensor(e), lambda: False ** newch.tensor(e)):
        with pytest.raises(TypeError, match="pow"):     # as torch: no bool tensor exponent
            f()


def test_pow_of_negative_bases_and_zero():
    x = newch.tensor([-2.0, -2.0, 0.0, 0.0, -8.0])
    e = newch.tensor([3.0, 2.0, 0.0, -1.0, 1 / 3])
    check(x ** e, [-8.0, 4.0, 1.0, np.inf, np.nan], equal_nan=True)
    check(newch.tensor([-2.0]) ** 3, [-8.0])
    check((-2.0) ** newch.tensor([3.0, 2.0]), [-8.0, 4.0])
    check(newch.tensor([-3, 2]) ** 3, [-27, 8], dtype=newch.int64)


def test_in_place_into_a_6_dim_permuted_view(rng):
    a = rng.standard_normal((2, 3, 2, 3, 2, 3)).astype(np.float32)
    b = rng.standard_normal((2, 3, 3)).astype(np.float32)
    p = (5, 2, 0, 4, 1, 3)
    x = newch.tensor(a)
    x.permute(p).add_(newch.tensor(b))
    want = a.copy()
    want.transpose(p)[...] += b
    check(x, want)
