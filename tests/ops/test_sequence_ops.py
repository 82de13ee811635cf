"""Finite-difference checks and hand-computed values for the sequence-model tensor ops."""
import numpy as np
import pytest

import newch
import newch.nn.functional as F
from tests.autograd.gradcheck import gradcheck

RNG = np.random.default_rng(0)


def _x(*shape):
    return RNG.uniform(-2, 2, size=shape)


@pytest.mark.parametrize("fn", [
    lambda x: newch.cumsum(x, 1),
    lambda x: newch.cumprod(x, 0),
    lambda x: newch.flip(x, (0, 1)),
    lambda x: newch.roll(x, (1, -2), (0, 1)),
    lambda x: newch.tril(x, -1) + newch.triu(x, 1) * 2,
    lambda x: x.repeat(2, 1, 3),
    lambda x: newch.tile(x, (2,)),
    lambda x: newch.repeat_interleave(x, newch.tensor([1, 0, 2, 1]), dim=1),
    lambda x: newch.sort(x, 1, descending=True).values,
    lambda x: newch.topk(x, 2, dim=0).values,
    lambda x: F.normalize(x, dim=1),
    lambda x: F.normalize(x, p=1.0, dim=0),
])
def test_unary_ops_match_finite_differences(fn):
    gradcheck(fn, _x(3, 4))


def test_cumprod_with_zeros_matches_finite_differences():
    x = np.array([[1.5, 0.0, 2.0, -1.0], [0.0, 0.0, 3.0, 1.0], [2.0, -1.0, 0.5, 0.0]])
    gradcheck(lambda t: newch.cumprod(t, 1), x)


@pytest.mark.parametrize("eq, sa, sb", [
    ("ij,jk->ik", (2, 3), (3, 4)), ("bhqd,bhkd->bhqk", (2, 2, 3, 4), (2, 2, 5, 4)),
    ("ijk,k->ji", (2, 3, 4), (4,)), ("i,j->ij", (3,), (2,))])
def test_einsum_matches_numpy_and_finite_differences(eq, sa, sb):
    a, b = _x(*sa), _x(*sb)
    got = newch.einsum(eq, newch.tensor(a), newch.tensor(b)).numpy()
    np.testing.assert_allclose(got, np.einsum(eq, a, b), rtol=1e-12, atol=1e-12)
    gradcheck(lambda p, q: newch.einsum(eq, p, q), a, b)


def test_baddbmm_and_cosine_match_finite_differences():
    gradcheck(lambda i, p, q: newch.baddbmm(i, p, q, beta=0.5, alpha=2.0), _x(3, 1), _x(2, 3, 4), _x(2, 4, 1))
    gradcheck(lambda p, q: F.cosine_similarity(p, q, dim=-1), _x(3, 4), _x(4))


def test_values_by_hand():
    x = newch.tensor([[3.0, 1.0, 2.0], [0.0, 5.0, 5.0]])
    assert newch.cumsum(x, 1).tolist() == [[3.0, 4.0, 6.0], [0.0, 5.0, 10.0]]
    assert newch.cumprod(x, 0).tolist() == [[3.0, 1.0, 2.0], [0.0, 5.0, 10.0]]
    v, i = newch.sort(x, 1, descending=True)
    assert v.tolist() == [[3.0, 2.0, 1.0], [5.0, 5.0, 0.0]] and i.tolist() == [[0, 2, 1], [1, 2, 0]]
    assert newch.topk(x, 1).indices.tolist() == [[0], [1]]
    assert newch.roll(newch.arange(5), 2).tolist() == [3, 4, 0, 1, 2]
    assert newch.repeat_interleave(newch.tensor([2, 0, 1])).tolist() == [0, 0, 2]
    assert newch.triu(newch.ones(2, 3), 1).tolist() == [[0, 1, 1], [0, 0, 1]]
    assert x.new_full((1,), 4).tolist() == [4.0] and x.new_zeros(2).dtype == newch.float32


def test_multinomial_is_seeded_and_respects_probabilities():
    p = newch.tensor([[0.0, 1.0, 3.0], [1.0, 2.0, 0.0]])
    g = newch.Generator().manual_seed(3)
    a = newch.multinomial(p, 2, generator=g)
    g.manual_seed(3)
    assert newch.multinomial(p, 2, generator=g).tolist() == a.tolist()
    assert sorted(a[0].tolist()) == [1, 2]
    draws = newch.multinomial(newch.tensor([1.0, 3.0]), 4000, replacement=True, generator=g)
    assert abs(draws.float().mean().item() - 0.75) < 0.03
    with pytest.raises(RuntimeError, match="multinomial"):
        newch.multinomial(p, 3)
    with pytest.raises(RuntimeError, match="multinomial"):
        newch.multinomial(newch.tensor([-1.0, 2.0]), 1)


def test_bad_arguments_name_the_op():
    with pytest.raises(RuntimeError, match="tril"):
        newch.tril(newch.ones(3))
    with pytest.raises(RuntimeError, match="einsum"):
        newch.einsum("ij,jk->ik", newch.ones(2, 3), newch.ones(4, 2))
    with pytest.raises(RuntimeError, match="topk"):
        newch.topk(newch.ones(3), 4)
    with pytest.raises(IndexError, match="flip"):
        newch.flip(newch.ones(3), (1,))
