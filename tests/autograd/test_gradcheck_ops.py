"""Every differentiable op of newch.ops: autograd's gradient vs float64 central differences.

Inputs are chosen away from the points where an op is not differentiable
(kinks of abs/relu/clamp, ties of max/min, jumps of remainder), so the numeric
derivative is the true one. Broadcasting cases check that gradients are summed
back to each input's shape; view and indexing cases that they are scattered back.
"""
import numpy as np
import pytest

import newch

from .gradcheck import gradcheck

R = np.random.default_rng(20240601)


def u(*shape, lo=-1.0, hi=1.0):
    """Uniform float64 values in [lo, hi)."""
    return R.uniform(lo, hi, size=shape)


def away(*shape, gap=0.3, hi=1.5):
    """Values with |v| in [gap, hi): away from 0 (kinks, poles)."""
    return R.uniform(gap, hi, size=shape) * R.choice([-1.0, 1.0], size=shape)


def pos(*shape, lo=0.5, hi=2.0):
    """Positive values (domain of log, sqrt, ...)."""
    return R.uniform(lo, hi, size=shape)


def distinct(*shape):
    """No two values closer than 0.1: no ties for max/min/sort-like ops."""
    n = int(np.prod(shape))
    return (R.permutation(n) * 0.37 - n * 0.15 + R.uniform(0, 0.05, n)).reshape(shape)


def L(*values):
    """A long index tensor."""
    return newch.tensor(list(values), dtype=newch.int64)


def case(name, fn, *inputs, **kw):
    return pytest.param(fn, inputs, kw, id=name)


_B = distinct(2, 3)
_TIE_FREE_OTHER = _B[0] + away(3, gap=0.2)     # maximum/minimum: never equal to _B

