"""Norms without torch: values against numpy, gradients against finite differences, errors."""
import math

import numpy as np
import pytest

import newch
from tests.autograd.gradcheck import finite_diff

INF = math.inf
RNG = np.random.default_rng(3)
X = RNG.standard_normal((3, 4, 2))


def np_vector_norm(a, p, axis=None, keepdims=False):
    a = np.abs(a)
    if p == INF:
        return a.max(axis=axis, keepdims=keepdims)
    if p == -INF:
        return a.min(axis=axis, keepdims=keepdims)
    if p == 0:
        return (a != 0).sum(axis=axis, keepdims=keepdims).astype(float)
    return (a ** p).sum(axis=axis, keepdims=keepdims) ** (1 / p)


@pytest.mark.parametrize("p", [2, 1, 3, 0.5, 0, INF, -INF, -1.5])
@pytest.mark.parametrize("dim,keepdim", [(None, False), (1, False), ((0, 2), True), (-1, True)])
def test_vector_norm_matches_numpy(p, dim, keepdim):
    got = newch.linalg.vector_norm(newch.tensor(X), p, dim=dim, keepdim=keepdim)
    want = np_vector_norm(X, p, axis=dim, keepdims=keepdim)
    assert got.shape == want.shape and got.dtype == newch.float64
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-13)


@pytest.mark.parametrize("p", [2, 1, 3, 1.5, 0.5, INF, -INF])
def test_vector_norm_gradient_matches_finite_differences(p):
    a = X[:, :, 0] + 0.1 * np.arange(12).reshape(3, 4)       # no ties, no zeros
    w = RNG.standard_normal(3)
    x = newch.tensor(a, requires_grad=True)
    (newch.linalg.vector_norm(x, p, dim=1) * newch.tensor(w)).sum().backward()
    want = finite_diff(lambda b: (np_vector_norm(b, p, axis=1) * w).sum(), a)
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-6, atol=1e-8)


def test_subgradients_at_zero_and_at_ties_are_pytorchs():
    x = newch.zeros(3, dtype=newch.float64, requires_grad=True)
    newch.linalg.vector_norm(x).backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]                   # not nan
    y = newch.tensor([2.0, -2.0, 1.0], requires_grad=True)
    newch.linalg.vector_norm(y, INF).backward()
    assert y.grad.tolist() == [0.5, -0.5, 0.0]                 # the tie shares the gradient
    z = newch.tensor([0.0, 4.0], requires_grad=True)
    newch.linalg.vector_norm(z, 0.5).backward()
    assert z.grad.tolist()[0] == 0.0 and math.isfinite(z.grad.tolist()[1])


@pytest.mark.parametrize("ord", ["fro", 1, -1, INF, -INF])
def test_matrix_norm_matches_numpy(ord):
    got = newch.linalg.matrix_norm(newch.tensor(X), ord, dim=(0, 1))
    want = np.stack([np.linalg.norm(X[:, :, k], ord) for k in range(2)])
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-13)
    kept = newch.linalg.matrix_norm(newch.tensor(X), ord, dim=(0, 1), keepdim=True)
    assert kept.shape == (1, 1, 2)


def test_matrix_norm_gradient_by_finite_differences():
    a = X[:, :, 0]
    x = newch.tensor(a, requires_grad=True)
    newch.linalg.matrix_norm(x, 1).backward()
    np.testing.assert_allclose(x.grad.numpy(), finite_diff(lambda b: np.linalg.norm(b, 1), a),
                               atol=1e-8)


def test_norm_spellings():
    t = newch.tensor(X)
    assert t.norm().item() == pytest.approx(np.linalg.norm(X.ravel()))
    assert newch.norm(t, p=1).item() == pytest.approx(np.abs(X).sum())
    np.testing.assert_allclose(t.norm(dim=(0, 1)).numpy(), np.sqrt((X ** 2).sum((0, 1))))
    np.testing.assert_allclose(newch.norm(t, 3, dim=2, keepdim=True).numpy(),
                               np_vector_norm(X, 3, axis=2, keepdims=True), rtol=1e-13)
    m = newch.tensor(X[:, :, 0])
    assert newch.linalg.norm(m).item() == pytest.approx(np.linalg.norm(X[:, :, 0]))
    assert newch.linalg.norm(m, INF).item() == pytest.approx(np.linalg.norm(X[:, :, 0], INF))
    np.testing.assert_allclose(newch.linalg.norm(t, 1, dim=0).numpy(), np.abs(X).sum(0))


def test_float32_norm_stays_float32_and_dtype_widens():
    t = newch.tensor(X.astype(np.float32))
    assert t.norm().dtype == newch.float32
    assert newch.linalg.vector_norm(t, dtype=newch.float64).dtype == newch.float64


@pytest.mark.parametrize("call,err,match", [
    (lambda: newch.linalg.vector_norm(newch.tensor([1, 2])), RuntimeError, "floating point"),
    (lambda: newch.linalg.vector_norm(newch.zeros(0), INF), RuntimeError, "empty tensor"),
    (lambda: newch.linalg.vector_norm(newch.zeros(2), "fro"), TypeError, "ord must be a number"),
    (lambda: newch.linalg.vector_norm(newch.zeros(2, dtype=newch.float64),
                                      dtype=newch.float32), RuntimeError, "narrowing"),
    (lambda: newch.linalg.matrix_norm(newch.zeros(2)), RuntimeError, "at least 2 dimensions"),
    (lambda: newch.linalg.matrix_norm(newch.zeros(2, 2), "nuc"), NotImplementedError,
     "singular value"),
    (lambda: newch.linalg.matrix_norm(newch.zeros(2, 2), 2), NotImplementedError,
     "singular value"),
    (lambda: newch.linalg.matrix_norm(newch.zeros(2, 2), 3), RuntimeError, "Order 3"),
    (lambda: newch.linalg.norm(newch.zeros(2, 2, 2), 1), RuntimeError, "1D or 2D"),
    (lambda: newch.linalg.vector_norm(newch.zeros(2), dim=3), IndexError, "out of range"),
])
def test_bad_input_is_a_clear_error(call, err, match):
    with pytest.raises(err, match=match):
        call()


@pytest.mark.parametrize("p", [2, 3, 1.5])
def test_second_derivative_matches_torch(p):
    torch = pytest.importorskip("torch")
    a = X[:, :, 1]
    x = newch.tensor(a, requires_grad=True)
    t = torch.tensor(a, requires_grad=True)
    g, = newch.autograd.grad(newch.linalg.vector_norm(x, p, dim=1).sum(), x, create_graph=True)
    gt, = torch.autograd.grad(torch.linalg.vector_norm(t, p, dim=1).sum(), t, create_graph=True)
    (g * g).sum().backward()
    (gt * gt).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-12, atol=1e-14)
