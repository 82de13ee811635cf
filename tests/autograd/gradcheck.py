"""Finite-difference gradient checks in float64, the oracle for every backward in newch.

The one finite-difference helper of the test suite: tests/autograd, tests/ops and tests/net all
import it (``from tests.autograd.gradcheck import gradcheck``).

``gradcheck(fn, *inputs)`` compares the gradients newch's autograd computes for
``fn`` against central differences ``(f(x + eps) - f(x - eps)) / (2 eps)``
evaluated in float64 with grad recording off. ``fn`` may return one tensor or a
tuple of tensors; each output is weighted by a fixed random tensor of its
shape so every element of every output takes part (the check is then one
vector-Jacobian product, the thing backward computes).

``gradgradcheck(fn, *inputs)`` does the same for the gradient itself
(``newch.autograd.grad(..., create_graph=True)``), i.e. second derivatives.
``finite_diff(f, a)`` differentiates a plain numpy function (to check a hand-written
reference); ``to_np(t)`` is the float64 numpy copy of a tensor the checks compare.

Tolerances: ``eps=1e-6`` with ``atol=1e-7, rtol=1e-6`` by default; in float64 the central
difference is accurate to about ``eps**2`` plus ``1e-16 / eps``, so this leaves a wide margin.

Example:
    >>> import numpy as np
    >>> gradcheck(lambda x: x.exp(), np.array([0.5, -1.0]))
"""
import numpy as np

import newch

EPS = 1e-6
ATOL = 1e-7
RTOL = 1e-6


def to_np(t):
    """A float64 numpy copy of newch tensor ``t`` (also for a tensor that requires grad)."""
    return np.array(t.detach().numpy(force=True), dtype=np.float64)


def _outputs(out):
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


def _weights(outs, seed):
    """One fixed random float64 weight array per output (shape of that output)."""
    rng = np.random.default_rng(seed)
    return [rng.uniform(0.5, 1.5, size=tuple(o.shape)) * rng.choice([-1.0, 1.0], size=tuple(o.shape))
            for o in outs]


def _scalar(outs, weights):
    """sum_k sum(out_k * w_k) as a Python float (float64 arithmetic)."""
    total = 0.0
    for o, w in zip(outs, weights):
        total += float(np.sum(to_np(o) * w))
    return total


def finite_diff(f, a, eps=EPS):
    """Central differences ``(f(a + eps e_i) - f(a - eps e_i)) / (2 eps)`` of scalar ``f`` at array ``a``.

    ``f`` takes an array of ``a``'s shape (a numpy reference, or a wrapper around newch).
    """
    g = np.zeros_like(a)
    for idx in np.ndindex(a.shape):
        up, down = a.copy(), a.copy()
        up[idx] += eps
        down[idx] -= eps
        g[idx] = (f(up) - f(down)) / (2 * eps)
    return g


def numeric_grads(fn, arrays, weights, eps=EPS, wrt=None):
    """Central-difference gradients of sum(fn(*xs) * weights) w.r.t. each array in ``wrt``."""
    wrt = range(len(arrays)) if wrt is None else wrt

    def at(i):
        def f(b):
            moved = [b if k == i else a for k, a in enumerate(arrays)]
            with newch.no_grad():
                return _scalar(_outputs(fn(*[newch.tensor(a) for a in moved])), weights)
        return f
    return [finite_diff(at(i), arrays[i], eps) for i in wrt]


def analytic_grads(fn, arrays, weights, wrt=None):
    """newch's gradients of sum(fn(*xs) * weights) w.r.t. each array in ``wrt`` (zeros if unused)."""
    wrt = list(range(len(arrays))) if wrt is None else list(wrt)
    xs = [newch.tensor(a, requires_grad=(i in wrt)) for i, a in enumerate(arrays)]
    outs = _outputs(fn(*xs))
    for o in outs:
        assert o.dtype is newch.float64, f"gradcheck wants float64 outputs, got {o.dtype}"
    diff = [(o, newch.tensor(w)) for o, w in zip(outs, weights) if o.requires_grad]
    assert diff, "gradcheck: no output of fn requires grad"
    newch.autograd.backward([o for o, _ in diff], [w for _, w in diff])
    got = []
    for i in wrt:
        g = xs[i].grad
        if g is None:
            got.append(np.zeros_like(arrays[i]))
            continue
        assert tuple(g.shape) == tuple(arrays[i].shape), \
            f"grad of input {i} has shape {tuple(g.shape)}, expected {arrays[i].shape}"
        assert g.dtype is newch.float64, f"grad of input {i} has dtype {g.dtype}, expected float64"
        got.append(g.numpy())
    return got


