"""Convolution and pooling on non-contiguous inputs: the contiguous copy the kernels need lives in
arena scratch (counted, reused, freed with the step), never in numpy memory the arena does not see."""
import numpy as np
import pytest

import newch
import newch.nn.functional as F


def _peak_of(fn):
    newch.step_end()
    ctx = newch.default_context()
    ctx.reset_peak()
    base = newch.mem_stats()["arena_bytes_in_use"]
    out = fn()
    peak = newch.mem_stats()["arena_peak_bytes"] - base
    return out, peak


@pytest.mark.parametrize("op", ["conv2d", "max_pool2d", "avg_pool2d"])
def test_a_transposed_input_is_copied_in_the_arena_and_gives_the_contiguous_result(op):
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal((4, 3, 12, 10)).astype(np.float32)
    with newch.persistent():
        w = newch.tensor(rng.standard_normal((5, 3, 3, 3)).astype(np.float32))
        # same values, laid out (N, C, W, H) in memory and seen as (N, C, H, W): not C-contiguous
        xt = newch.tensor(np.ascontiguousarray(x_np.transpose(0, 1, 3, 2))).transpose(2, 3)
        xc = newch.tensor(x_np)
    run = {"conv2d": lambda x: F.conv2d(x, w), "max_pool2d": lambda x: F.max_pool2d(x, 2),
           "avg_pool2d": lambda x: F.avg_pool2d(x, 2)}[op]
    want, peak_c = _peak_of(lambda: run(xc).numpy())
    got, peak_t = _peak_of(lambda: run(xt).numpy())
    np.testing.assert_array_equal(got, want)
    # the copy (x_np.nbytes) was made in arena scratch: the peak grew by at least its size
    assert peak_t - peak_c >= x_np.nbytes


def test_max_pool_indices_match_a_hand_computation():
    x = newch.tensor(np.arange(2 * 5 * 7, dtype=np.float32).reshape(1, 2, 5, 7)[..., ::-1].copy())
    out, idx = F.max_pool2d(x, (2, 3), stride=(2, 2), padding=(1, 1), return_indices=True)
    xa = x.numpy()
    flat = xa.reshape(1, 2, -1)
    # every index points at its window's value in the unpadded plane
    np.testing.assert_array_equal(np.take_along_axis(flat, idx.numpy().reshape(1, 2, -1), 2),
                                  out.numpy().reshape(1, 2, -1))
    torch = pytest.importorskip("torch")
    t_out, t_idx = torch.nn.functional.max_pool2d(torch.tensor(xa), (2, 3), stride=(2, 2),
                                                  padding=(1, 1), return_indices=True)
    np.testing.assert_array_equal(idx.numpy(), t_idx.numpy())