ARITH = [
    case("add", lambda a, b: a + b, u(2, 3), u(2, 3)),
    case("add_broadcast", lambda a, b: newch.add(a, b), u(2, 3), u(3)),
    case("add_broadcast_both", lambda a, b: a + b, u(2, 1), u(1, 3)),
    case("add_alpha", lambda a, b: newch.add(a, b, alpha=2.5), u(2, 3), u(2, 1)),
    case("add_scalar", lambda a: a + 2.0, u(2, 3)),
    case("radd_scalar", lambda a: 2.0 + a, u(2, 3)),
    case("sub", lambda a, b: a - b, u(2, 3), u(3)),
    case("sub_alpha", lambda a, b: newch.sub(a, b, alpha=-1.5), u(2, 3), u(1, 3)),
    case("rsub_scalar", lambda a: 2.0 - a, u(2, 3)),
    case("mul", lambda a, b: a * b, u(2, 3), u(2, 3)),
    case("mul_broadcast", lambda a, b: newch.mul(a, b), u(4, 1, 3), u(2, 1)),
    case("mul_self", lambda a: a * a, u(3)),
    case("rmul_scalar", lambda a: 3.0 * a, u(2, 3)),
    case("div", lambda a, b: a / b, u(2, 3), away(2, 3)),
    case("div_broadcast", lambda a, b: newch.div(a, b), u(2, 3), away(3)),
    case("div_scalar", lambda a: a / 4.0, u(2, 3)),
    # quotients stay 0.1 away from integers: the rounded division is flat there (zero gradient)
    case("div_floor", lambda a, b: newch.div(a, b, rounding_mode="floor") * a,
         np.array([2.3, -2.3, 5.6]), np.array([1.5, 1.5, -2.0])),
    case("div_trunc", lambda a, b: a.div(b, rounding_mode="trunc") * b,
         np.array([2.3, -2.3, 5.6]), np.array([1.5, 1.5, -2.0])),
    case("rdiv_scalar", lambda a: 2.0 / a, away(2, 3)),
    case("pow_tensor", lambda a, b: a ** b, pos(2, 3), u(2, 3)),
    case("pow_broadcast", lambda a, b: newch.pow(a, b), pos(2, 3), u(3)),
    case("pow_scalar_int", lambda a: a ** 3, u(2, 3)),
    case("pow_scalar_float", lambda a: a ** 2.5, pos(2, 3)),
    case("pow_scalar_negative", lambda a: a ** -1.5, pos(2, 3)),
    case("pow_scalar_zero", lambda a: a ** 0 * a, u(2, 3)),
    case("rpow_scalar", lambda a: 2.0 ** a, u(2, 3)),
    case("pow_scalar_base_fn", lambda a: newch.pow(3.0, a), u(2, 3)),
    case("maximum", lambda a, b: newch.maximum(a, b), distinct(2, 3), distinct(2, 3) + 0.05),
    case("maximum_broadcast", lambda a, b: newch.maximum(a, b), _B, _TIE_FREE_OTHER),
    case("minimum", lambda a, b: newch.minimum(a, b), distinct(2, 3), distinct(2, 3) + 0.05),
    case("minimum_broadcast", lambda a, b: newch.minimum(a, b), _B, _TIE_FREE_OTHER),
    case("max_binary", lambda a, b: newch.max(a, b), distinct(2, 3), distinct(2, 3) + 0.05),
    case("min_binary", lambda a, b: a.min(b), distinct(2, 3), distinct(2, 3) + 0.05),
    case("atan2", lambda a, b: newch.atan2(a, b), away(2, 3), away(2, 3)),
    case("atan2_broadcast", lambda a, b: a.atan2(b), away(2, 3), away(3)),
    # a / b stays at least 0.1 away from an integer: no jump of remainder/fmod nearby
    case("remainder", lambda a, b: newch.remainder(a, b),
         np.array([[2.3, -2.3, 5.6], [-0.4, 0.7, 7.2]]), np.array([[1.5, 1.5, -2.0], [1.5, -1.0, 3.0]])),
    case("remainder_broadcast", lambda a, b: a % b, np.array([[2.3, -2.3, 5.5], [-0.4, 0.7, 7.2]]),
         np.array([1.5, -1.0, 2.0])),
    case("remainder_scalar", lambda a: a % 1.5, np.array([2.3, -2.3, 5.6, -0.4])),
    case("fmod", lambda a, b: newch.fmod(a, b),
         np.array([[2.3, -2.3, 5.6], [-0.4, 0.7, 7.2]]), np.array([[1.5, 1.5, -2.0], [1.5, -1.0, 3.0]])),
    case("fmod_scalar", lambda a: a.fmod(1.5), np.array([2.3, -2.3, 5.6, -0.4])),
]

UNARY = [
    case("neg", lambda a: -a, u(2, 3)),
    case("neg_fn", lambda a: newch.neg(a), u(2, 3)),
    case("abs", lambda a: a.abs(), away(2, 3)),
    case("exp", lambda a: a.exp(), u(2, 3)),
    case("expm1", lambda a: a.expm1(), u(2, 3)),
    case("exp2", lambda a: a.exp2(), u(2, 3)),
    case("log", lambda a: a.log(), pos(2, 3)),
    case("log1p", lambda a: a.log1p(), u(2, 3, lo=-0.5)),
    case("log2", lambda a: a.log2(), pos(2, 3)),
    case("sqrt", lambda a: a.sqrt(), pos(2, 3)),
    case("rsqrt", lambda a: a.rsqrt(), pos(2, 3)),
    case("sin", lambda a: a.sin(), u(2, 3, lo=-3, hi=3)),
    case("cos", lambda a: a.cos(), u(2, 3, lo=-3, hi=3)),
    case("tan", lambda a: a.tan(), u(2, 3)),
    case("tanh", lambda a: a.tanh(), u(2, 3, lo=-2, hi=2)),
    case("sigmoid", lambda a: a.sigmoid(), u(2, 3, lo=-3, hi=3)),
    case("relu", lambda a: a.relu(), away(2, 3, gap=0.1)),
    case("square", lambda a: a.square(), u(2, 3)),
    case("reciprocal", lambda a: a.reciprocal(), away(2, 3)),
    case("asin", lambda a: a.asin(), u(2, 3, lo=-0.9, hi=0.9)),
    case("acos", lambda a: a.acos(), u(2, 3, lo=-0.9, hi=0.9)),
    case("atan", lambda a: a.atan(), u(2, 3, lo=-2, hi=2)),
    case("sinh", lambda a: a.sinh(), u(2, 3)),
    case("cosh", lambda a: a.cosh(), u(2, 3)),
    case("erf", lambda a: a.erf(), u(2, 3, lo=-2, hi=2)),
    case("silu", lambda a: newch.silu(a), u(2, 3, lo=-3, hi=3)),
    case("unary_on_strided_view", lambda a: a.t().exp(), u(2, 3)),
    case("unary_0d", lambda a: a.tanh(), np.array(0.3)),
]

