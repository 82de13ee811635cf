"""var and prod's backward keep their scratch in the arena (no numpy arrays the size of the
tensor) and prod's backward has no per-element Python loop."""
import time
import tracemalloc

import numpy as np
import pytest

import newch


def _numpy_peak(fn):
    """Peak bytes numpy (and Python) allocate while ``fn`` runs; arena blocks already exist."""
    if newch.default_context().backend == "ref":
        pytest.skip("the numpy ref kernels make numpy temporaries of their own")
    fn()                                # warm up: kernels compiled, arena blocks reserved
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("dim", [0, 1, (0, 2)])
def test_var_takes_no_numpy_scratch_proportional_to_its_input(dim):
    x = newch.randn(2, 1 << 17, 2)
    peak = _numpy_peak(lambda: x.var(dim))
    assert peak < 64 << 10          # the output alone is >= 2 KiB; a centred copy would be 2+ MiB


def test_var_still_matches_numpy():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((4, 300, 5)).astype(np.float32) + 100
    x = newch.tensor(a)
    for dim in (0, 1, 2, (0, 2), None):
        np.testing.assert_allclose(x.var(dim).numpy(), a.astype(np.float64).var(dim, ddof=1),
                                   rtol=2e-5)


def _prod_grad_reference(a, dims):
    """d prod / d a by brute force: the product of the other elements of each slice."""
    res = np.empty_like(a, dtype=np.float64)
    for idx in np.ndindex(a.shape):
        sl = tuple(slice(None) if d in dims else idx[d] for d in range(a.ndim))
        block = np.array(a[sl], np.float64)
        block[tuple(idx[d] for d in dims)] = 1.0
        res[idx] = block.prod()
    return res


@pytest.mark.parametrize("zeros", [0, 1, 2])
@pytest.mark.parametrize("dim", [None, 0, 1])
def test_prod_gradient_with_zeros_matches_brute_force(zeros, dim):
    rng = np.random.default_rng(zeros)
    a = rng.uniform(0.5, 1.5, (4, 5)).astype(np.float64)
    a[1, 2] = 0.0 if zeros else a[1, 2]
    if zeros == 2:
        a[3, 2] = 0.0
        a[1, 4] = 0.0
    x = newch.tensor(a, requires_grad=True)
    x.prod(dim).sum().backward()
    dims = (0, 1) if dim is None else (dim,)
    np.testing.assert_allclose(x.grad.numpy(), _prod_grad_reference(a, dims), rtol=1e-12)


def test_prod_gradient_of_0d_zero():
    x = newch.tensor(0.0, requires_grad=True)
    x.prod().backward()
    assert x.grad.item() == 1.0


def test_prod_gradient_with_zeros_matches_torch(torch):
    rng = np.random.default_rng(5)
    a = rng.uniform(-2, 2, (6, 7)).astype(np.float32)
    a[2, 3] = a[4, 3] = a[5, 1] = 0.0
    for dim in (0, 1):
        x = newch.tensor(a, requires_grad=True)
        t = torch.tensor(a, requires_grad=True)
        x.prod(dim).sum().backward()
        t.prod(dim).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-6)


def test_prod_backward_with_a_zero_is_fast_and_arena_only():
    x = newch.rand(400, 400, dtype=newch.float64) + 0.5
    x[7, 9] = 0.0
    x.requires_grad_(True)

    def run():
        x.grad = None
        x.prod(1).sum().backward()
    t0 = time.perf_counter()
    peak = _numpy_peak(run)
    assert time.perf_counter() - t0 < 5.0       # 160k elements: a Python loop took ~10 s
    assert peak < 256 << 10                     # float64 copies of x would be 1.2+ MiB
    g = x.grad.numpy()
    assert g[7, 9] == pytest.approx(np.prod(np.delete(x.detach().numpy()[7], 9)), rel=1e-12)
    assert (g[7, np.arange(400) != 9] == 0).all()
