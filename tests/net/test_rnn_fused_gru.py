"""The fused GRU and Elman RNN (one graph node per layer-direction, ``rnn_fused_gru``) against
PyTorch, the per-step graph and finite differences; their limits raise clearly, and a training
step's arena peak stays within 1.2x of what the graph holds after the forward."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import newch
from newch.nn import rnn_fused
from tests.autograd.gradcheck import gradcheck

CONFIGS = [
    ("GRU", {}),
    ("GRU", dict(num_layers=2, bidirectional=True)),
    ("GRU", dict(batch_first=True, bias=False)),
    ("RNN", dict(num_layers=2)),
    ("RNN", dict(nonlinearity="relu", bidirectional=True)),
    ("RNN", dict(nonlinearity="relu", bias=False, batch_first=True)),
]


def _dirs(kw):
    return (2 if kw.get("bidirectional") else 1) * kw.get("num_layers", 1)


def _data(kw, seed=0, T=7, B=3, I=4, H=5):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((B, T, I) if kw.get("batch_first") else (T, B, I))
    return x, rng.standard_normal((_dirs(kw), B, H))


def _newch_grads(kind, kw, x, h, dtype, fused=True):
    newch.manual_seed(3)
    m = getattr(newch.nn, kind)(4, 5, **kw).to(dtype)
    xt = newch.tensor(x, dtype=dtype, requires_grad=True)
    ht = newch.tensor(h, dtype=dtype, requires_grad=True)
    old, rnn_fused.ENABLED = rnn_fused.ENABLED, fused
    try:
        out, hn = m(xt, ht)
    finally:
        rnn_fused.ENABLED = old
    w = newch.tensor(np.linspace(-1, 1, out.numel()).reshape(out.shape), dtype=dtype)
    ((out * w).sum() + (hn * hn).sum()).backward()
    got = [out, hn, xt.grad, ht.grad] + [p.grad for p in m.parameters()]
    return [a.detach().numpy() for a in got], m


def _torch_grads(torch, kind, kw, x, h, m, dtype):
    tm = getattr(torch.nn, kind)(4, 5, **kw).to(dtype)
    tm.load_state_dict({k: torch.tensor(v.detach().numpy()) for k, v in m.state_dict().items()})
    xt = torch.tensor(x, dtype=dtype, requires_grad=True)
    ht = torch.tensor(h, dtype=dtype, requires_grad=True)
    out, hn = tm(xt, ht)
    w = torch.tensor(np.linspace(-1, 1, out.numel()).reshape(out.shape), dtype=dtype)
    ((out * w).sum() + (hn * hn).sum()).backward()
    return [a.detach().numpy() for a in [out, hn, xt.grad, ht.grad] + [p.grad for p in tm.parameters()]]


@pytest.mark.parametrize("kind, kw", CONFIGS)
@pytest.mark.parametrize("prec", ["float32", "float64"])
def test_fused_matches_torch(kind, kw, prec):
    torch = pytest.importorskip("torch")
    x, h = _data(kw)
    got, m = _newch_grads(kind, kw, x, h, getattr(newch, prec))
    want = _torch_grads(torch, kind, kw, x, h, m, getattr(torch, prec))
    tol = 2e-5 if prec == "float32" else 1e-12
    names = ["out", "h_n", "x.grad", "h0.grad"] + [n for n, _ in m.named_parameters()]
    assert len(got) == len(want) == len(names)
    for a, b, name in zip(got, want, names):
        np.testing.assert_allclose(a, b, rtol=tol * 10, atol=tol * 10, err_msg=name)


@pytest.mark.parametrize("kind, kw", CONFIGS)
def test_fused_equals_per_step_graph(kind, kw):
    x, h = _data(kw, seed=1)
    fused, _ = _newch_grads(kind, kw, x, h, newch.float64, True)
    steps, _ = _newch_grads(kind, kw, x, h, newch.float64, False)
    for a, b in zip(fused, steps):
        np.testing.assert_allclose(a, b, rtol=1e-11, atol=1e-13)


@pytest.mark.parametrize("kind", ["GRU", "RNN"])
def test_one_graph_node_per_layer_direction(kind):
    m = getattr(newch.nn, kind)(2, 3)
    out, h = m(newch.randn(4, 2, 2))
    assert out.grad_fn.name() == ("GruBackward0" if kind == "GRU" else "RnnBackward0")
    np.testing.assert_array_equal(h[0].detach().numpy(), out[-1].detach().numpy())


@pytest.mark.parametrize("kind, kw", [("GRU", dict(bidirectional=True)), ("GRU", dict(num_layers=2)),
                                      ("RNN", dict(nonlinearity="relu", num_layers=2)),
                                      ("RNN", dict(bidirectional=True))])
def test_gradients_match_finite_differences(kind, kw):
    newch.manual_seed(0)
    m = getattr(newch.nn, kind)(2, 3, dtype=newch.float64, **kw)
    rng = np.random.default_rng(5)
    # through the output and h_n, with respect to the input and the initial state
    gradcheck(lambda x, h: m(x, h), rng.standard_normal((4, 2, 2)),
              rng.standard_normal((_dirs(kw), 2, 3)))


@pytest.mark.parametrize("kind", ["GRU", "RNN"])
def test_dropout_between_layers_as_per_step_graph(kind):
    x, h = _data(dict(num_layers=3), seed=2)
    runs = []
    for fused in (True, False):
        newch.manual_seed(3)
        m = getattr(newch.nn, kind)(4, 5, num_layers=3, dropout=0.5).double()
        newch.manual_seed(9)
        old, rnn_fused.ENABLED = rnn_fused.ENABLED, fused
        try:
            out, _ = m(newch.tensor(x), newch.tensor(h))
        finally:
            rnn_fused.ENABLED = old
        out.sum().backward()
        runs.append([out.detach().numpy()] + [p.grad.numpy() for p in m.parameters()])
    for a, b in zip(*runs):
        np.testing.assert_allclose(a, b, rtol=1e-11, atol=1e-13)


@pytest.mark.parametrize("kind", ["GRU", "RNN"])
def test_second_and_double_backward(kind):
    m = getattr(newch.nn, kind)(2, 3)
    out, _ = m(newch.randn(4, 1, 2))
    loss = out.sum()
    loss.backward(retain_graph=True)
    if kind == "GRU":       # its backward consumed the saved gates
        with pytest.raises(RuntimeError, match="GRU backward.*retain_graph"):
            loss.backward()
    else:                   # the RNN's only reads what it saved: a second backward adds the same
        first = [p.grad.numpy().copy() for p in m.parameters()]
        loss.backward()
        for p, g in zip(m.parameters(), first):
            np.testing.assert_allclose(p.grad.numpy(), 2 * g, rtol=1e-6, atol=1e-7)
    x = newch.randn(4, 1, 2, requires_grad=True)
    out, _ = m(x)
    with pytest.raises(RuntimeError, match=f"{kind} backward.*create_graph"):
        newch.autograd.grad(out.sum(), x, create_graph=True)
    old, rnn_fused.ENABLED = rnn_fused.ENABLED, False
    try:
        out, _ = m(newch.randn(4, 1, 2))
    finally:
        rnn_fused.ENABLED = old
    out.sum().backward(retain_graph=True)
    out.sum().backward()


@pytest.mark.parametrize("kind", ["GRU", "RNN"])
def test_dead_input_in_backward_raises(kind):
    m = getattr(newch.nn, kind)(2, 3)
    out, _ = m(newch.randn(4, 1, 2))
    loss = out.sum()
    newch.step_end()
    with pytest.raises(newch.NcError):
        loss.backward()
    x = newch.randn(4, 1, 2, requires_grad=True)
    out, _ = m(x)
    loss = out.sum()
    newch.release(x)
    with pytest.raises(newch.NcError):
        loss.backward()


@pytest.mark.parametrize("kind", ["GRU", "RNN"])
@pytest.mark.parametrize("what", ["input", "weight", "output"])
def test_in_place_change_before_backward_raises(kind, what):
    m = getattr(newch.nn, kind)(2, 3)
    x = newch.randn(4, 1, 2, requires_grad=True)
    out, _ = m(x)
    loss = out.sum()
    with newch.no_grad():
        {"input": x, "weight": m.weight_hh_l0, "output": out}[what].mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace"):
        loss.backward()


@pytest.mark.parametrize("kind", ["GRU", "RNN"])
def test_bad_input_names_the_layer(kind):
    m = getattr(newch.nn, kind)(2, 3)
    with pytest.raises(ValueError, match=f"{kind}: input dtype"):
        m(newch.randn(4, 1, 2, dtype=newch.float64))
    with pytest.raises(RuntimeError, match=kind):
        m(newch.randn(0, 1, 2))


def test_no_grad_forward_records_nothing():
    with newch.no_grad():
        out, h = newch.nn.GRU(2, 3)(newch.randn(4, 2, 2))
    assert out.grad_fn is None and not out.requires_grad


def _step_peak(kind, layers, input_grad, T=35, B=20, H=200, **kw):
    newch.manual_seed(0)
    m = getattr(newch.nn, kind)(H, H, num_layers=layers, **kw)
    emb = newch.nn.Embedding(1000, H)
    ctx = newch.default_context()
    newch.step_end()
    with newch.persistent():
        tokens = newch.randint(0, 1000, (T, B))
    w = newch.randn(T, B, H)
    base = newch.mem_stats()["arena_bytes_in_use"]
    ctx.reset_peak()
    # an input that needs a gradient comes out of a layer below, as in a language model
    x = emb(tokens) if input_grad else newch.randn(T, B, H)
    out, _ = m(x)
    loss = (out * w).sum()
    held = newch.mem_stats()["arena_bytes_in_use"] - base
    loss.backward()
    # the whole step: the forward's peak (its gemm scratch) counts too
    peak = newch.mem_stats()["arena_peak_bytes"] - base
    assert all(p.grad.is_persistent for p in m.parameters())
    newch.step_end()
    return held, peak, T * B * H * 4


@pytest.mark.parametrize("layers, input_grad", [(1, False), (2, False), (1, True), (2, True)])
def test_gru_training_step_peak_is_at_most_1_2x_the_graph(layers, input_grad):
    held, peak, _ = _step_peak("GRU", layers, input_grad)
    assert peak <= 1.2 * held, f"step peak {peak} B > 1.2 x the {held} B the graph holds"


@pytest.mark.parametrize("layers, input_grad", [(1, False), (2, False), (2, True)])
def test_rnn_training_step_peak_is_the_graph_and_the_gradients_it_must_make(layers, input_grad):
    # an Elman layer's node keeps only its input and outputs; forward and backward work through
    # the steps in chunks (buffers of 1/8 of the steps), so the step's peak is the graph plus
    # the output's gradient, plus the input's gradient when a layer's input needs one (the
    # top layer's, with 2 layers), plus a little
    held, peak, out_bytes = _step_peak("RNN", layers, input_grad)
    bound = (2.3 if layers > 1 else 1.3) * out_bytes
    assert peak - held <= bound, f"step peak {peak} B, graph {held} B"


_THREADS = textwrap.dedent("""
    import hashlib, numpy as np, newch
    newch.manual_seed(0)
    out = []
    for kind, kw in (("GRU", dict(bidirectional=True)), ("RNN", dict(nonlinearity="relu"))):
        m = getattr(newch.nn, kind)(16, 256, **kw)
        x = newch.randn(3, 300, 16, requires_grad=True)     # B * H > the kernels' serial size
        y, h = m(x)
        ((y * y).sum() + h.sum()).backward()
        for a in [y, h, x.grad] + [p.grad for p in m.parameters()]:
            out.append(hashlib.sha1(a.detach().numpy().tobytes()).hexdigest())
    print(" ".join(out))