REDUCE = [
    case("sum_all", lambda a: a.sum(), u(2, 3)),
    case("sum_dim", lambda a: a.sum(1), u(2, 3)),
    case("sum_dim_neg_keepdim", lambda a: a.sum(-2, keepdim=True), u(2, 3)),
    case("sum_dims_tuple", lambda a: newch.sum(a, (0, 2)), u(2, 3, 2)),
    case("sum_dims_tuple_keepdim", lambda a: a.sum((0, 2), keepdim=True), u(2, 3, 2)),
    case("sum_0d", lambda a: a.sum(), np.array(0.7)),
    case("mean_all", lambda a: a.mean(), u(2, 3)),
    case("mean_dim", lambda a: a.mean(0), u(2, 3)),
    case("mean_dims_keepdim", lambda a: a.mean((1, 2), keepdim=True), u(2, 3, 2)),
    case("var_all", lambda a: a.var(), u(2, 3)),
    case("var_dim", lambda a: a.var(1), u(2, 4)),
    case("var_dim_keepdim_biased", lambda a: a.var(0, keepdim=True, correction=0), u(3, 2)),
    case("var_dims_tuple", lambda a: a.var((0, 2)), u(2, 3, 2)),
    case("var_unbiased_false", lambda a: newch.var(a, 1, unbiased=False), u(2, 4)),
    case("std_all", lambda a: a.std(), u(2, 3)),
    case("std_dim", lambda a: a.std(1), u(2, 4)),
    case("std_dim_keepdim_biased", lambda a: newch.std(a, 0, keepdim=True, correction=0), u(3, 2)),
    case("prod_all", lambda a: a.prod(), away(2, 3)),
    case("prod_dim", lambda a: a.prod(1), away(2, 3)),
    case("prod_dim_keepdim", lambda a: a.prod(0, keepdim=True), away(3, 2)),
    # prod is a polynomial: differentiable at 0 too, where out / x cannot be used
    case("prod_with_one_zero", lambda a: a.prod(), np.array([[1.5, 0.0, -2.0], [0.7, 1.1, -0.9]])),
    case("prod_with_two_zeros", lambda a: a.prod(), np.array([0.0, 1.5, 0.0, -2.0])),
    case("prod_dim_with_zero", lambda a: a.prod(1), np.array([[1.5, 0.0, -2.0], [0.7, 1.1, -0.9]])),
    case("amax_all", lambda a: a.amax(), distinct(2, 3)),
    case("amax_dim", lambda a: a.amax(1), distinct(2, 3)),
    case("amax_dims_keepdim", lambda a: newch.amax(a, (0, 2), keepdim=True), distinct(2, 3, 2)),
    case("amin_all", lambda a: a.amin(), distinct(2, 3)),
    case("amin_dim", lambda a: newch.amin(a, 0), distinct(2, 3)),
    case("max_all", lambda a: a.max(), distinct(2, 3)),
    case("min_all", lambda a: newch.min(a), distinct(2, 3)),
    case("max_dim", lambda a: a.max(1).values, distinct(2, 3)),
    case("max_dim_keepdim", lambda a: newch.max(a, 0, keepdim=True)[0], distinct(2, 3)),
    case("max_dim_neg", lambda a: a.max(-1)[0], distinct(2, 2, 3)),
    case("max_dim_of_0d", lambda a: a.max(0)[0] * 3.0, np.array(0.4)),
    case("max_dim_of_1d", lambda a: newch.max(a, 0).values, distinct(4)),
    case("max_dim_of_permuted", lambda a: a.permute(2, 0, 1).max(1)[0], distinct(2, 3, 4)),
    case("min_dim_of_transposed", lambda a: a.t().min(0).values, distinct(3, 4)),
    case("amax_of_permuted", lambda a: a.permute(2, 0, 1).amax(1), distinct(2, 3, 4)),
    case("min_dim", lambda a: a.min(1).values, distinct(2, 3)),
    case("min_dim_keepdim", lambda a: a.min(0, keepdim=True).values, distinct(3, 2)),
    case("logsumexp_dim", lambda a: a.logsumexp(1), u(2, 3, lo=-2, hi=2)),
    case("logsumexp_dim_keepdim", lambda a: newch.logsumexp(a, 0, keepdim=True), u(2, 3)),
    case("logsumexp_dims_tuple", lambda a: a.logsumexp((0, 1)), u(2, 3)),
    case("logsumexp_large", lambda a: a.logsumexp(-1), u(2, 3) + 500.0),
]

