"""A handful of gradients compared with PyTorch on the same float64 inputs (skipped without torch)."""
import numpy as np
import pytest

import newch

R = np.random.default_rng(99)


def _grads(mod, fn, arrays, upstream):
    xs = [mod.tensor(a, dtype=mod.float64, requires_grad=True) for a in arrays]
    out = fn(mod, *xs)
    out.backward(mod.tensor(upstream, dtype=mod.float64))
    return [x.grad.numpy() if x.grad is not None else None for x in xs], out.detach().numpy()


def _idx(m, *v):
    return m.tensor(list(v), dtype=m.int64)


def _setitem(m, x, v):
    y = x * 2.0
    y[_idx(m, 0, 2)] = v * v
    y[1, 1:] = 0.0
    return y.exp()


def _silu(m, x):
    return newch.silu(x) if m is newch else m.nn.functional.silu(x)


CASES = [
    ("mlp_layer", lambda m, x, w, b: (x @ w + b).tanh(), (4, 3), (3, 2), (2,)),
    ("batched_matmul_broadcast", lambda m, a, b: a @ b, (2, 1, 2, 3), (3, 3, 2)),
    ("log_softmax", lambda m, x: x - x.logsumexp(1, keepdim=True), (3, 4)),
    ("var_std", lambda m, x: x.var(0) * x.std(0, keepdim=True), (4, 3)),
    ("div_pow", lambda m, a, b: (a.abs() + 0.5) ** b / (b * b + 1.0), (2, 3), (3,)),
    ("index_dups", lambda m, x: x[_idx(m, 0, 0, 2)] * x[:, _idx(m, 1, 1, 0)].sum(), (3, 3)),
    ("gather", lambda m, x: x.gather(1, m.tensor([[0, 0], [2, 1]])).sigmoid(), (2, 3)),
    ("setitem", _setitem, (3, 3), (2, 3)),
    ("cat_split", lambda m, a, b: m.cat([a, b * 2.0], 1).split([1, 3], 1)[1].exp(), (2, 2), (2, 2)),
    ("masked_where_clamp", lambda m, x: m.where(x > 0, x.clamp(0.2, 0.6), x.masked_fill(x < -0.5, 1.0)),
     (3, 4)),
    ("silu_erf_atan2", lambda m, a, b: _silu(m, a) * a.erf() + m.atan2(a, b.abs() + 0.1), (2, 3), (2, 3)),
    ("prod_dim", lambda m, x: x.prod(0), (3, 2)),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_gradients_match_torch(torch, case):
    name, fn, *shapes = case
    arrays = [R.uniform(-1, 1, size=s) for s in shapes]
    with newch.no_grad():
        out_shape = tuple(fn(newch, *[newch.tensor(a) for a in arrays]).shape)
    upstream = R.uniform(-1, 1, size=out_shape)
    ng, nout = _grads(newch, fn, arrays, upstream)
    tg, tout = _grads(torch, fn, arrays, upstream)
    np.testing.assert_allclose(nout, tout, rtol=1e-10, atol=1e-12)
    for k, (a, b) in enumerate(zip(ng, tg)):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12, err_msg=f"input {k}")


def test_second_derivative_matches_torch(torch):
    a = R.uniform(-1, 1, size=(3, 2))
    w = R.uniform(-1, 1, size=(2, 2))
    res = []
    for m in (newch, torch):
        x = m.tensor(a, dtype=m.float64, requires_grad=True)
        wt = m.tensor(w, dtype=m.float64, requires_grad=True)
        y = ((x @ wt).sigmoid() * x.sum(1, keepdim=True)).logsumexp(1).sum()
        (gx,) = m.autograd.grad(y, x, create_graph=True)
        (gx ** 2).sum().backward()
        res.append((gx.detach().numpy(), x.grad.numpy(), wt.grad.numpy()))
    for n, t in zip(*res):
        np.testing.assert_allclose(n, t, rtol=1e-10, atol=1e-12)
