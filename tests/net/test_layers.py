"""Layers and their functional forms: forward and gradient against finite differences (float64)
and against PyTorch when it is installed."""
import math

import numpy as np
import pytest

import newch
import newch.nn as nn
import newch.nn.functional as F

from tests.autograd.gradcheck import gradcheck, to_np

RNG = np.random.default_rng(1)
X = RNG.standard_normal((3, 5)) * 2
# keep inputs off the kinks of relu / leaky_relu / elu, where finite differences are meaningless
X = np.where(np.abs(X) < 0.05, 0.5, X)

ACTIVATIONS = [
    ("relu", lambda x: F.relu(x), lambda t, x: t.nn.functional.relu(x)),
    ("leaky_relu", lambda x: F.leaky_relu(x, 0.1), lambda t, x: t.nn.functional.leaky_relu(x, 0.1)),
    ("leaky_relu_neg", lambda x: F.leaky_relu(x, -0.3),
     lambda t, x: t.nn.functional.leaky_relu(x, -0.3)),
    ("elu", lambda x: F.elu(x), lambda t, x: t.nn.functional.elu(x)),
    ("elu_alpha", lambda x: F.elu(x, 0.7), lambda t, x: t.nn.functional.elu(x, 0.7)),
    ("elu_neg_alpha", lambda x: F.elu(x, -0.5), lambda t, x: t.nn.functional.elu(x, -0.5)),
    ("gelu", lambda x: F.gelu(x), lambda t, x: t.nn.functional.gelu(x)),
    ("gelu_tanh", lambda x: F.gelu(x, approximate="tanh"),
     lambda t, x: t.nn.functional.gelu(x, approximate="tanh")),
    ("silu", lambda x: F.silu(x), lambda t, x: t.nn.functional.silu(x)),
    ("sigmoid", lambda x: F.sigmoid(x), lambda t, x: t.sigmoid(x)),
    ("tanh", lambda x: F.tanh(x), lambda t, x: t.tanh(x)),
    ("softmax1", lambda x: F.softmax(x, dim=1), lambda t, x: t.softmax(x, dim=1)),
    ("softmax0", lambda x: F.softmax(x, dim=0), lambda t, x: t.softmax(x, dim=0)),
    ("log_softmax", lambda x: F.log_softmax(x, dim=-1), lambda t, x: t.log_softmax(x, dim=-1)),
    ("log_softmax0", lambda x: F.log_softmax(x, dim=0), lambda t, x: t.log_softmax(x, dim=0)),
]


@pytest.mark.parametrize("name,fn,_", ACTIVATIONS, ids=[a[0] for a in ACTIVATIONS])
def test_activation_gradient_finite_differences(name, fn, _):
    gradcheck(fn, X)


@pytest.mark.parametrize("name,fn,tfn", ACTIVATIONS, ids=[a[0] for a in ACTIVATIONS])
def test_activation_matches_torch(name, fn, tfn, torch):
    for dt, ndt, tol in ((np.float32, newch.float32, 1e-5), (np.float64, newch.float64, 1e-12)):
        x = newch.tensor(X.astype(dt), requires_grad=True)
        tx = torch.tensor(X.astype(dt), requires_grad=True)
        y, ty = fn(x), tfn(torch, tx)
        assert y.dtype is ndt
        np.testing.assert_allclose(to_np(y), ty.detach().numpy(), rtol=tol, atol=tol)
        w = RNG.standard_normal(X.shape).astype(dt)
        (y * newch.tensor(w)).sum().backward()
        (ty * torch.tensor(w)).sum().backward()
        np.testing.assert_allclose(to_np(x.grad), tx.grad.numpy(), rtol=tol * 10, atol=tol * 10)


def test_activation_values_by_hand():
    x = newch.tensor([-2.0, -0.5, 0.0, 1.5])
    assert F.relu(x).tolist() == [0.0, 0.0, 0.0, 1.5]
    assert F.leaky_relu(x, 0.5).tolist() == [-1.0, -0.25, 0.0, 1.5]
    np.testing.assert_allclose(F.elu(x).tolist(), [math.expm1(-2.0), math.expm1(-0.5), 0.0, 1.5],
                               rtol=1e-6)
    phi = [0.5 * (1 + math.erf(v / math.sqrt(2))) for v in (-2.0, -0.5, 0.0, 1.5)]
    np.testing.assert_allclose(F.gelu(x).tolist(),
                               [v * p for v, p in zip((-2.0, -0.5, 0.0, 1.5), phi)], rtol=1e-6)
    np.testing.assert_allclose(F.silu(x).tolist(),
                               [v / (1 + math.exp(-v)) for v in (-2.0, -0.5, 0.0, 1.5)], rtol=1e-6)


