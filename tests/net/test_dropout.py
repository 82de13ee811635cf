"""Dropout: masks from the context's generator (seeded, thread-count independent), the 1 / (1 - p)
scale, channel masks, backward through the same mask, byte-sized masks, modes and errors."""
import os
import subprocess
import sys

import numpy as np
import pytest

import newch
import newch.nn as nn
import newch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_dropout_zeroes_about_p_and_scales_the_rest():
    x = newch.tensor(np.random.default_rng(0).standard_normal(200_000).astype(np.float32) + 5)
    y = F.dropout(x, 0.3).numpy()
    a = x.numpy()
    kept = y != 0
    assert abs(1 - kept.mean() - 0.3) < 0.01
    np.testing.assert_array_equal(y[kept], a[kept] * np.float32(1 / 0.7))


def test_backward_uses_the_same_mask():
    x = newch.randn(1000, requires_grad=True)
    y = F.dropout(x, 0.5)
    y.backward(newch.ones(1000))
    g = x.grad.numpy()
    kept = y.detach().numpy() != 0
    np.testing.assert_array_equal(g, np.where(kept, 2.0, 0.0).astype(np.float32))


def test_same_seed_same_mask():
    newch.manual_seed(7)
    a = F.dropout(newch.ones(5000), 0.5).numpy()
    newch.manual_seed(7)
    b = F.dropout(newch.ones(5000), 0.5).numpy()
    c = F.dropout(newch.ones(5000), 0.5).numpy()
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_dropout2d_drops_whole_channels():
    x = newch.ones(8, 16, 3, 3, requires_grad=True)
    y = F.dropout2d(x, 0.5)
    ya = y.detach().numpy().reshape(8, 16, 9)
    per_channel = ya[:, :, 0]
    assert set(np.unique(per_channel)) <= {0.0, 2.0}
    np.testing.assert_array_equal(ya, np.repeat(per_channel[:, :, None], 9, axis=2))
    y.backward(newch.ones(8, 16, 3, 3))
    np.testing.assert_array_equal(x.grad.numpy(), y.detach().numpy())


def test_dropout1d_unbatched_and_dropout2d_3d_warning():
    y = F.dropout1d(newch.ones(6, 4), 0.5).numpy()
    np.testing.assert_array_equal(y, np.repeat(y[:, :1], 4, axis=1))
    with pytest.warns(UserWarning, match="dropout2d: received a 3-D input"):
        z = F.dropout2d(newch.ones(2, 6, 4), 0.5).numpy()
    np.testing.assert_array_equal(z, np.repeat(z[:, :, :1], 4, axis=2))


def test_eval_and_p0_return_the_input_and_p1_zeroes():
    x = newch.randn(10)
    assert F.dropout(x, 0.5, training=False) is x
    assert F.dropout(x, 0.0) is x
    m = nn.Dropout(0.5)
    m.eval()
    assert m(x) is x
    np.testing.assert_array_equal(F.dropout(x, 1.0).numpy(), np.zeros(10, np.float32))


def test_inplace_writes_into_the_input_and_keeps_the_graph():
    x = newch.randn(100, requires_grad=True)
    h = x * 1
    y = F.dropout(h, 0.5, inplace=True)
    assert y is h
    y.sum().backward()
    kept = h.detach().numpy() != 0
    np.testing.assert_array_equal(x.grad.numpy(), np.where(kept, 2.0, 0.0).astype(np.float32))


def test_graph_keeps_a_byte_mask_not_a_float_copy():
    """What backward holds after the forward is the one-byte-per-element mask (plus the output)."""
    ctx = newch.default_context()
    x = newch.randn(1 << 18, requires_grad=True)
    newch.step_end()
    with newch.persistent():
        x = newch.randn(1 << 18, requires_grad=True)
    before = ctx.mem_stats()["arena_bytes_in_use"]
    y = F.dropout(x, 0.5)
    held = ctx.mem_stats()["arena_bytes_in_use"] - before
    n = 1 << 18
    assert held <= 4 * n + n + 4096, held      # output (float32) + mask (bool)
    del y
    newch.step_end()


def test_modules_and_errors():
    assert repr(nn.Dropout(0.25)) == "Dropout(p=0.25, inplace=False)"
    assert repr(nn.Dropout2d()) == "Dropout2d(p=0.5, inplace=False)"
    with pytest.raises(ValueError, match="Dropout: dropout probability has to be between 0 and 1, "
                                         "but got 1.5"):
        nn.Dropout(1.5)
    with pytest.raises(ValueError, match="dropout: dropout probability has to be between"):
        F.dropout(newch.ones(2), -0.1)
    with pytest.raises(TypeError, match="dropout: expected a floating point tensor"):
        F.dropout(newch.tensor([1, 2]), 0.5)
    with pytest.raises(RuntimeError, match="dropout1d: expected a 2-D"):
        F.dropout1d(newch.ones(2, 3, 4, 5))


_MASKS = """
import numpy as np, newch, newch.nn.functional as F
newch.set_default_context(newch.Context(seed=3, threads={threads}))
x = newch.ones(1 << 17)
y = F.dropout(x, 0.4)
z = F.dropout2d(newch.ones(4, 32, 8, 8), 0.5)
g = newch.ones(1 << 17, requires_grad=True)
F.dropout(g, 0.2).sum().backward()
print(hash(y.numpy().tobytes()), hash(z.numpy().tobytes()), hash(g.grad.numpy().tobytes()))
"""


@pytest.mark.slow
def test_masks_identical_on_1_and_2_threads():
    outs = []
    for threads in (1, 2):
        env = dict(os.environ, NUMBA_NUM_THREADS="2", PYTHONHASHSEED="0")
        env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
        res = subprocess.run([sys.executable, "-c", _MASKS.format(threads=threads)], env=env,
                             capture_output=True, text=True, timeout=600)
        assert res.returncode == 0, res.stderr[-2000:]
        outs.append(res.stdout.split())
    assert outs[0] == outs[1]
