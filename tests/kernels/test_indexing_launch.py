"""The indexing launchers: one compiled signature per dtype whatever the operands' layout, and
clear errors for arrays the kernels cannot take (checked before anything is written)."""
import numpy as np
import pytest

numba = pytest.importorskip("numba", reason="JIT kernel tests need numba")
from newch.kernels import indexing as K


def _sigs(task, dtype):
    """The signatures ``task`` was compiled for whose first array has ``dtype``."""
    want = numba.from_dtype(np.dtype(dtype))
    return [s for s in task.overloads if s[0].dtype == want]


def _layouts(x):
    """x contiguous, strided, transposed, read-only and broadcast (stride 0) views of equal value."""
    big = np.zeros(x.shape[:-1] + (2 * x.shape[-1],), x.dtype)
    big[..., ::2] = x
    t = np.ascontiguousarray(x.transpose(2, 1, 0)).transpose(2, 1, 0)
    ro = x.copy()
    ro.flags.writeable = False
    b = np.broadcast_to(x[:1], x.shape)
    return [x, big[..., ::2], t, ro, b]


@pytest.mark.parametrize("dtype", [np.int16, np.float32])
def test_one_signature_per_dtype_whatever_the_layout(dtype):
    x = np.arange(2 * 5 * 3).astype(dtype).reshape(2, 5, 3)
    idx = np.array([4, 0, 4])
    for xv in _layouts(x):
        for n in (1, 40000):          # serial and parallel paths share the task function
            big = np.broadcast_to(xv[:, :, :1], (2, 5, n)) if n > 1 else xv
            out = np.zeros((2, 3, big.shape[2]), dtype)
            K.index_select_3d(big, idx, out)
            np.testing.assert_array_equal(out, big[:, idx, :])
        d4 = np.zeros((1,) + x.shape, dtype)
        K.masked_fill_nd(d4[..., ::-1], np.broadcast_to(xv[None] > 3, d4.shape), 7)
        np.testing.assert_array_equal(d4[..., ::-1], np.where(xv[None] > 3, 7, 0))
    assert len(_sigs(K._select_tasks, dtype)) == 1
    assert len(_sigs(K._fill_tasks, dtype)) == 1


def test_bad_arrays_raise_before_writing():
    x, out = np.ones((2, 5, 3)), np.zeros((2, 3, 3))
    with pytest.raises(TypeError, match="index_select_3d"):
        K.index_select_3d(x, np.array([0.0, 1.0, 2.0]), out)
    with pytest.raises(ValueError, match="index_select_3d: shapes"):
        K.index_select_3d(x, np.array([0, 1]), out)
    with pytest.raises(ValueError, match="gather_3d: shapes"):
        K.gather_3d(x, np.zeros((2, 3, 4), np.int64), out)
    with pytest.raises(ValueError, match="index_put_3d"):
        K.index_put_3d(x, np.array([0, 1, 2]), np.ones((2, 3)), True)
    ro = np.zeros((2, 5, 3))
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        K.scatter_add_3d(ro, np.zeros((2, 3, 3), np.int64), out)
    with pytest.raises(ValueError, match="masked_fill_nd"):
        K.masked_fill_nd(np.zeros((1, 2, 5, 3)), np.ones((1, 2, 5, 3), np.int8), 1.0)
    assert not out.any()