MATMUL = [
    case("mm", lambda a, b: newch.mm(a, b), u(2, 3), u(3, 4)),
    case("matmul_2d", lambda a, b: a @ b, u(3, 2), u(2, 2)),
    case("matmul_transposed_operands", lambda a, b: a.t() @ b.t(), u(3, 2), u(4, 3)),
    case("matmul_1d_2d", lambda a, b: a @ b, u(3), u(3, 4)),
    case("matmul_2d_1d", lambda a, b: newch.matmul(a, b), u(2, 3), u(3)),
    case("matmul_1d_1d", lambda a, b: a @ b, u(4), u(4)),
    case("bmm", lambda a, b: newch.bmm(a, b), u(2, 2, 3), u(2, 3, 2)),
    case("matmul_3d_2d", lambda a, b: a @ b, u(2, 2, 3), u(3, 2)),
    case("matmul_2d_3d", lambda a, b: a @ b, u(2, 3), u(2, 3, 2)),
    case("matmul_batch_broadcast", lambda a, b: a @ b, u(2, 1, 2, 3), u(3, 3, 2)),
    case("matmul_1d_3d", lambda a, b: a @ b, u(3), u(2, 3, 2)),
    case("matmul_3d_1d", lambda a, b: a.matmul(b), u(2, 2, 3), u(3)),
]

