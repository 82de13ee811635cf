"""newch.Generator: seeding, state round trips, and its use by the random ops."""
import pytest

import newch


def test_same_seed_same_numbers_across_ops():
    g1, g2 = newch.Generator().manual_seed(3), newch.Generator().manual_seed(3)
    for make in (lambda g: newch.randn(5, generator=g), lambda g: newch.rand(4, generator=g),
                 lambda g: newch.randint(0, 100, (6,), generator=g),
                 lambda g: newch.randperm(9, generator=g),
                 lambda g: newch.empty(3).normal_(generator=g),
                 lambda g: newch.empty(3).uniform_(generator=g)):
        assert make(g1).tolist() == make(g2).tolist()


def test_generator_does_not_touch_the_default_stream():
    newch.manual_seed(0)
    a = newch.randn(3).tolist()
    newch.manual_seed(0)
    newch.randn(100, generator=newch.Generator().manual_seed(5))
    assert newch.randn(3).tolist() == a


def test_get_state_set_state_rewinds():
    g = newch.Generator().manual_seed(11)
    newch.rand(7, generator=g)
    state = g.get_state()
    assert state.dtype == newch.uint8 and state.is_persistent
    first = newch.rand(5, generator=g).tolist()
    g.set_state(state)
    assert newch.rand(5, generator=g).tolist() == first
    assert g.initial_seed() == 11


def test_set_state_refuses_garbage():
    with pytest.raises(RuntimeError, match="set_state"):
        newch.Generator().set_state(newch.tensor([1, 2, 3], dtype=newch.uint8))


def test_seed_reseeds_from_entropy():
    g = newch.Generator()
    s = g.seed()
    assert g.initial_seed() == s
    assert isinstance(s, int)


def test_manual_seed_returns_default_generator_that_follows_the_context():
    g = newch.manual_seed(4)
    assert g is newch.default_generator
    a = newch.randn(3, generator=g).tolist()
    newch.manual_seed(4)
    assert newch.randn(3).tolist() == a


def test_bad_arguments():
    with pytest.raises(TypeError, match="manual_seed"):
        newch.Generator().manual_seed(1.5)
    with pytest.raises(TypeError, match="generator"):
        newch.randn(2, generator=object())
    with pytest.raises(RuntimeError, match="CPU"):
        newch.Generator(device="cuda")