def test_softmax_is_stable_and_sums_to_one():
    x = newch.tensor([[1000.0, 1000.0, -1000.0], [-1e4, 0.0, 1e4]], requires_grad=True)
    s = F.softmax(x, dim=1)
    np.testing.assert_allclose(s.detach().numpy(), [[0.5, 0.5, 0.0], [0.0, 0.0, 1.0]])
    ls = F.log_softmax(x, dim=1)
    assert np.isfinite(ls.detach().numpy()[0, :2]).all()
    np.testing.assert_allclose(ls.detach().numpy()[0, :2], [-math.log(2)] * 2, rtol=1e-6)
    ls.sum().backward()
    assert np.isfinite(x.grad.numpy()).all()
    y = F.softmax(newch.randn(4, 7), dim=-1)
    np.testing.assert_allclose(y.sum(-1).numpy(), np.ones(4), rtol=1e-6)


def test_softmax_dtype_and_implicit_dim_warning():
    x = newch.randn(2, 3)
    assert F.softmax(x, dim=1, dtype=newch.float64).dtype is newch.float64
    with pytest.warns(UserWarning, match="implicit dim"):
        y = F.softmax(x)
    np.testing.assert_allclose(y.sum(1).numpy(), np.ones(2), rtol=1e-6)
    with pytest.raises(TypeError, match="floating point"):
        F.softmax(newch.tensor([1, 2]), dim=0)
    assert x.softmax(1).shape == (2, 3) and x.log_softmax(-1).shape == (2, 3)


def test_gelu_rejects_unknown_approximation():
    with pytest.raises(ValueError, match="approximate"):
        F.gelu(newch.zeros(1), approximate="fast")
    with pytest.raises(ValueError, match="approximate"):
        nn.GELU("fast")


@pytest.mark.parametrize("fn", [
    lambda x, ip: F.relu(x, inplace=ip), lambda x, ip: F.leaky_relu(x, 0.2, inplace=ip),
    lambda x, ip: F.leaky_relu(x, -0.2, inplace=ip), lambda x, ip: F.elu(x, inplace=ip),
    lambda x, ip: F.silu(x, inplace=ip)])
def test_inplace_forms_write_input_and_keep_gradients_right(fn):
    base = newch.tensor(X, dtype=newch.float64, requires_grad=True)
    ref_in = base * 1.0
    ref = fn(ref_in, False)
    ref.sum().backward()
    expected = base.grad.numpy().copy()
    base.grad = None
    h = base * 1.0                        # a non-leaf, so it may be written in place
    out = fn(h, True)
    assert out is h
    np.testing.assert_allclose(h.detach().numpy(), ref.detach().numpy())
    out.sum().backward()
    np.testing.assert_allclose(base.grad.numpy(), expected)


def test_activation_modules_call_functional():
    x = newch.tensor(X)
    pairs = [(nn.ReLU(), F.relu(x)), (nn.LeakyReLU(0.2), F.leaky_relu(x, 0.2)),
             (nn.ELU(0.5), F.elu(x, 0.5)), (nn.GELU("tanh"), F.gelu(x, "tanh")),
             (nn.SiLU(), F.silu(x)), (nn.Sigmoid(), F.sigmoid(x)), (nn.Tanh(), F.tanh(x)),
             (nn.Softmax(dim=0), F.softmax(x, 0)), (nn.LogSoftmax(dim=1), F.log_softmax(x, 1))]
    for mod, want in pairs:
        np.testing.assert_array_equal(mod(x).numpy(), want.numpy())
    r = nn.ReLU(inplace=True)
    y = x.clone()
    assert r(y) is y and y.min().item() >= 0


# -- Linear ----------------------------------------------------------------------------------

