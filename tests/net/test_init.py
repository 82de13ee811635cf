"""nn.init: statistics of each initialiser, PyTorch's defaults, in-place and arena-free."""
import math

import numpy as np
import pytest

import newch
import newch.nn as nn
import newch.nn.init as init


def big(*shape):
    return newch.empty(*shape)


def test_calculate_gain_table():
    assert init.calculate_gain("linear") == 1 and init.calculate_gain("conv2d") == 1
    assert init.calculate_gain("sigmoid") == 1
    assert init.calculate_gain("tanh") == pytest.approx(5 / 3)
    assert init.calculate_gain("relu") == pytest.approx(math.sqrt(2))
    assert init.calculate_gain("leaky_relu") == pytest.approx(math.sqrt(2 / (1 + 0.01 ** 2)))
    assert init.calculate_gain("leaky_relu", 0.2) == pytest.approx(math.sqrt(2 / 1.04))
    assert init.calculate_gain("selu") == 0.75
    with pytest.raises(ValueError, match="unsupported nonlinearity 'swish'"):
        init.calculate_gain("swish")
    with pytest.raises(ValueError, match="negative_slope"):
        init.calculate_gain("leaky_relu", "x")


def test_fan_in_fan_out():
    assert init._calculate_fan_in_and_fan_out(newch.empty(5, 3)) == (3, 5)
    assert init._calculate_fan_in_and_fan_out(newch.empty(8, 4, 3, 3)) == (36, 72)
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init._calculate_fan_in_and_fan_out(newch.empty(5))


def test_calculate_gain_matches_torch(torch):
    for name, p in (("tanh", None), ("relu", None), ("leaky_relu", None), ("leaky_relu", 0.3),
                    ("selu", None), ("conv1d", None)):
        assert init.calculate_gain(name, p) == pytest.approx(torch.nn.init.calculate_gain(name, p))


def test_works_in_place_under_grad_mode_on_parameters():
    p = nn.Parameter(newch.empty(10, 10))
    for fn in (init.uniform_, init.normal_, init.xavier_uniform_, init.kaiming_normal_,
               init.orthogonal_, init.trunc_normal_, init.zeros_):
        assert fn(p) is p
    assert p.requires_grad and p.is_leaf and p.grad_fn is None


def test_uniform_and_normal_statistics():
    u = init.uniform_(big(200, 500), -2.0, 3.0).numpy()
    assert u.min() >= -2.0 and u.max() < 3.0
    assert u.mean() == pytest.approx(0.5, abs=0.02)
    assert u.std() == pytest.approx(5 / math.sqrt(12), rel=0.01)
    n = init.normal_(big(200, 500), 1.0, 0.5).numpy()
    assert n.mean() == pytest.approx(1.0, abs=0.005) and n.std() == pytest.approx(0.5, rel=0.01)


def test_constant_ones_zeros_eye():
    p = big(3, 4)
    assert init.constant_(p, 0.25).numpy().tolist() == [[0.25] * 4] * 3
    assert init.ones_(p).numpy().sum() == 12 and init.zeros_(p).numpy().sum() == 0
    np.testing.assert_array_equal(init.eye_(p).numpy(), np.eye(3, 4))


def test_xavier_statistics():
    fan_in, fan_out = 400, 300
    u = init.xavier_uniform_(big(fan_out, fan_in), gain=2.0).numpy()
    bound = 2.0 * math.sqrt(6 / (fan_in + fan_out))
    assert np.abs(u).max() <= bound and np.abs(u).max() > 0.99 * bound
    assert u.std() == pytest.approx(2.0 * math.sqrt(2 / (fan_in + fan_out)), rel=0.02)
    n = init.xavier_normal_(big(fan_out, fan_in)).numpy()
    assert n.std() == pytest.approx(math.sqrt(2 / (fan_in + fan_out)), rel=0.02)
    assert abs(n.mean()) < 0.005


