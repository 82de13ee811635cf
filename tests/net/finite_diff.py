"""Finite-difference gradient checks (float64) for tests/net, independent of PyTorch."""
import numpy as np

import newch


def to_np(t):
    """A float64 numpy copy of newch tensor ``t`` (works for tensors that require grad)."""
    return np.array(t.detach().numpy(force=True), dtype=np.float64)


def fd_check(fn, *arrays, eps=1e-6, atol=1e-7, rtol=1e-6, seed=0):
    """Compare newch autograd with central differences, in float64, for every input.

    ``fn`` maps newch tensors to one tensor; the scalar checked is sum(fn(*x) * w)
    for a fixed random ``w`` (so every output element matters).
    """
    arrays = [np.array(a, dtype=np.float64) for a in arrays]
    xs = [newch.tensor(a, dtype=newch.float64, requires_grad=True) for a in arrays]
    out = fn(*xs)
    w = np.random.default_rng(seed).standard_normal(tuple(out.shape))
    wt = newch.tensor(w, dtype=newch.float64)
    (out * wt).sum().backward()
    for k, a in enumerate(arrays):
        numeric = np.zeros_like(a)
        for idx in np.ndindex(a.shape):
            vals = []
            for step in (eps, -eps):
                moved = [b.copy() for b in arrays]
                moved[k][idx] += step
                with newch.no_grad():
                    res = fn(*[newch.tensor(b, dtype=newch.float64) for b in moved])
                vals.append(float((to_np(res) * w).sum()))
            numeric[idx] = (vals[0] - vals[1]) / (2 * eps)
        got = to_np(xs[k].grad) if xs[k].grad is not None else np.zeros_like(a)
        np.testing.assert_allclose(got, numeric, atol=atol, rtol=rtol,
                                   err_msg=f"gradient of input {k}")