def test_linear_forward_is_x_wt_plus_b():
    lin = nn.Linear(5, 3)
    x = newch.tensor(X.astype(np.float32))
    w, b = to_np(lin.weight), to_np(lin.bias)
    np.testing.assert_allclose(to_np(lin(x)), X @ w.T + b, rtol=1e-5, atol=1e-6)
    nobias = nn.Linear(5, 3, bias=False)
    assert nobias.bias is None
    np.testing.assert_allclose(to_np(nobias(x)), X @ to_np(nobias.weight).T, rtol=1e-5, atol=1e-6)


def test_linear_handles_1d_and_batched_inputs():
    lin = nn.Linear(5, 3, dtype=newch.float64)
    w, b = to_np(lin.weight), to_np(lin.bias)
    v = RNG.standard_normal(5)
    np.testing.assert_allclose(to_np(lin(newch.tensor(v))), w @ v + b, rtol=1e-12)
    x3 = RNG.standard_normal((2, 4, 5))
    np.testing.assert_allclose(to_np(lin(newch.tensor(x3))), x3 @ w.T + b, rtol=1e-12)


def test_linear_gradient_finite_differences():
    w = RNG.standard_normal((3, 5))
    b = RNG.standard_normal(3)
    gradcheck(F.linear, X, w, b)
    gradcheck(lambda x, w: F.linear(x, w), RNG.standard_normal((2, 4, 5)), w)


def test_linear_module_gradients_match_torch(torch):
    lin = nn.Linear(5, 3)
    tlin = torch.nn.Linear(5, 3)
    with torch.no_grad():
        tlin.weight.copy_(torch.tensor(lin.weight.detach().numpy()))
        tlin.bias.copy_(torch.tensor(lin.bias.detach().numpy()))
    x = X.astype(np.float32)
    (lin(newch.tensor(x)) ** 2).sum().backward()
    (tlin(torch.tensor(x)) ** 2).sum().backward()
    np.testing.assert_allclose(lin.weight.grad.numpy(), tlin.weight.grad.numpy(), rtol=1e-5)
    np.testing.assert_allclose(lin.bias.grad.numpy(), tlin.bias.grad.numpy(), rtol=1e-5)


def test_linear_errors_name_the_shapes():
    lin = nn.Linear(4, 2)
    with pytest.raises(ValueError, match=r"linear: input of shape \(3, 5\) has 5 features"):
        lin(newch.zeros(3, 5))
    with pytest.raises(ValueError, match="in_features"):
        nn.Linear(-1, 2)


def test_identity_flatten_unflatten():
    x = newch.randn(2, 3, 4, 5)
    assert nn.Identity(7, k=1)(x) is x
    assert nn.Flatten()(x).shape == (2, 60)
    assert nn.Flatten(0, 2)(x).shape == (24, 5)
    assert nn.Flatten(-2)(x).shape == (2, 3, 20)
    np.testing.assert_array_equal(nn.Flatten()(x).numpy(), x.numpy().reshape(2, 60))
    y = nn.Unflatten(1, (3, 20))(nn.Flatten()(x))
    assert y.shape == (2, 3, 20)
    assert nn.Unflatten(-1, [2, -1])(newch.zeros(3, 10)).shape == (3, 2, 5)
    with pytest.raises(TypeError, match="unflattened_size"):
        nn.Unflatten(1, 5)


def test_flatten_gradient_finite_differences():
    gradcheck(lambda x: nn.Flatten()(x) * 2.0, RNG.standard_normal((2, 3, 2)))
    gradcheck(lambda x: nn.Unflatten(1, (2, 3))(x) ** 2, RNG.standard_normal((2, 6)))


def test_linear_refuses_mixed_dtypes_with_a_hint():
    with pytest.raises(TypeError, match=r"linear: input is newch.float64 but weight is newch.f"):
        nn.Linear(2, 1)(newch.zeros(3, 2, dtype=newch.float64))


def test_edge_shapes():
    s = F.softmax(newch.tensor(3.0), dim=0)
    assert s.shape == () and s.item() == 1.0
    assert F.log_softmax(newch.tensor(3.0), dim=0).item() == 0.0
    assert F.softmax(newch.zeros(0, 3), dim=1).shape == (0, 3)
    assert nn.Linear(3, 2)(newch.zeros(0, 3)).shape == (0, 2)
    assert F.relu(newch.zeros(0)).shape == (0,)