SHAPE = [
    case("reshape", lambda a: a.reshape(3, 2) * newch.arange(6.0, dtype=newch.float64).reshape(3, 2),
         u(2, 3)),
    case("reshape_infer", lambda a: newch.reshape(a, (-1,)), u(2, 3)),
    case("reshape_copy_of_transposed", lambda a: a.t().reshape(6), u(2, 3)),
    case("view", lambda a: a.view(6), u(2, 3)),
    case("view_as", lambda a, b: a.view_as(b) * b, u(2, 3), u(3, 2)),
    case("flatten", lambda a: a.flatten(), u(2, 3, 2)),
    case("flatten_range", lambda a: a.flatten(1, 2), u(2, 3, 2)),
    case("squeeze_all", lambda a: a.squeeze(), u(2, 1, 3, 1)),
    case("squeeze_dim", lambda a: a.squeeze(1), u(2, 1, 3)),
    case("unsqueeze", lambda a: a.unsqueeze(1), u(2, 3)),
    case("unsqueeze_neg", lambda a: a.unsqueeze(-1), u(2, 3)),
    case("permute", lambda a: a.permute(2, 0, 1), u(2, 3, 2)),
    case("permute_tuple", lambda a: newch.permute(a, (1, 2, 0)), u(2, 3, 2)),
    case("transpose", lambda a: a.transpose(0, 2), u(2, 3, 2)),
    case("transpose_neg", lambda a: newch.transpose(a, -1, -2), u(2, 3)),
    case("t", lambda a: a.t(), u(2, 3)),
    case("T", lambda a: a.T, u(2, 3)),
    case("expand", lambda a: a.expand(2, 3), u(1, 3)),
    case("expand_new_dims", lambda a: a.expand(4, 2, 3), u(2, 1)),
    case("expand_keep_minus_one", lambda a: a.expand(3, -1), u(1, 2)),
    case("expand_as", lambda a, b: a.expand_as(b) * b, u(3, 1), u(3, 2)),
    case("clone", lambda a: a.clone(), u(2, 3)),
    case("contiguous_of_transposed", lambda a: a.t().contiguous(), u(2, 3)),
    case("contiguous_noop", lambda a: a.contiguous() * 2.0, u(2, 3)),
    case("movedim", lambda a: newch.movedim(a, 0, 2), u(2, 3, 2)),
    case("unflatten", lambda a: a.unflatten(1, (2, 3)), u(2, 6)),
    case("view_then_op_then_view", lambda a: (a.view(3, 2).exp() * 2).view(6), u(2, 3)),
]

INDEXING = [
    case("getitem_int", lambda a: a[1], u(3, 2)),
    case("getitem_neg_int", lambda a: a[-1, 0], u(3, 2)),
    case("getitem_slice", lambda a: a[1:, :2], u(3, 3)),
    case("getitem_step", lambda a: a[::2], u(5, 2)),
    case("getitem_none_ellipsis", lambda a: a[None, ..., 1], u(2, 3)),
    case("getitem_int_tensor", lambda a: a[L(2, 0, 2)], u(3, 2)),
    case("getitem_list", lambda a: a[[0, 2, 2]], u(3, 2)),
    case("getitem_negative_int_tensor", lambda a: a[L(-1, 0, -1)], u(3, 2)),
    case("getitem_int_tensor_2d_index", lambda a: a[L(0, 2, 1, 1).reshape(2, 2)], u(3, 2)),
    case("getitem_bool_mask_full", lambda a: a[newch.tensor([[True, False], [False, True], [True, True]])],
         u(3, 2)),
    case("getitem_bool_mask_rows", lambda a: a[newch.tensor([True, False, True])], u(3, 2)),
    case("getitem_two_index_arrays", lambda a: a[L(0, 2, 2), L(1, 0, 0)], u(3, 2)),
    case("getitem_slice_and_array", lambda a: a[:, L(2, 0, 2)], u(2, 3)),
    case("getitem_of_broadcast_result", lambda a, b: (a + b)[L(1, 1)], u(2, 3), u(3)),
    case("select", lambda a: a.select(1, 2), u(2, 3)),
    case("index_select_dim0", lambda a: newch.index_select(a, 0, L(2, 0, 2)), u(3, 2)),
    case("index_select_dim1", lambda a: a.index_select(1, L(1, 1, 0)), u(2, 3)),
    case("index_select_dim1_of_3d", lambda a: a.index_select(1, L(2, 0)), u(2, 3, 2)),
    case("gather_dim1", lambda a: newch.gather(a, 1, L(0, 0, 2, 1, 1, 1).reshape(2, 3)), u(2, 3)),
    case("gather_dim0", lambda a: a.gather(0, L(1, 0, 1, 1).reshape(2, 2)), u(2, 2)),
    case("gather_smaller_index", lambda a: a.gather(1, L(2, 2, 0, 1).reshape(2, 2)), u(3, 3)),
    case("masked_select", lambda a: newch.masked_select(a, newch.tensor([[True, False, True],
                                                                         [False, False, True]])), u(2, 3)),
    case("masked_select_broadcast_mask", lambda a: a.masked_select(newch.tensor([True, False, True])),
         u(2, 3)),
    case("cat_dim0", lambda a, b, c: newch.cat([a, b, c]), u(1, 3), u(2, 3), u(1, 3)),
    case("cat_dim1", lambda a, b: newch.cat((a, b), dim=1), u(2, 1), u(2, 3)),
    case("cat_neg_dim", lambda a, b: newch.cat([a, b], -1), u(2, 2), u(2, 1)),
    case("cat_same_tensor_twice", lambda a: newch.cat([a, a * 2.0]), u(2, 2)),
    case("stack_dim0", lambda a, b: newch.stack([a, b]), u(2, 3), u(2, 3)),
    case("stack_dim_last", lambda a, b, c: newch.stack((a, b, c), dim=-1), u(2), u(2), u(2)),
    case("split_int", lambda a: newch.split(a, 2), u(5, 2)),
    case("split_sizes_dim1", lambda a: a.split([1, 3], dim=1), u(2, 4)),
    case("chunk", lambda a: a.chunk(3, 1), u(2, 5)),
    case("narrow", lambda a: a.narrow(1, 1, 2), u(2, 4)),
    case("narrow_neg_start", lambda a: newch.narrow(a, 0, -2, 2), u(3, 2)),
    case("unbind", lambda a: a.unbind(1), u(2, 3)),
    case("unbind_used_twice", lambda a: [p * q for p, q in zip(a.unbind(0), reversed(a.unbind(0)))],
         u(3, 2)),
    case("scatter_add", lambda a, s: newch.scatter_add(a, 1, L(0, 2, 0, 1, 1, 1).reshape(2, 3), s),
         u(2, 3), u(2, 3)),
]


