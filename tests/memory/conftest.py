"""Fixtures of the memory tests."""
import pytest

import newch


@pytest.fixture
def ctx():
    """A fresh default context (seed 0) for the test; the previous one is restored after."""
    prev = newch.default_context()
    c = newch.Context(seed=0)
    newch.set_default_context(c)
    yield c
    newch.set_default_context(prev)
