"""Second derivatives: backward closures are built from differentiable ops, so create_graph=True
gives a gradient that can itself be differentiated (gradient penalties, Hessian-vector products)."""
import numpy as np
import pytest

import newch

from .gradcheck import gradgradcheck

R = np.random.default_rng(7)


def u(*shape, lo=-1.0, hi=1.0):
    return R.uniform(lo, hi, size=shape)


def pos(*shape):
    return R.uniform(0.5, 2.0, size=shape)


def L(*values):
    return newch.tensor(list(values), dtype=newch.int64)


def case(name, fn, *inputs):
    return pytest.param(fn, inputs, id=name)


CASES = [
    case("mul", lambda a, b: a * b * a, u(2, 3), u(3)),
    case("div", lambda a, b: a / b, u(2, 3), pos(3)),
    case("rdiv", lambda a: 2.0 / a, pos(3)),
    case("pow_tensor", lambda a, b: a ** b, pos(2, 3), u(2, 3)),
    case("pow_scalar", lambda a: a ** 3.5, pos(3)),
    case("rpow", lambda a: 3.0 ** a, u(3)),
    case("maximum", lambda a, b: newch.maximum(a * a, b), np.array([0.5, -1.0, 2.0]), np.array([1.0, 0.5, 1.0])),
    case("atan2", lambda a, b: newch.atan2(a, b), u(3), pos(3)),
    case("exp_log", lambda a: a.exp() + a.log(), pos(3)),
    case("expm1_log1p", lambda a: a.expm1() * a.log1p(), pos(3)),
    case("exp2_log2", lambda a: a.exp2() + a.log2(), pos(3)),
    case("sqrt_rsqrt", lambda a: a.sqrt() * a.rsqrt().square(), pos(3)),
    case("trig", lambda a: a.sin() * a.cos() + a.tan(), u(3)),
    case("inverse_trig", lambda a: a.asin() + a.acos() * a.atan(), u(3, lo=-0.8, hi=0.8)),
    case("hyperbolic", lambda a: a.sinh() * a.cosh() + a.tanh(), u(3)),
    case("sigmoid_silu_erf", lambda a: a.sigmoid() + newch.silu(a) + a.erf(), u(3)),
    case("reciprocal_abs_neg", lambda a: (-a).reciprocal() * a.abs(), np.array([0.5, -1.5, 2.0])),
    case("relu", lambda a: a.relu() * a, np.array([0.5, -1.5, 2.0])),
    case("sum_mean", lambda a: a.sum(0) * a.mean(1, keepdim=True), u(2, 3)),
    case("var", lambda a: a.var(1), u(2, 4)),
    case("var_all", lambda a: a.var(), u(2, 3)),
    case("std", lambda a: a.std(0), u(3, 2)),
    case("prod", lambda a: a.prod(1), u(2, 3)),
    case("logsumexp", lambda a: a.logsumexp(1), u(2, 3)),
    case("amax", lambda a: (a * a).amax(1), np.array([[0.5, -1.5, 1.0], [0.2, 0.3, -0.1]])),
    case("max_dim", lambda a: (a * a).max(1)[0], np.array([[0.5, -1.5, 1.0], [0.2, 0.3, -0.1]])),
    case("matmul", lambda a, b: (a @ b) * (a @ b), u(2, 3), u(3, 2)),
    case("matmul_1d_batched", lambda a, b: (a @ b).square(), u(3), u(2, 3, 2)),
    case("views", lambda a: a.t().reshape(6).unsqueeze(0).expand(2, 6).permute(1, 0).square(), u(2, 3)),
    case("getitem_basic", lambda a: a[1:, ::2].square(), u(3, 3)),
    case("getitem_advanced", lambda a: a[L(0, 2, 0)].square(), u(3, 2)),
    case("getitem_mask", lambda a: a[newch.tensor([True, False, True])].square(), u(3, 2)),
    case("index_select", lambda a: a.index_select(1, L(1, 1, 0)).square(), u(2, 3)),
    case("gather", lambda a: a.gather(1, L(0, 0, 2, 1).reshape(2, 2)).square(), u(2, 3)),
    case("masked_select", lambda a: a.masked_select(newch.tensor([True, False, True])).square(), u(2, 3)),
    case("cat_stack_split", lambda a, b: newch.stack(newch.cat([a, b]).split(2)).square(), u(2, 2), u(2, 2)),
    case("where_clamp", lambda a: newch.where(a > 0, a * a, a.clamp(-0.5, 0.5) * a),
         np.array([0.3, -0.2, -0.9, 1.3])),
    case("masked_fill", lambda a: a.masked_fill(newch.tensor([True, False, False]), 0.0).square(), u(3)),
    case("setitem", lambda a, b: _setitem(a, b).square(), u(3, 2), u(2)),
    case("scatter_add", lambda a, s: newch.scatter_add(a, 1, L(0, 2, 0, 1).reshape(2, 2), s).square(),
         u(2, 3), u(2, 2)),
    case("softmax", lambda a: newch.softmax(a, 1) * a, u(2, 3)),
    case("log_softmax", lambda a: newch.log_softmax(a, 0).square(), u(3, 2)),
    case("gelu_elu_leaky", lambda a: newch.gelu(a) + newch.elu(a) * a + newch.leaky_relu(a, 0.1) * a,
         np.array([0.5, -1.5, 2.0, -0.3])),
    case("gelu_tanh", lambda a: newch.gelu(a, approximate="tanh"), u(3)),
    case("softmax_cross_entropy", lambda a: -(a - a.logsumexp(1, keepdim=True))[L(0, 1), L(2, 0)], u(2, 3)),
]


def _setitem(a, b):
    y = a * 1.0
    y[1] = b * b
    return y


@pytest.mark.parametrize("fn, inputs", CASES)
def test_second_derivative_matches_finite_differences(fn, inputs):
    gradgradcheck(fn, *inputs)


def test_hessian_vector_product_of_a_quadratic():
    a = np.array([[2.0, 1.0], [1.0, 3.0]])
    x = newch.tensor([1.0, -1.0], dtype=newch.float64, requires_grad=True)
    A = newch.tensor(a)
    v = newch.tensor([0.5, 2.0], dtype=newch.float64)
    f = 0.5 * (x @ (A @ x))
    (g,) = newch.autograd.grad(f, x, create_graph=True)
    (hv,) = newch.autograd.grad((g * v).sum(), x)
    np.testing.assert_allclose(hv.numpy(), a @ np.array([0.5, 2.0]))