def _setitem_int(x, v):
    y = x * 1.5
    y[1] = v * 2.0
    return y


def _setitem_slice_broadcast(x, v):
    y = x.sin()
    y[:, 1:] = v
    return y


def _setitem_mask(x):
    y = x * 2.0
    y[x > 0] = 0.0
    return y


def _setitem_index_tensor(x, v):
    y = x + 0.0
    y[L(2, 0)] = v.sin()
    return y


def _setitem_into_constant(v):
    y = newch.zeros(2, 3, dtype=newch.float64)
    y[:, 0] = v
    return y * 3.0


def _setitem_value_with_leading_ones(x, v):
    y = x * 1.0
    y[0] = v            # v is (1, 3): numpy drops the leading 1
    return y


def _setitem_then_more_ops(x, v):
    y = x * x
    y[0, 1] = v[0]
    return (y * y).sum(0)


SETITEM = [
    case("setitem_int", _setitem_int, u(3, 2), u(2)),
    case("setitem_slice_broadcast", _setitem_slice_broadcast, u(2, 3), u(2)),
    case("setitem_bool_mask", _setitem_mask, away(2, 3, gap=0.1)),
    case("setitem_index_tensor", _setitem_index_tensor, u(3, 2), u(2, 2)),
    case("setitem_into_constant", _setitem_into_constant, u(2)),
    case("setitem_then_more_ops", _setitem_then_more_ops, u(2, 3), u(2)),
    case("setitem_value_with_leading_ones", _setitem_value_with_leading_ones, u(2, 3), u(1, 3)),
]

_COND = np.array([[True, False, True], [False, False, True]])
_X_AWAY_FROM_BOUNDS = np.array([[-1.3, -0.45, 0.1], [0.35, 0.8, 1.7]])

