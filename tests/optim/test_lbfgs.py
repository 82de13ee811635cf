"""LBFGS against PyTorch: trajectories with and without the strong-Wolfe line search, state keys."""
import numpy as np
import pytest

import newch

torch = pytest.importorskip("torch")


def _run(lib, dtype, line_search_fn, steps=3, opt=None, x0=None):
    x0 = np.array([-1.2, 1.0, 0.5, -0.3], dtype) if x0 is None else x0
    w = lib.nn.Parameter(lib.tensor(x0))
    opt = lib.optim.LBFGS([w], lr=1, max_iter=10, history_size=5, line_search_fn=line_search_fn)

    def closure():
        opt.zero_grad()
        loss = (100 * (w[1:] - w[:-1] ** 2) ** 2 + (1 - w[:-1]) ** 2).sum()    # Rosenbrock
        loss.backward()
        return loss
    traj = []
    for _ in range(steps):
        opt.step(closure)
        traj.append(w.detach().numpy().copy())
    return np.array(traj), opt


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_trajectory_matches_torch_float64(line_search_fn):
    got, opt = _run(newch, np.float64, line_search_fn)
    want, topt = _run(torch, np.float64, line_search_fn)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    s, ts = opt.state_dict()["state"][0], topt.state_dict()["state"][0]
    assert sorted(s) == sorted(ts)
    assert s["func_evals"] == ts["func_evals"] and s["n_iter"] == ts["n_iter"]
    np.testing.assert_allclose(s["d"].numpy(), ts["d"].numpy(), rtol=1e-8, atol=1e-12)
    assert len(s["old_dirs"]) == len(ts["old_dirs"])


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_trajectory_close_to_torch_float32(line_search_fn):
    got, _ = _run(newch, np.float32, line_search_fn)
    want, _ = _run(torch, np.float32, line_search_fn)
    np.testing.assert_allclose(got, want, atol=1e-3)


def test_minimises_a_quadratic_and_checks_options():
    w = newch.nn.Parameter(newch.zeros(3))
    opt = newch.optim.LBFGS([w], line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = ((w - newch.tensor([1.0, -2.0, 3.0])) ** 2).sum()
        loss.backward()
        return loss
    opt.step(closure)
    np.testing.assert_allclose(w.detach().numpy(), [1.0, -2.0, 3.0], atol=1e-5)
    with pytest.raises(RuntimeError, match="strong_wolfe"):
        newch.optim.LBFGS([w], line_search_fn="backtracking")
    with pytest.raises(RuntimeError, match="closure"):
        opt.step(None)
