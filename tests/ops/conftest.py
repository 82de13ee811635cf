"""Shared fixtures for the forward-op tests: a fresh seed per test and a clean step after it."""
import numpy as np
import pytest

import newch


@pytest.fixture(autouse=True)
def _fresh_step():
    """Each test starts from seed 0 and its temporaries are freed when it ends."""
    newch.manual_seed(0)
    yield
    newch.step_end()


@pytest.fixture
def rng():
    """A numpy generator for input data, independent of newch's own generator."""
    return np.random.default_rng(1234)


@pytest.fixture
def torch():
    """PyTorch, for comparison only; the test is skipped where it is not installed."""
    return pytest.importorskip("torch")
