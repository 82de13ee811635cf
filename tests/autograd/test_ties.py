"""Gradients at ties and kinks, where finite differences cannot decide: newch follows PyTorch.

- ``max(dim)``/``min(dim)`` send the whole gradient to the index they return.
- ``amax``/``amin`` and the full ``max()``/``min()`` share it evenly among the tied elements.
- ``maximum``/``minimum`` split it in half between equal operands.
- ``clamp`` passes it through at a bound (x == min or x == max); relu and abs give 0 at 0.
"""
import numpy as np
import pytest

import newch


def f64(values, requires_grad=True):
    return newch.tensor(values, dtype=newch.float64, requires_grad=requires_grad)


def grad_of(fn, values):
    x = f64(values)
    fn(x).sum().backward()
    return x.grad.tolist()


TIED = [[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]]


def test_full_max_and_min_share_the_gradient_among_ties():
    assert grad_of(lambda x: x.max(), [1.0, 3.0, 3.0]) == [0.0, 0.5, 0.5]
    assert grad_of(lambda x: x.min(), [[0.0, 3.0], [0.0, 0.0]]) == [[1 / 3, 0.0], [1 / 3, 1 / 3]]
    assert grad_of(lambda x: x.max(), [2.0, 2.0, 2.0, 2.0]) == [0.25] * 4


def test_amax_amin_share_the_gradient_among_ties():
    assert grad_of(lambda x: x.amax(1), TIED) == [[0.0, 0.5, 0.5], [0.5, 0.5, 0.0]]
    assert grad_of(lambda x: x.amin(0), [[1.0, 3.0], [1.0, 2.0]]) == [[0.5, 0.0], [0.5, 1.0]]
    assert grad_of(lambda x: x.amax(), TIED) == [[0.0, 0.5, 0.5], [0.0, 0.0, 0.0]]
    assert grad_of(lambda x: x.amax((0, 1), keepdim=True), [[1.0, 3.0], [3.0, 3.0]]) == \
        [[0.0, 1 / 3], [1 / 3, 1 / 3]]


def test_max_min_with_dim_route_the_gradient_to_the_returned_index():
    x = f64(TIED)
    v, i = x.max(1)
    v.sum().backward()
    expected = np.zeros((2, 3))
    expected[np.arange(2), i.numpy()] = 1.0
    assert x.grad.tolist() == expected.tolist()
    assert x.grad.sum().item() == 2.0

    x = f64(TIED)
    v, i = x.min(1, keepdim=True)
    (v * f64([[2.0], [3.0]], requires_grad=False)).sum().backward()
    expected = np.zeros((2, 3))
    expected[np.arange(2), i.numpy()[:, 0]] = [2.0, 3.0]
    assert x.grad.tolist() == expected.tolist()


def test_maximum_minimum_split_ties_in_half():
    a = f64([1.0, 2.0, 3.0])
    b = f64([1.0, 5.0, 0.0])
    newch.maximum(a, b).sum().backward()
    assert a.grad.tolist() == [0.5, 0.0, 1.0] and b.grad.tolist() == [0.5, 1.0, 0.0]
    a = f64([1.0, 2.0, 3.0])
    b = f64([1.0, 5.0, 0.0])
    newch.minimum(a, b).sum().backward()
    assert a.grad.tolist() == [0.5, 1.0, 0.0] and b.grad.tolist() == [0.5, 0.0, 1.0]


def test_clamp_passes_the_gradient_at_its_bounds():
    assert grad_of(lambda x: x.clamp(-1.0, 1.0), [-2.0, -1.0, 0.0, 1.0, 2.0]) == [0.0, 1.0, 1.0, 1.0, 0.0]
    x = f64([-2.0, -1.0, 0.0, 1.0, 2.0])
    lo = f64([-1.0] * 5)
    hi = f64([1.0] * 5)
    x.clamp(lo, hi).sum().backward()
    assert x.grad.tolist() == [0.0, 1.0, 1.0, 1.0, 0.0]
    assert lo.grad.tolist() == [1.0, 0.0, 0.0, 0.0, 0.0]
    assert hi.grad.tolist() == [0.0, 0.0, 0.0, 0.0, 1.0]


