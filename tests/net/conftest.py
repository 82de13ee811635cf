"""Fixtures for tests/net: torch (skips when absent) and a fixed seed per test."""
import pytest

import newch


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def _seed():
    newch.manual_seed(0)
    yield
