"""Tensor metadata a PyTorch script reads (``stride()``, ``is_contiguous()``, ``nbytes``...):
the same answers as torch for the same layouts, and nothing read from freed memory."""
import numpy as np
import pytest

import newch
from newch.errors import NcError


def _layouts(lib):
    x = lib.arange(24, dtype=lib.float32).reshape(2, 3, 4)
    return [x, x.transpose(0, 2), x[:, 1:, ::2], x.permute(2, 0, 1), x[0], x.reshape(6, 4).t(),
            x[1, 2], lib.zeros(0, 3), lib.ones(5, dtype=lib.int64)[::2]]


def test_metadata_matches_torch():
    torch = pytest.importorskip("torch")
    for ours, theirs in zip(_layouts(newch), _layouts(torch)):
        assert ours.stride() == theirs.stride()
        for d in range(-ours.ndim, ours.ndim):
            assert ours.stride(d) == theirs.stride(d)
        assert ours.is_contiguous() == theirs.is_contiguous()
        assert ours.nbytes == theirs.nbytes and ours.itemsize == theirs.itemsize
        assert ours.ndimension() == theirs.ndimension()
        assert ours.is_floating_point() == theirs.is_floating_point()
        assert ours.is_complex() is False


def test_metadata_by_hand():
    x = newch.zeros(2, 3)
    assert x.stride() == (3, 1) and x.t().stride() == (1, 3)
    assert x.is_contiguous() and not x.t().is_contiguous() and x.t().contiguous().is_contiguous()
    assert x.nbytes == 24 and x.itemsize == 4 and newch.zeros(3, dtype=newch.float64).nbytes == 24
    assert not newch.zeros(2, dtype=newch.int32).is_floating_point()
    with pytest.raises(IndexError):
        x.stride(2)


def test_metadata_of_a_freed_tensor_reads_no_memory():
    x = newch.zeros(4, 5)
    newch.step_end()
    # NOTE: metadata stays readable (as shape does); reading the values raises
    assert x.stride() == (5, 1) and x.is_contiguous() and x.nbytes == 80
    with pytest.raises(NcError):
        x.sum()
    with newch.persistent():
        p = newch.ones(3, 3)
    newch.release(p)
    assert p.nbytes == 36 and p.ndimension() == 2
    with pytest.raises(NcError):
        p.tolist()