def test_kaiming_uniform_bounds_and_modes():
    w = big(300, 200)
    init.kaiming_uniform_(w, a=math.sqrt(5))
    bound = 1 / math.sqrt(200)          # gain sqrt(2/6) * sqrt(3/fan_in) = 1/sqrt(fan_in)
    a = w.numpy()
    assert np.abs(a).max() <= bound and np.abs(a).max() > 0.99 * bound
    init.kaiming_uniform_(w, mode="fan_out", nonlinearity="relu")
    assert np.abs(w.numpy()).max() <= math.sqrt(6 / 300)
    init.kaiming_normal_(w, nonlinearity="relu")
    assert w.numpy().std() == pytest.approx(math.sqrt(2 / 200), rel=0.02)
    with pytest.raises(ValueError, match="mode 'fan_avg'"):
        init.kaiming_uniform_(w, mode="fan_avg")


def test_kaiming_on_zero_element_tensor_warns():
    with pytest.warns(UserWarning, match="zero-element"):
        init.kaiming_uniform_(newch.empty(0, 3))


def test_trunc_normal_stays_in_bounds_with_right_moments():
    t = init.trunc_normal_(big(300, 300), mean=0.5, std=1.0, a=-1.0, b=1.5).numpy()
    assert t.min() >= -1.0 and t.max() <= 1.5
    # moments of N(0.5, 1) truncated to [-1, 1.5] (alpha=-1.5, beta=1.0)
    phi = lambda z: math.exp(-z * z / 2) / math.sqrt(2 * math.pi)
    cdf = lambda z: 0.5 * (1 + math.erf(z / math.sqrt(2)))
    mass = cdf(1.0) - cdf(-1.5)
    mean = 0.5 + (phi(-1.5) - phi(1.0)) / mass
    var = 1 + (-1.5 * phi(-1.5) - 1.0 * phi(1.0)) / mass - ((phi(-1.5) - phi(1.0)) / mass) ** 2
    assert t.mean() == pytest.approx(mean, abs=0.01)
    assert t.var() == pytest.approx(var, rel=0.02)
    small = init.trunc_normal_(big(100, 100), std=0.02).numpy()
    assert small.std() == pytest.approx(0.02, rel=0.03)


def test_trunc_normal_refuses_an_empty_interval():
    with pytest.raises(ValueError, match="a < b"):
        init.trunc_normal_(big(3), a=1.0, b=1.0)


@pytest.mark.parametrize("shape", [(6, 6), (4, 9), (9, 4), (4, 2, 3)])
def test_orthogonal_gives_orthonormal_rows_or_columns(shape):
    w = init.orthogonal_(big(*shape), gain=1.0).numpy().astype(np.float64)
    m = w.reshape(shape[0], -1)
    small = min(m.shape)
    gram = m @ m.T if m.shape[0] <= m.shape[1] else m.T @ m
    np.testing.assert_allclose(gram, np.eye(small), atol=1e-5)
    w2 = init.orthogonal_(big(5, 5), gain=3.0).numpy().astype(np.float64)
    np.testing.assert_allclose(w2.T @ w2, 9 * np.eye(5), atol=1e-4)
    with pytest.raises(ValueError, match="2 or more dimensions"):
        init.orthogonal_(big(3))


def test_non_contiguous_target_is_filled():
    p = big(4, 6)
    init.zeros_(p)
    init.ones_(p.t())
    assert p.numpy().sum() == 24
    init.normal_(p[:, ::2])
    assert (p.numpy()[:, 1::2] == 1).all()


def test_linear_default_init_matches_pytorch_rule():
    lin = nn.Linear(256, 512)
    bound = 1 / math.sqrt(256)
    w, b = lin.weight.detach().numpy(), lin.bias.detach().numpy()
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.99 * bound
    assert w.std() == pytest.approx(bound / math.sqrt(3), rel=0.02)
    assert np.abs(b).max() <= bound and b.std() > 0.4 * bound


def test_same_seed_same_initial_weights():
    newch.manual_seed(7)
    a = nn.Linear(5, 4).weight.detach().numpy().copy()
    newch.manual_seed(7)
    b = nn.Linear(5, 4).weight.detach().numpy().copy()
    np.testing.assert_array_equal(a, b)
