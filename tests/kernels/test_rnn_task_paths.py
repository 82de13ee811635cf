"""The rnn kernels as task functions (kernels/rnn.py): every kernel on serial and parallel sizes,
float32 and float64, contiguous and strided inputs, against its numpy twin; the same bits on 1
and 2 threads and on the serial and parallel paths; bad shapes raise before anything is written;
the serial path (the task function's dispatcher) and the parallel one (tasks.run) compile one
signature for the arrays the recurrent layers pass."""
import numpy as np
import pytest

numba = pytest.importorskip("numba", reason="JIT kernel tests need numba (not installed: the ref backend is tested elsewhere)")
from numba.core import types

from newch.kernels import rnn as jr, tasks
from newch.kernels.ref import rnn as rr

from .thread_check import outputs_on_1_and_2_threads

# (B, H): at or below SERIAL_MAX, then above it with B not a multiple of anything
CELL_SHAPES = [(1, 1), (3, 5), (20, 200), (257, 300)]
# (M, K, N): at or below MATMUL_SERIAL, then above it with M not a multiple of ROW_BLOCK
MM_SHAPES = [(1, 1, 1), (7, 5, 3), (20, 800, 200), (700, 400, 90), (33, 1000, 200)]


def _rand(seed):
    rng = np.random.default_rng(seed)
    return lambda dt, *s: rng.standard_normal(s).astype(dt)   # noqa: E731


def _wide(r, dt, B, W, strided):
    """A (B, W) operand: C-contiguous, or a view of a wider array (typed 'A')."""
    x = r(dt, B, W + 3)[:, :W]
    return x if strided else np.ascontiguousarray(x)


def _lstm(K, B, H, dt, strided):
    r = _rand(B * 7 + H)
    gx, rec, bias, c0 = r(dt, B, 4 * H), _wide(r, dt, B, 4 * H, strided), r(dt, 4 * H), r(dt, B, H)
    dh_out, dh_rec, dc = r(dt, B, H), r(dt, B, H), r(dt, B, H)
    g, c, h = gx.copy(), np.empty_like(c0), np.empty_like(c0)
    K.lstm_cell_forward(g, rec, bias, c0, c, h)
    acts = g.copy()
    K.lstm_cell_backward(g, c0, c, dh_out, dh_rec, dc)
    return [acts, c, h, g, dc]


def _gru(K, B, H, dt, strided):
    r = _rand(B * 7 + H + 1)
    gx, rec, b_ih, b_hh = r(dt, B, 3 * H), _wide(r, dt, B, 3 * H, strided), r(dt, 3 * H), r(dt, 3 * H)
    h0, dh_out, dh = r(dt, B, H), r(dt, B, H), r(dt, B, H)
    g, hn, h = gx.copy(), np.empty_like(h0), np.empty_like(h0)
    K.gru_cell_forward(g, rec, b_ih, b_hh, h0, hn, h)
    acts, hn_fwd = g.copy(), hn.copy()
    dgh = np.empty_like(gx)
    K.gru_cell_backward(g, hn, h0, dh_out, dh, dgh)
    return [acts, hn_fwd, h, g, hn, dh, dgh]


def _elman(K, B, H, dt, strided, relu):
    r = _rand(B * 7 + H + 2)
    gx, rec, bias = r(dt, B, H), _wide(r, dt, B, H, strided), r(dt, H)
    dh_out, dh_rec = r(dt, B, H), r(dt, B, H)
    h, dpre = np.empty_like(dh_out), np.empty_like(dh_out)
    K.rnn_cell_forward(gx, rec, bias, h, relu)
    K.rnn_cell_backward(h, dh_out, dh_rec, dpre, relu)
    return [h, dpre]


def _mm(K, M, Kd, N, dt, strided):
    r = _rand(M * 5 + Kd * 3 + N)
    a = r(dt, Kd, M).T if strided else r(dt, M, Kd)    # strided: a transposed view
    a[a < -1.5] = 0.0                                    # zeros: the kernel skips them
    b, start = r(dt, Kd, N), r(dt, M, N)
    out, acc = np.full((M, N), np.nan, dt), start.copy()
    K.rows_matmul(a, b, out, False)
    K.rows_matmul(a, b, acc, True)
    return [out, acc]


def _cases():
    """(name, run(K) -> list of output arrays, dtype) for every kernel, shape and layout."""
    cases = []
    for dt in (np.float32, np.float64):
        for strided in (False, True) if dt == np.float32 else (False,):
            for B, H in CELL_SHAPES:
                tag = f"{B}x{H} {np.dtype(dt).name}{' strided' if strided else ''}"
                cases.append((f"lstm {tag}", lambda K, a=(B, H, dt, strided): _lstm(K, *a), dt))
                cases.append((f"gru {tag}", lambda K, a=(B, H, dt, strided): _gru(K, *a), dt))
                for relu in (False, True):
                    cases.append((f"rnn {tag} relu={relu}",
                                  lambda K, a=(B, H, dt, strided, relu): _elman(K, *a), dt))
            for M, Kd, N in MM_SHAPES:
                tag = f"{M}x{Kd}x{N} {np.dtype(dt).name}{' strided' if strided else ''}"
                cases.append((f"rows_matmul {tag}", lambda K, a=(M, Kd, N, dt, strided): _mm(K, *a), dt))
    return cases