SELECT = [
    case("where", lambda a, b: newch.where(newch.tensor(_COND), a, b), u(2, 3), u(2, 3)),
    case("where_broadcast", lambda a, b: newch.where(newch.tensor([True, False, True]), a, b),
         u(2, 3), u(2, 1)),
    case("where_scalar_other", lambda a: newch.where(newch.tensor(_COND), a, 0.5), u(2, 3)),
    case("where_scalar_input", lambda b: newch.where(newch.tensor(_COND), -1.0, b), u(2, 3)),
    case("where_method", lambda a, b: a.where(newch.tensor(_COND), b), u(2, 3), u(3)),
    case("clamp_both", lambda a: a.clamp(-0.5, 0.5), _X_AWAY_FROM_BOUNDS),
    case("clamp_min_only", lambda a: newch.clamp(a, min=0.2), _X_AWAY_FROM_BOUNDS),
    case("clamp_max_only", lambda a: a.clamp(max=0.2), _X_AWAY_FROM_BOUNDS),
    case("clip", lambda a: newch.clip(a, -0.5, 0.5), _X_AWAY_FROM_BOUNDS),
    case("clamp_min_fn", lambda a: a.clamp_min(0.2), _X_AWAY_FROM_BOUNDS),
    case("clamp_max_fn", lambda a: newch.clamp_max(a, 0.2), _X_AWAY_FROM_BOUNDS),
    case("clamp_tensor_bounds", lambda a, lo, hi: a.clamp(lo, hi), _X_AWAY_FROM_BOUNDS,
         np.array([-0.9, 0.0, 0.2]), np.array([[0.05], [1.2]])),
    case("clamp_tensor_min", lambda a, lo: newch.clamp(a, min=lo), _X_AWAY_FROM_BOUNDS,
         np.array([[-0.2], [0.5]])),
    case("clamp_tensor_max", lambda a, hi: a.clamp(max=hi), _X_AWAY_FROM_BOUNDS, np.array([0.0, 0.5, 1.0])),
    case("masked_fill", lambda a: a.masked_fill(newch.tensor(_COND), 2.0), u(2, 3)),
    case("masked_fill_broadcast", lambda a: newch.masked_fill(a, newch.tensor([False, True, False]), -1.0),
         u(2, 3)),
    case("lerp_scalar_weight", lambda a, b: newch.lerp(a, b, 0.3), u(2, 3), u(2, 3)),
    case("lerp_tensor_weight", lambda a, b, w: a.lerp(b, w), u(2, 3), u(3), u(2, 3)),
    case("addcmul", lambda a, b, c: newch.addcmul(a, b, c, value=0.5), u(2, 3), u(2, 3), u(3)),
    case("addcdiv", lambda a, b, c: a.addcdiv(b, c, value=-2.0), u(2, 3), u(2, 1), away(2, 3)),
]

ACTIVATION = [
    case("softmax", lambda a: newch.softmax(a, 1), u(2, 3, lo=-2, hi=2)),
    case("softmax_dim0", lambda a: a.softmax(0), u(3, 2)),
    case("log_softmax", lambda a: newch.log_softmax(a, -1), u(2, 3, lo=-2, hi=2)),
    case("log_softmax_3d_mid", lambda a: newch.log_softmax(a, 1), u(2, 3, 2)),
    case("gelu", lambda a: newch.gelu(a), u(2, 3, lo=-3, hi=3)),
    case("gelu_tanh", lambda a: newch.gelu(a, approximate="tanh"), u(2, 3, lo=-3, hi=3)),
    case("elu", lambda a: newch.elu(a), away(2, 3, gap=0.1)),
    case("elu_alpha", lambda a: newch.elu(a, alpha=0.5), away(2, 3, gap=0.1)),
    case("leaky_relu", lambda a: newch.leaky_relu(a, 0.2), away(2, 3, gap=0.1)),
    # piecewise-constant ops: zero gradient away from their jumps
    case("sign", lambda a: a.sign() * a, away(2, 3, gap=0.1)),
    case("floor_ceil_round_trunc", lambda a: (a.floor() + a.ceil() + a.round() + a.trunc()) * a,
         np.array([0.3, -1.2, 2.6, -0.7])),
    case("nansum", lambda a: a.nansum(1), u(2, 3)),
    case("type_as", lambda a, b: a.type_as(b) * b, u(2, 3), u(2, 3)),
]

