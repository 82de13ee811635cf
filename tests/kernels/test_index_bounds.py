"""Index-taking kernels check their indices whatever the caller passed: IndexError, no write.

Both backends (Numba and the numpy ``ref`` twins) must refuse an index outside
[0, D) before writing anything, on the serial path and the parallel one.
"""
import numpy as np
import pytest

numba = pytest.importorskip("numba", reason="JIT kernel tests need numba (not installed: the ref backend is tested elsewhere)")
from newch.kernels import indexing as K
from newch.kernels.ref import indexing as REF

BACKENDS = [pytest.param(K, id="jit"), pytest.param(REF, id="ref")]
BAD = [-1, 3, 10 ** 12, -(10 ** 12)]


def _rows(O, J, I):
    return np.arange(O * J * I, dtype=np.float64).reshape(O, J, I)


@pytest.mark.parametrize("bad", BAD)
@pytest.mark.parametrize("size", [(2, 4), (40, 1000)], ids=["serial", "parallel"])
@pytest.mark.parametrize("B", BACKENDS)
def test_row_kernels_refuse_out_of_range_rows(B, size, bad):
    O, I = size
    D, J = 3, 4
    idx = np.array([0, 2, bad, 1], np.int64)
    for name, args in [
        ("index_select_3d", lambda: (_rows(O, D, I), idx, np.zeros((O, J, I)))),
        ("index_put_3d", lambda: (np.zeros((O, D, I)), idx, _rows(O, J, I), False)),
        ("index_put_3d", lambda: (np.zeros((O, D, I)), idx, _rows(O, J, I), True)),
    ]:
        a = args()
        written = a[2] if name == "index_select_3d" else a[0]
        with pytest.raises(IndexError):
            getattr(B, name)(*a)
        assert not written.any(), f"{name} wrote before refusing index {bad}"


@pytest.mark.parametrize("bad", BAD)
@pytest.mark.parametrize("size", [(2, 4), (40, 1000)], ids=["serial", "parallel"])
@pytest.mark.parametrize("B", BACKENDS)
def test_cell_kernels_refuse_out_of_range_cells(B, size, bad):
    O, I = size
    D, J = 3, 2
    idx = np.zeros((O, J, I), np.int64)
    idx[O - 1, J - 1, I - 1] = bad          # the very last cell: the check must cover them all
    out = np.zeros((O, J, I))
    with pytest.raises(IndexError):
        B.gather_3d(_rows(O, D, I), idx, out)
    assert not out.any()
    acc = np.zeros((O, D, I))
    with pytest.raises(IndexError):
        B.scatter_add_3d(acc, idx, _rows(O, J, I))
    assert not acc.any()


@pytest.mark.parametrize("B", BACKENDS)
def test_masked_select_refuses_mismatched_lengths(B):
    x = np.arange(5.0)
    out = np.zeros(2)
    with pytest.raises(IndexError):
        B.masked_select(x, np.ones(6, np.bool_), np.zeros(6))
    with pytest.raises(IndexError):
        B.masked_select(x, np.ones(5, np.bool_), out)      # 5 Trues, room for 2
    assert not out.any()


@pytest.mark.parametrize("dtype", [np.int64, np.int32])
@pytest.mark.parametrize("B", BACKENDS)
def test_wrap_index_normalises_and_reports_the_first_bad_position(B, dtype):
    out = np.full(4, -7, np.int64)
    bad = np.zeros(1, np.int64)
    B.wrap_index(np.array([0, -1, 4, -5], dtype), 5, True, out, bad)
    assert bad[0] == -1 and out.tolist() == [0, 4, 4, 0]
    B.wrap_index(np.array([0, -1, 4], dtype), 5, False, out, bad)
    assert bad[0] == 1 and out[0] == 0
    B.wrap_index(np.array([1, 2, 5, -9], dtype), 5, True, out, bad)
    assert bad[0] == 2
    B.wrap_index(np.array([1, -6], dtype), 5, True, out, bad)
    assert bad[0] == 1
