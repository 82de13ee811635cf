"""Shared fixtures for the autograd tests: grad mode on, a fixed seed, temporaries freed after."""
import pytest

import newch


@pytest.fixture(autouse=True)
def _fresh_step():
    """Each test starts with grad recording on and seed 0; its temporaries die when it ends."""
    newch.set_grad_enabled(True)
    newch.manual_seed(0)
    yield
    newch.set_grad_enabled(True)
    newch.step_end()


@pytest.fixture
def torch():
    """PyTorch, for comparison only; the test is skipped where it is not installed."""
    return pytest.importorskip("torch")