COMPOSITE = [
    case("softmax_like", lambda a: (a - a.logsumexp(1, keepdim=True)).exp(), u(2, 3)),
    case("mlp", lambda x, w, b: ((x @ w + b).tanh() * 2.0).sum(1), u(4, 3), u(3, 2), u(2)),
    case("shared_subexpression", lambda a: (a.exp() * a.sin() + a.exp()).sum(), u(3)),
    case("normalise", lambda a: (a - a.mean(0)) / (a.var(0) + 1e-3).sqrt(), u(4, 2)),
]

ALL = ARITH + UNARY + REDUCE + MATMUL + SHAPE + INDEXING + SETITEM + SELECT + ACTIVATION + COMPOSITE


@pytest.mark.parametrize("fn, inputs, kw", ALL)
def test_gradient_matches_finite_differences(fn, inputs, kw):
    gradcheck(fn, *inputs, **kw)


def test_to_float32_and_back_passes_the_gradient_through():
    # float32 rounding makes tiny differences useless here: check the exact identity instead
    x = newch.tensor(u(2, 3), requires_grad=True)
    y = x.to(newch.float32)
    assert y.dtype is newch.float32 and y.grad_fn is not None
    z = (y * 2.0).to(newch.float64)
    w = u(2, 3)
    z.backward(newch.tensor(w))
    assert x.grad.dtype is newch.float64
    np.testing.assert_allclose(x.grad.numpy(), 2.0 * w.astype(np.float32).astype(np.float64), rtol=1e-6)
    gradcheck(lambda a: (a.float() * 3.0).double(), u(3), eps=1e-3, atol=1e-3, rtol=1e-3)


def test_number_remainder_tensor_has_no_derivative_like_torch():
    x = newch.tensor([1.5, -2.2], dtype=newch.float64, requires_grad=True)
    y = 5.0 % x
    assert y.tolist() == pytest.approx([0.5, -1.6])
    with pytest.raises(RuntimeError, match="remainder"):
        y.sum().backward()


def test_int_index_with_duplicates_accumulates():
    x = newch.tensor([1.0, 2.0, 3.0], dtype=newch.float64, requires_grad=True)
    x[L(0, 0, 2, 0)].sum().backward()
    assert x.grad.tolist() == [3.0, 0.0, 1.0]


def test_broadcast_gradient_is_summed_back_to_each_shape():
    a = newch.ones(2, 1, 3, dtype=newch.float64, requires_grad=True)
    b = newch.ones(4, 1, dtype=newch.float64, requires_grad=True)
    c = newch.tensor(2.0, dtype=newch.float64, requires_grad=True)
    (a * b * c).sum().backward()
    assert tuple(a.grad.shape) == (2, 1, 3) and a.grad.tolist() == [[[8.0] * 3]] * 2
    assert tuple(b.grad.shape) == (4, 1) and b.grad.tolist() == [[12.0]] * 4
    assert tuple(c.grad.shape) == () and c.grad.item() == 24.0


def test_float32_gradients_keep_float32():
    x = newch.randn(3, 4, requires_grad=True)
    w = newch.randn(4, 2, requires_grad=True)
    ((x @ w).relu().sum(1) + x.mean(1)).sum().backward()
    assert x.grad.dtype is newch.float32 and w.grad.dtype is newch.float32
    xn, wn = x.detach().numpy().astype(np.float64), w.detach().numpy().astype(np.float64)
    mask = (xn @ wn > 0).astype(np.float64)
    np.testing.assert_allclose(w.grad.numpy(), xn.T @ mask, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(x.grad.numpy(), mask @ wn.T + 0.25, rtol=1e-5, atol=1e-5)
