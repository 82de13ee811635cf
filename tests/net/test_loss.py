"""Regression losses: each reduction by hand, gradients by finite differences, torch parity,
broadcast warnings and argument errors."""
import warnings

import numpy as np
import pytest

import newch
import newch.nn as nn
import newch.nn.functional as F

from tests.autograd.gradcheck import gradcheck, to_np

RNG = np.random.default_rng(2)
A = RNG.standard_normal((4, 3)) * 2
B = RNG.standard_normal((4, 3)) * 2
W = RNG.random((4, 3)) + 0.5


def _smooth(d, beta):
    ad = np.abs(d)
    return np.where(ad < beta, 0.5 * d * d / beta, ad - 0.5 * beta)


def _huber(d, delta):
    ad = np.abs(d)
    return np.where(ad < delta, 0.5 * d * d, delta * (ad - 0.5 * delta))


ELEMENTWISE = {
    "mse": (lambda a, b, **k: F.mse_loss(a, b, **k), lambda d: d * d),
    "l1": (lambda a, b, **k: F.l1_loss(a, b, **k), np.abs),
    "smooth_l1": (lambda a, b, **k: F.smooth_l1_loss(a, b, beta=0.7, **k),
                  lambda d: _smooth(d, 0.7)),
    "huber": (lambda a, b, **k: F.huber_loss(a, b, delta=1.3, **k), lambda d: _huber(d, 1.3)),
}


@pytest.mark.parametrize("name", list(ELEMENTWISE))
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_loss_values_by_hand(name, reduction):
    fn, ref = ELEMENTWISE[name]
    a = newch.tensor(A, dtype=newch.float64)
    b = newch.tensor(B, dtype=newch.float64)
    got = to_np(fn(a, b, reduction=reduction))
    full = ref(A - B)
    want = {"mean": full.mean(), "sum": full.sum(), "none": full}[reduction]
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert got.shape == np.shape(want)


@pytest.mark.parametrize("name", list(ELEMENTWISE))
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_loss_gradients_finite_differences(name, reduction):
    fn, _ = ELEMENTWISE[name]
    gradcheck(lambda a, b: fn(a, b, reduction=reduction), A, B)


@pytest.mark.parametrize("name", ["mse", "l1", "huber"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_weighted_losses(name, reduction):
    fn, ref = ELEMENTWISE[name]
    got = to_np(fn(newch.tensor(A, dtype=newch.float64), newch.tensor(B, dtype=newch.float64),
                   reduction=reduction, weight=newch.tensor(W, dtype=newch.float64)))
    full = ref(A - B) * W
    mean = full.mean() if name == "huber" else full.sum() / W.sum()
    np.testing.assert_allclose(got, {"mean": mean, "sum": full.sum(), "none": full}[reduction],
                               rtol=1e-12)
    with pytest.raises(ValueError, match="weight"):
        fn(newch.zeros(2), newch.zeros(2), weight=newch.ones(3))


TORCH_LOSSES = [
    ("mse", lambda a, b, r: F.mse_loss(a, b, reduction=r),
     lambda t, a, b, r: t.nn.functional.mse_loss(a, b, reduction=r)),
    ("l1", lambda a, b, r: F.l1_loss(a, b, reduction=r),
     lambda t, a, b, r: t.nn.functional.l1_loss(a, b, reduction=r)),
    ("smooth_l1", lambda a, b, r: F.smooth_l1_loss(a, b, reduction=r, beta=0.5),
     lambda t, a, b, r: t.nn.functional.smooth_l1_loss(a, b, reduction=r, beta=0.5)),
    ("smooth_l1_beta0", lambda a, b, r: F.smooth_l1_loss(a, b, reduction=r, beta=0.0),
     lambda t, a, b, r: t.nn.functional.smooth_l1_loss(a, b, reduction=r, beta=0.0)),
    ("huber", lambda a, b, r: F.huber_loss(a, b, reduction=r, delta=2.0),
     lambda t, a, b, r: t.nn.functional.huber_loss(a, b, reduction=r, delta=2.0)),
]


@pytest.mark.parametrize("name,fn,tfn", TORCH_LOSSES, ids=[t[0] for t in TORCH_LOSSES])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_losses_match_torch(name, fn, tfn, reduction, torch):
    a32, b32 = A.astype(np.float32), B.astype(np.float32)
    a = newch.tensor(a32, requires_grad=True)
    ta = torch.tensor(a32, requires_grad=True)
    out, tout = fn(a, newch.tensor(b32), reduction), tfn(torch, ta, torch.tensor(b32), reduction)
    np.testing.assert_allclose(to_np(out), tout.detach().numpy(), rtol=1e-5, atol=1e-6)
    out.sum().backward()
    tout.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_loss_modules_match_functional():
    a, b = newch.tensor(A), newch.tensor(B)
    cases = [(nn.MSELoss(), F.mse_loss(a, b)),
             (nn.L1Loss(reduction="sum"), F.l1_loss(a, b, reduction="sum")),
             (nn.SmoothL1Loss(reduction="none", beta=0.3),
              F.smooth_l1_loss(a, b, reduction="none", beta=0.3)),
             (nn.HuberLoss(delta=0.4), F.huber_loss(a, b, delta=0.4))]
    for mod, want in cases:
        np.testing.assert_array_equal(mod(a, b).numpy(), want.numpy())


def test_invalid_reduction_names_the_valid_ones():
    for fn in (F.mse_loss, F.l1_loss, F.smooth_l1_loss, F.huber_loss):
        with pytest.raises(ValueError, match="'mean', 'sum' or 'none'"):
            fn(newch.zeros(2), newch.zeros(2), reduction="avg")
    with pytest.raises(ValueError, match="MSELoss: 'avg'"):
        nn.MSELoss(reduction="avg")


def test_shape_mismatch_broadcasts_with_a_warning():
    a = newch.tensor([[1.0], [2.0], [3.0]])
    b = newch.tensor([1.0, 2.0, 3.0])
    with pytest.warns(UserWarning, match="different to the input size"):
        out = F.mse_loss(a, b, reduction="none")
    assert out.shape == (3, 3)
    col = np.array([[1.0], [2.0], [3.0]])
    np.testing.assert_allclose(out.numpy(), (col - [1.0, 2.0, 3.0]) ** 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.mse_loss(b, b)                                 # same shapes: no warning


def test_legacy_size_average_and_reduce():
    a, b = newch.tensor(A), newch.tensor(B)
    with pytest.warns(UserWarning, match="deprecated"):
        none = F.mse_loss(a, b, reduce=False)
    assert none.shape == (4, 3)
    with pytest.warns(UserWarning):
        total = F.l1_loss(a, b, size_average=False)
    np.testing.assert_allclose(total.item(), np.abs(A - B).sum(), rtol=1e-5)


def test_beta_and_delta_checks():
    with pytest.raises(ValueError, match="beta"):
        F.smooth_l1_loss(newch.zeros(1), newch.zeros(1), beta=-1.0)
    with pytest.raises(ValueError, match="delta"):
        F.huber_loss(newch.zeros(1), newch.zeros(1), delta=0.0)


def test_target_gradient_flows():
    gradcheck(lambda a, b: F.huber_loss(a, b, reduction="sum"), A, B)
    b = newch.tensor(B, requires_grad=True)
    F.mse_loss(newch.tensor(A), b, reduction="sum").backward()
    np.testing.assert_allclose(b.grad.numpy(), -2 * (A - B), rtol=1e-5)