def gradcheck(fn, *inputs, eps=EPS, atol=ATOL, rtol=RTOL, wrt=None, seed=0):
    """Assert newch's backward of ``fn`` matches central differences at ``inputs``.

    Args:
        fn: takes float64 newch tensors (one per input), returns a tensor or a tuple of them.
        inputs: array-likes converted to float64 numpy arrays.
        eps, atol, rtol: difference step and tolerances.
        wrt: indices of the inputs to differentiate (default: all).
        seed: seed of the output weights.
    """
    arrays = [np.array(a, dtype=np.float64) for a in inputs]
    with newch.no_grad():
        outs = _outputs(fn(*[newch.tensor(a) for a in arrays]))
    weights = _weights(outs, seed)
    got = analytic_grads(fn, arrays, weights, wrt)
    want = numeric_grads(fn, arrays, weights, eps, wrt)
    for k, g, w in zip(range(len(arrays)) if wrt is None else wrt, got, want):
        np.testing.assert_allclose(g, w, atol=atol, rtol=rtol,
                                   err_msg=f"gradient of input {k}: analytic (actual) vs numeric (desired)")


def _first_grad_fn(fn, seed):
    """x -> sum_i <d(sum(fn(x) * w))/dx_i, v_i>, built with create_graph=True."""
    state = {}

    def first(*xs):
        xs_rg = [x if x.requires_grad else x.detach().requires_grad_() for x in xs]
        with newch.enable_grad():
            outs = _outputs(fn(*xs_rg))
            if "w" not in state:
                state["w"] = _weights(outs, seed)
                rng = np.random.default_rng(seed + 1)
                state["v"] = [rng.uniform(-1, 1, size=tuple(x.shape)) for x in xs_rg]
            loss = None
            for o, w in zip(outs, state["w"]):
                term = (o * newch.tensor(w)).sum()
                loss = term if loss is None else loss + term
            gs = newch.autograd.grad(loss, xs_rg, create_graph=True, allow_unused=True,
                                     materialize_grads=True)
            total = None
            for g, v in zip(gs, state["v"]):
                term = (g * newch.tensor(v)).sum()
                total = term if total is None else total + term
        return total
    return first


def gradgradcheck(fn, *inputs, eps=EPS, atol=ATOL, rtol=RTOL, seed=0):
    """Assert the second derivatives of ``fn`` (through create_graph=True) match differences."""
    arrays = [np.array(a, dtype=np.float64) for a in inputs]
    first = _first_grad_fn(fn, seed)
    xs = [newch.tensor(a, requires_grad=True) for a in arrays]
    total = first(*xs)
    assert total.requires_grad, "gradgradcheck: the first gradient is not differentiable " \
                                "(create_graph=True recorded no graph)"
    total.backward()
    got = [x.grad.numpy() if x.grad is not None else np.zeros_like(a) for x, a in zip(xs, arrays)]
    want = []
    for i, base in enumerate(arrays):
        g = np.zeros_like(base)
        for idx in np.ndindex(base.shape):
            vals = []
            for step in (eps, -eps):
                moved = [a.copy() for a in arrays]
                moved[i][idx] += step
                vals.append(first(*[newch.tensor(a, requires_grad=True) for a in moved]).item())
            g[idx] = (vals[0] - vals[1]) / (2 * eps)
        want.append(g)
    for k, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_allclose(g, w, atol=atol, rtol=rtol,
                                   err_msg=f"second derivative, input {k}: analytic vs numeric")