def test_std_of_constant_values_has_zero_gradient():
    x = f64([[1.0, 1.0, 1.0], [1.0, 2.0, 4.0]])
    x.std(1).sum().backward()
    assert x.grad[0].tolist() == [0.0, 0.0, 0.0]
    assert np.isfinite(x.grad.numpy()).all()


def test_var_of_one_element_has_nan_gradient():
    x = f64([2.0])
    x.var().backward()
    assert np.isnan(x.grad.item())


def test_nansum_gives_zero_gradient_to_nans():
    assert grad_of(lambda x: x.nansum(), [float("nan"), 1.0, -2.0]) == [0.0, 1.0, 1.0]


def test_relu_and_abs_at_zero():
    assert grad_of(lambda x: x.relu(), [-1.0, 0.0, 1.0]) == [0.0, 0.0, 1.0]
    assert grad_of(lambda x: x.abs(), [-1.0, 0.0, 1.0]) == [-1.0, 0.0, 1.0]


def _both(torch, fn, *arrays):
    """Gradients of fn(module, *tensors).sum() in newch and in torch, per input."""
    nx = [newch.tensor(a, dtype=newch.float64, requires_grad=True) for a in arrays]
    tx = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in arrays]
    fn(newch, *nx).sum().backward()
    fn(torch, *tx).sum().backward()
    for n, t in zip(nx, tx):
        tg = t.grad.numpy() if t.grad is not None else np.zeros(t.shape)
        ng = n.grad.numpy() if n.grad is not None else np.zeros(tuple(n.shape))
        np.testing.assert_allclose(ng, tg, rtol=1e-12, atol=1e-12)


TIE_CASES = [
    ("max_all", lambda m, x: x.max(), [[1.0, 3.0, 3.0], [3.0, 0.0, 2.0]]),
    ("min_all", lambda m, x: x.min(), [[0.0, 3.0, 0.0], [3.0, 0.0, 2.0]]),
    ("amax_dim", lambda m, x: x.amax(1), TIED),
    ("amin_dims", lambda m, x: m.amin(x, (0, 2)), [[[1.0, 1.0], [2.0, 1.0]], [[1.0, 5.0], [1.0, 1.0]]]),
    ("max_dim", lambda m, x: x.max(1)[0] * m.tensor([1.0, 2.0], dtype=m.float64), TIED),
    ("min_dim_keepdim", lambda m, x: x.min(0, keepdim=True)[0], TIED),
    ("max_dim_all_equal", lambda m, x: x.max(-1)[0], [[4.0, 4.0, 4.0]]),
    ("maximum", lambda m, a, b: m.maximum(a, b), [1.0, 2.0, 3.0], [1.0, 5.0, 3.0]),
    ("minimum_broadcast", lambda m, a, b: m.minimum(a, b), [[1.0, 2.0], [0.0, 3.0]], [1.0, 3.0]),
    ("clamp_scalar_at_bounds", lambda m, x: x.clamp(-1.0, 1.0), [-1.0, 1.0, 0.5, 3.0]),
    ("clamp_tensor_at_bounds", lambda m, x, lo, hi: x.clamp(lo, hi),
     [-1.0, 1.0, 0.5, 3.0], [-1.0, 0.0, 0.5, 0.0], [1.0, 1.0, 2.0, 2.0]),
    ("relu_at_zero", lambda m, x: x.relu(), [0.0, -0.0, 1.0]),
    ("abs_at_zero", lambda m, x: x.abs(), [0.0, -2.0, 1.0]),
    ("prod_with_zeros", lambda m, x: x.prod(1), [[0.0, 2.0, 3.0], [0.0, 0.0, 4.0]]),
    ("pow_zero_base", lambda m, x, e: x ** e, [0.0, 0.0, 2.0], [2.0, 0.5, 0.0]),
    ("sqrt_product_rule", lambda m, x: x.sqrt() * x, [4.0, 1.0]),
    ("std_constant_rows", lambda m, x: x.std(1), [[1.0, 1.0, 1.0], [1.0, 2.0, 4.0]]),
    ("std_all_biased", lambda m, x: x.std(correction=0), [[3.0, 3.0], [3.0, 3.0]]),
]


@pytest.mark.parametrize("name, fn, arrays", [(c[0], c[1], c[2:]) for c in TIE_CASES],
                         ids=[c[0] for c in TIE_CASES])
def test_ties_and_kinks_match_torch(torch, name, fn, arrays):
    _both(torch, fn, *arrays)
