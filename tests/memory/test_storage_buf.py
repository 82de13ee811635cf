"""An arena storage is made without its byte slice; ``buf`` cuts it from the block on demand."""
import numpy as np

import newch
from newch.memory import Arena


def test_buf_is_the_storages_bytes_in_its_block():
    a = Arena(block_bytes=1 << 12)
    a.alloc(100)
    st = a.alloc(40)
    assert st.buf.nbytes == st.nbytes == 64
    assert st.buf.ctypes.data == st.block.ctypes.data + st.offset
    assert st.buf.ctypes.data % 64 == 0


def test_tensor_array_sits_on_its_storage_bytes():
    x = newch.arange(10, dtype=newch.float32) + 1
    a = x._data("test")
    assert a.ctypes.data == x._s.buf.ctypes.data
    np.testing.assert_array_equal(x._s.buf[:40].view(np.float32), np.arange(1, 11))


def test_released_arena_storage_has_no_bytes_and_its_tensor_is_stale():
    x = newch.ones(10) * 2
    st = x._s
    newch.release(x)
    assert st.buf is None and not x.is_alive
