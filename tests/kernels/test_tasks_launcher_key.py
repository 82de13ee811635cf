"""tasks.run / chunked find their launcher by a cheap key: arguments of different numba types
never share one (a wrong launcher would read memory with the wrong layout or dtype)."""
import numpy as np
import pytest

pytest.importorskip("numba", reason="JIT kernel tests need numba")

from newch.kernels import tasks


def _args():
    c32, c64 = np.zeros(4, np.float32), np.zeros(4, np.float64)
    strided = np.zeros(8, np.float32)[::2]
    return [c32, c64, strided, np.zeros((2, 2), np.float32), np.zeros(4, np.int64), 1, 1.0, True,
            np.bool_(True), np.float32(1.0), np.float64(1.0), np.int32(1)]


def test_equal_keys_mean_equal_signatures_and_different_types_differ():
    seen = {}
    for a in _args():
        key, sig = tasks._type_key((a,)), tasks.signature((a,))
        assert seen.setdefault(key, sig) == sig
    sigs = {tasks.signature((a,)) for a in _args()}
    keys = {tasks._type_key((a,)) for a in _args()}
    assert len(keys) >= len(sigs)
    # the layout is part of the key: a strided view never takes the contiguous launcher
    c, s = np.zeros(4, np.float32), np.zeros(8, np.float32)[::2]
    assert tasks._type_key((c,)) != tasks._type_key((s,))


def test_run_strided_shares_one_compilation_across_layouts():
    from newch.kernels import reduce as R
    from newch.kernels.codes import ARGMAX
    x = np.random.default_rng(0).integers(-50, 50, size=(3, 6, 5)).astype(np.int16)
    views = [x, np.ascontiguousarray(x.transpose(2, 1, 0)).transpose(2, 1, 0),
             x[:, ::-1, :][:, ::-1, :]]
    for v in views:
        val, at = np.zeros((3, 5), np.int16), np.zeros((3, 5), np.int64)
        R.argreduce_3d(ARGMAX, v, val, at)
        np.testing.assert_array_equal(at, x.argmax(axis=1))
        np.testing.assert_array_equal(val, x.max(axis=1))
    k = R._KERNELS[(R._argreduce_3d, ARGMAX, "")]
    i16 = [s for s in k.overloads if str(s[0].dtype) == "int16"]
    assert len(i16) == 1 and i16[0][0].layout == "A"