def det_outputs():
    """The bytes of every output of every case, in order."""
    return [x.tobytes() for _, run, _ in _cases() for x in run(jr)]


def test_every_kernel_matches_its_ref_twin_on_serial_and_parallel_sizes():
    for name, run, dt in _cases():
        tol = 1e-5 if dt == np.float32 else 1e-12
        if name.startswith("rows_matmul"):
            tol *= 20         # K-long sums in the input dtype (ref: numpy's matmul order)
        for got, want in zip(run(jr), run(rr)):
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=name)


def test_same_bits_on_1_and_2_threads():
    one, two = outputs_on_1_and_2_threads(det_outputs)
    assert one == two


def test_serial_and_parallel_paths_give_the_same_bits(monkeypatch):
    # the wrappers read the thresholds at call time: every size through one path, then the other
    natural = det_outputs()
    monkeypatch.setattr(jr, "SERIAL_MAX", 1 << 62)
    monkeypatch.setattr(jr, "MATMUL_SERIAL", 1 << 62)
    serial = det_outputs()
    monkeypatch.setattr(jr, "SERIAL_MAX", -1)
    monkeypatch.setattr(jr, "MATMUL_SERIAL", -1)
    parallel = det_outputs()
    assert serial == natural
    assert parallel == natural


def _bad_calls():
    """(kernel name, args with one bad shape) per kernel; the first array is an output."""
    f = lambda *s: np.full(s, 7.0, np.float32)   # noqa: E731
    return [
        ("lstm_cell_forward", (f(2, 12), f(2, 12), f(11), f(2, 3), f(2, 3), f(2, 3))),
        ("lstm_cell_forward", (f(2, 12), f(2, 12), f(12), f(2, 3), f(2, 3), f(2, 4))),
        ("lstm_cell_backward", (f(2, 12), f(2, 3), f(2, 3), f(2, 3), f(3, 3), f(2, 3))),
        ("lstm_cell_backward", (f(2, 12), f(2, 3), f(2, 3, 1), f(2, 3), f(2, 3), f(2, 3))),
        ("rows_matmul", (f(2, 3), f(4, 2), f(2, 2), False)),
        ("rows_matmul", (f(2, 2), f(2, 3), f(2, 3)[:1], True)),
        ("rows_matmul", (f(2, 2), f(2), f(2, 1), False)),
        ("gru_cell_forward", (f(2, 9), f(2, 9), f(9), f(8), f(2, 3), f(2, 3), f(2, 3))),
        ("gru_cell_forward", (f(2, 9), f(2, 9), f(9), f(9), f(2, 3), f(1, 3), f(2, 3))),
        ("gru_cell_backward", (f(2, 9), f(2, 3), f(2, 3), f(2, 3), f(2, 3), f(2, 8))),
        ("rnn_cell_forward", (f(2, 3), f(2, 3), f(4), f(2, 3), False)),
        ("rnn_cell_forward", (f(2, 3), f(2, 3), f(3), f(3), True)),
        ("rnn_cell_backward", (f(2, 3), f(2, 3), f(2, 3), f(2, 4), True)),
    ]


@pytest.mark.parametrize("K", [jr, rr], ids=["numba", "ref"])
def test_bad_shapes_raise_naming_the_kernel_before_any_write(K):
    for name, args in _bad_calls():
        before = [a.copy() for a in args if isinstance(a, np.ndarray)]
        with pytest.raises(ValueError, match=name):
            getattr(K, name)(*args)
        after = [a for a in args if isinstance(a, np.ndarray)]
        assert all(np.array_equal(x, y) for x, y in zip(before, after)), name


def test_serial_dispatch_and_parallel_launch_share_one_signature():
    # the serial path calls the task function's dispatcher (numba types the arguments), the
    # parallel one tasks.run (tasks.signature types them): for the writable C-contiguous and
    # strided arrays the layers pass, both must name one compilation
    f = lambda *s: np.zeros(s, np.float32)   # noqa: E731
    strided = np.zeros((4, 9), np.float32)[:, :8]
    calls = [
        (jr._lstm_fwd_rows, (f(4, 8), strided, f(8), f(4, 2), f(4, 2), f(4, 2))),
        (jr._lstm_bwd_rows, (f(4, 8), f(4, 2), f(4, 2), f(4, 2), strided[:, :2], f(4, 2))),
        (jr._rows_blocks, (strided, f(8, 3), f(4, 3), True)),
        (jr._gru_fwd_rows, (f(4, 6), strided[:, :6], f(6), f(6), f(4, 2), f(4, 2), f(4, 2))),
        (jr._gru_bwd_rows, (f(4, 6), f(4, 2), f(4, 2), f(4, 2), f(4, 2), f(4, 6))),
        (jr._rnn_fwd_rows, (f(4, 2), strided[:, :2], f(2), f(4, 2), np.bool_(True))),
        (jr._rnn_bwd_rows, (f(4, 2), f(4, 2), f(4, 2), f(4, 2), False)),
    ]
    i64 = (types.int64, types.int64)
    for task, args in calls:
        by_numba = tuple(numba.typeof(a) for a in args + (0, 1))
        assert by_numba == tasks.signature(args) + i64, task
        task(*args, 0, 1)
        assert by_numba in task.overloads, task
