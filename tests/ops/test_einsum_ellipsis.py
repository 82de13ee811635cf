"""einsum with '...': values against numpy (and torch where installed), gradients against finite
differences, broadcasting of size-1 dims, and clear errors."""
import numpy as np
import pytest

import newch
from tests.autograd.gradcheck import gradcheck

RNG = np.random.default_rng(1)

# (equation, shapes, numpy can evaluate it): numpy refuses '...' dims missing from an explicit
# output; PyTorch sums them, and so does newch.
CASES = [
    ("...ij,...jk->...ik", [(5, 2, 3), (3, 4)], True),
    ("...ij,...jk", [(5, 1, 2, 3), (4, 3, 2)], True),
    ("...qd,...kd->...qk", [(2, 1, 4, 5), (3, 6, 5)], True),
    ("...i,i->...", [(2, 3, 4), (4,)], True),
    ("i,...->...i", [(3,), (2, 1)], True),
    ("...,...", [(2, 1), (3,)], True),
    ("i...->...i", [(2, 3, 4)], True),
    ("b...,b...->b", [(3, 4, 5), (3, 4, 5)], False),
    ("...->", [(2, 3)], False),
]


@pytest.mark.parametrize("eq,shapes,np_ok", CASES)
def test_ellipsis_matches_numpy_and_finite_differences(eq, shapes, np_ok):
    arrays = [RNG.standard_normal(s) for s in shapes]
    got = newch.einsum(eq, *[newch.tensor(a) for a in arrays]).numpy()
    if np_ok:
        want = np.einsum(eq, *arrays)
    else:   # the '...' dims are summed: name them for numpy
        want = np.einsum(eq.replace("...", "xy"), *arrays)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    gradcheck(lambda *ts: newch.einsum(eq, *ts), *arrays)


@pytest.mark.parametrize("eq,shapes,np_ok", CASES)
def test_ellipsis_matches_torch(eq, shapes, np_ok):
    torch = pytest.importorskip("torch")
    arrays = [RNG.standard_normal(s).astype(np.float32) for s in shapes]
    got = newch.einsum(eq, *[newch.tensor(a) for a in arrays]).numpy()
    want = torch.einsum(eq, *[torch.tensor(a) for a in arrays]).numpy()
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_attention_scores_with_ellipsis_equal_matmul():
    q, k = newch.randn(2, 4, 6, 8), newch.randn(2, 4, 5, 8)
    got = newch.einsum("...qd,...kd->...qk", q, k)
    np.testing.assert_allclose(got.numpy(), (q @ k.transpose(-1, -2)).numpy(), rtol=1e-5, atol=1e-5)


def test_bad_ellipsis_names_the_op():
    with pytest.raises(ValueError, match="einsum"):
        newch.einsum("..i,ij", newch.ones(2, 3), newch.ones(3, 2))
    with pytest.raises(ValueError, match="einsum"):
        newch.einsum("......i", newch.ones(2, 3))
    with pytest.raises(RuntimeError, match="einsum"):
        newch.einsum("...ijk", newch.ones(2, 3))
    with pytest.raises(RuntimeError, match="einsum"):       # 3 and 4 do not broadcast
        newch.einsum("...i,...i", newch.ones(3, 2), newch.ones(4, 2))
