"""Views without copying on every supported numpy (reshape(copy=False) is numpy >= 2.1 only)."""
import numpy as np
import pytest

import newch
from newch.ops import layout


@pytest.fixture(params=["numpy>=2.1 keyword", "shape assignment (numpy 1.24)"])
def path(request, monkeypatch):
    if request.param.startswith("shape"):
        monkeypatch.setattr(layout, "_RESHAPE_HAS_COPY", False)
    elif not layout._RESHAPE_HAS_COPY:
        pytest.skip("this numpy has no reshape(copy=False)")
    return request.param


def test_contiguous_reshape_is_a_view(path):
    a = np.arange(12.0)
    v = layout.reshape_view(a, (3, 4))
    assert v.shape == (3, 4) and np.shares_memory(v, a)
    v[0, 0] = 99
    assert a[0] == 99


def test_reshape_that_needs_a_copy_gives_none(path):
    a = np.arange(12.0).reshape(3, 4).T
    assert layout.reshape_view(a, (12,)) is None
    assert layout.reshape_view(a, (4, 3)).shape == (4, 3)          # same shape: still a view


def test_strided_but_compatible_reshape_is_a_view(path):
    a = np.arange(24.0).reshape(4, 6)[:, :3]                       # rows of 3, stride 6
    v = layout.reshape_view(a, (4, 3, 1))
    assert v is not None and np.shares_memory(v, a)


def test_view_and_reshape_of_tensors(path):
    x = newch.arange(12.0)
    y = x.view(3, 4)
    y[0, 0] = 5.0
    assert x[0].item() == 5.0                                       # a view, not a copy
    t = newch.arange(12.0).reshape(3, 4).t()
    with pytest.raises(ValueError, match="view"):
        t.view(12)
    assert t.reshape(12).tolist() == np.arange(12.0).reshape(3, 4).T.reshape(12).tolist()