""")


@pytest.mark.slow
def test_training_step_bit_identical_on_1_and_2_threads():
    pytest.importorskip("numba")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    res = []
    for n in ("1", "2"):
        env = dict(os.environ, NUMBA_NUM_THREADS=n, NEWCH_BACKEND="jit")
        env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
        p = subprocess.run([sys.executable, "-c", _THREADS], env=env, capture_output=True,
                           text=True, timeout=900)
        assert p.returncode == 0, p.stderr
        res.append(p.stdout.split())
    assert res[0] == res[1] and len(res[0]) == 2 * 3 + 8 + 4


@pytest.mark.parametrize("T, B, I, N, spare", [(5, 3, 4, 16, False), (35, 20, 200, 800, True),
                                                (35, 20, 200, 600, False), (7, 1, 64, 64, False),
                                                (3, 1, 9, 4, False), (40, 17, 96, 384, False)])
@pytest.mark.parametrize("prec", ["float32", "float64"])
def test_input_grad_in_place_has_the_bits_of_one_product(T, B, I, N, spare, prec):
    # the input gradient written over the gates' gradients, piece by piece of rows, against
    # one product of the kind the sizes pick (rows_matmul or one gemm over the whole K)
    dt = getattr(newch, prec)
    rng = np.random.default_rng(T * B)
    dG = newch.tensor(rng.standard_normal((T, B, N)), dtype=dt)
    w = newch.tensor(rng.standard_normal((N, I)), dtype=dt)
    a, wa = dG.numpy().reshape(T * B, N).copy(), w.numpy()
    K = newch.default_context().kernels
    want = np.empty((T * B, I), a.dtype)
    if T * B * N * I <= rnn_fused.ROWS_MATMUL_MAX:
        K.rows_matmul(a, wa, want, False)
    else:
        K.gemm(a, wa, want, np.empty(K.gemm_scratch(T * B, I, N), a.dtype), False)
    sp = newch.empty(T * B * N, dtype=dt).numpy() if spare else None
    got = rnn_fused.input_grad(dG, w, sp, (T, B, I), "test")
    assert tuple(got.shape) == (T, B, I)
    if newch.default_context().backend != "ref":     # numpy's matmul makes no such promise
        assert got.numpy().tobytes() == want.reshape(T, B, I).tobytes()
    np.testing.assert_allclose(got.numpy().reshape(T * B, I), a @ wa, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("kind", ["GRU", "RNN"])
@pytest.mark.parametrize("how", ["out.backward", "autograd.grad"])
def test_user_gradient_is_never_written_at_gemm_sizes(kind, how):
    # big enough that backward's products take the gemm path with real scratch
    T, B, I, H = 20, 16, 64, 64
    g_np = np.random.default_rng(11).standard_normal((T, B, H))
    runs = []
    for fused in (True, False):
        newch.manual_seed(7)
        m = getattr(newch.nn, kind)(I, H, num_layers=2).double()
        x = newch.tensor(np.random.default_rng(3).standard_normal((T, B, I)), requires_grad=True)
        old, rnn_fused.ENABLED = rnn_fused.ENABLED, fused
        try:
            out, _ = m(x)
        finally:
            rnn_fused.ENABLED = old
        g = newch.tensor(g_np)
        if how == "out.backward":
            out.backward(g)
            got = [x.grad] + [p.grad for p in m.parameters()]
        else:
            got = newch.autograd.grad(out, [x] + list(m.parameters()), grad_outputs=g)
        np.testing.assert_array_equal(g.numpy(), g_np)
        runs.append([a.numpy().copy() for a in got])
    for a, b in zip(*runs):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


_BACKEND = textwrap.dedent("""
    import sys, numpy as np, newch
    newch.manual_seed(0)
    m = newch.nn.GRU(6, 8, num_layers=2, bidirectional=True).double()
    x = newch.tensor(np.random.default_rng(0).standard_normal((9, 4, 6)), requires_grad=True)
    y, h = m(x)
    ((y * y).sum() + h.sum()).backward()
    np.savez(sys.argv[1], *[a.detach().numpy() for a in [y, h, x.grad] + [p.grad for p in m.parameters()]])
""")


@pytest.mark.slow
def test_jit_and_ref_backends_agree(tmp_path):
    pytest.importorskip("numba")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    res = []
    for backend in ("jit", "ref"):
        env = dict(os.environ, NEWCH_BACKEND=backend)
        env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
        path = str(tmp_path / f"{backend}.npz")
        p = subprocess.run([sys.executable, "-c", _BACKEND, path], env=env, capture_output=True,
                           text=True, timeout=900)
        assert p.returncode == 0, p.stderr
        with np.load(path) as z:
            res.append([z[k] for k in sorted(z.files, key=lambda s: int(s.split("_")[1]))])
    assert len(res[0]) == 3 + 16
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-11, atol=1e-12)
