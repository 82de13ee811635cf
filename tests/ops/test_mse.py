"""The one-node mse_loss: the composed form's bits for loss and gradients, PyTorch's values."""
import numpy as np
import pytest

import newch
from newch.net import functional as F


def _pair(dtype, gi, gt, shape=(6, 5)):
    rng = np.random.default_rng(5)
    with newch.persistent():
        x = newch.tensor(rng.standard_normal(shape), dtype=dtype, requires_grad=gi)
        y = newch.tensor(rng.standard_normal(shape), dtype=dtype, requires_grad=gt)
    return x, y


def _composed(x, y, reduction):
    sq = newch.square(x - y)
    return sq.mean() if reduction == "mean" else sq.sum()


@pytest.mark.parametrize("dtype", [newch.float32, newch.float64])
@pytest.mark.parametrize("reduction", ["mean", "sum"])
@pytest.mark.parametrize("gi, gt", [(True, False), (False, True), (True, True)])
def test_loss_and_gradients_are_the_composed_forms_bits(dtype, reduction, gi, gt):
    res = []
    for fn in (lambda x, y: F.mse_loss(x, y, reduction=reduction),
               lambda x, y: _composed(x, y, reduction)):
        x, y = _pair(dtype, gi, gt)
        loss = fn(x, y)
        (loss * 3.0).backward()
        res.append([loss.detach().numpy()] + [t.grad.numpy() if t.requires_grad else None
                                              for t in (x, y)])
    assert res[0][0].dtype == dtype.np
    for a, b in zip(*res):
        assert (a is None and b is None) or a.tobytes() == b.tobytes()


def test_grad_fn_and_values_against_numpy():
    x, y = _pair(newch.float64, True, False)
    loss = F.mse_loss(x, y)
    assert loss.grad_fn.name() == "MseLossBackward0"
    d = x.detach().numpy() - y.numpy()
    assert loss.item() == pytest.approx((d * d).mean(), rel=1e-12)
    loss.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * d / d.size, rtol=1e-12)


def test_create_graph_second_derivative():
    # d2/dx2 of mean((x - y)^2) is 2/n on the diagonal: the grad of sum(grad) is 2/n everywhere
    x, y = _pair(newch.float64, True, True)
    (gx,) = newch.autograd.grad(F.mse_loss(x, y), [x], create_graph=True)
    gx.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full((6, 5), 2 / 30))
    np.testing.assert_allclose(y.grad.numpy(), np.full((6, 5), -2 / 30))


def test_target_changed_in_place_before_backward_is_refused():
    x, y = _pair(newch.float32, True, False)
    loss = F.mse_loss(x, y)
    y.add_(1.0)
    with pytest.raises(RuntimeError, match="modified|in place|in-place"):
        loss.backward()


def test_other_forms_still_work():
    x, y = _pair(newch.float32, True, False)
    assert tuple(F.mse_loss(x, y, reduction="none").shape) == (6, 5)
    with pytest.warns(UserWarning):
        F.mse_loss(x, y[:1])                           # broadcast: the composed form
    empty = F.mse_loss(newch.zeros(0), newch.zeros(0))
    assert np.isnan(empty.item())


def test_against_torch():
    torch = pytest.importorskip("torch")
    x, y = _pair(newch.float32, True, True)
    tx, ty = (torch.tensor(t.detach().numpy(), requires_grad=True) for t in (x, y))
    loss, tloss = F.mse_loss(x, y), torch.nn.functional.mse_loss(tx, ty)
    assert loss.item() == pytest.approx(tloss.item(), rel=1e-6)
    loss.backward()
    tloss.backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(y.grad.numpy(), ty.grad.numpy(), rtol=1e-6)
