"""The fused LSTM's memory shortcuts keep autograd's contract.

Its backward adds weight gradients straight into ``.grad`` (not under ``autograd.grad``), works
in its own dead buffers, and only reads the gradient it is handed: a user's gradient passed to
``out.backward(g)``, ``autograd.grad(..., grad_outputs=g)`` or through an op that hands its
gradient on unchanged comes back untouched. Each result is checked against the per-step graph
(``rnn_fused.ENABLED = False``, plain autograd ops) and, where installed, PyTorch.
"""
import numpy as np
import pytest

import newch
from newch.nn import rnn_fused

T, B, I, H = 6, 3, 5, 4
# big enough that backward's products take the gemm path with real scratch (a backward that
# used the incoming gradient's memory as scratch would write into the user's tensor)
BIG = dict(T=20, B=16, I=64, H=64)


def _lstm(num_layers=1, I=I, H=H, **kw):
    newch.manual_seed(7)
    return newch.nn.LSTM(I, H, num_layers=num_layers, **kw).double()


def _input(requires_grad=False, T=T, B=B, I=I):
    x = np.random.default_rng(3).standard_normal((T, B, I))
    return newch.tensor(x, requires_grad=requires_grad)


def _forward(lstm, x, fused):
    old = rnn_fused.ENABLED
    rnn_fused.ENABLED = fused
    try:
        return lstm(x)
    finally:
        rnn_fused.ENABLED = old


def _user_grad(shape, seed=11):
    return newch.tensor(np.random.default_rng(seed).standard_normal(shape))


def _param_grads(lstm):
    return [p.grad.numpy().copy() for p in lstm.parameters()]


def _close(a, b):
    for u, v in zip(a, b):
        np.testing.assert_allclose(u, v, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("how", ["out.backward", "reshape.backward", "h_n.backward",
                                 "c_n.backward", "autograd.grad"])
def test_user_gradient_is_never_written(how):
    grads = []
    for fused in (True, False):
        lstm = _lstm(num_layers=2, I=BIG["I"], H=BIG["H"])
        x = _input(True, BIG["T"], BIG["B"], BIG["I"])
        out, (h, c) = _forward(lstm, x, fused)
        target = {"out.backward": out, "reshape.backward": out.reshape(-1, BIG["H"]),
                  "h_n.backward": h, "c_n.backward": c, "autograd.grad": out}[how]
        g = _user_grad(tuple(target.shape))
        before = g.numpy().copy()
        if how == "autograd.grad":
            got = newch.autograd.grad(target, [x] + list(lstm.parameters()), grad_outputs=g)
            grads.append([t.numpy().copy() for t in got])
            assert all(p.grad is None for p in lstm.parameters())   # .grad untouched
        else:
            target.backward(g)
            grads.append([x.grad.numpy().copy()] + _param_grads(lstm))
        np.testing.assert_array_equal(g.numpy(), before)
        assert g.grad_fn is None and not g.requires_grad
    _close(grads[0], grads[1])


def test_autograd_grad_equals_backward_and_leaves_grad_alone():
    lstm = _lstm()
    out, _ = _forward(lstm, _input(), True)
    w = lstm.weight_ih_l0
    via_grad = newch.autograd.grad((out * out).sum(), [w, lstm.weight_hh_l0])
    assert w.grad is None
    out, _ = _forward(lstm, _input(), True)
    (out * out).sum().backward()
    _close([t.numpy() for t in via_grad], [w.grad.numpy(), lstm.weight_hh_l0.grad.numpy()])


def test_gradients_accumulate_over_backwards_as_the_per_step_graph():
    grads = []
    for fused in (True, False):
        lstm = _lstm(num_layers=2, bidirectional=True)
        for seed in (1, 2):
            out, (h, c) = _forward(lstm, _input(), fused)
            ((out * _user_grad(tuple(out.shape), seed)).sum() + c.sum()).backward()
        grads.append(_param_grads(lstm))
        assert all(p.grad.is_persistent for p in lstm.parameters())
    _close(grads[0], grads[1])


def test_only_c_n_carries_gradient():
    grads = []
    for fused in (True, False):
        lstm = _lstm()
        x = _input(requires_grad=True)
        _, (h, c) = _forward(lstm, x, fused)
        (c * c).sum().backward()
        grads.append([x.grad.numpy()] + _param_grads(lstm))
    _close(grads[0], grads[1])


def test_create_graph_and_second_backward_raise_clearly():
    lstm = _lstm()
    out, _ = _forward(lstm, _input(), True)
    with pytest.raises(RuntimeError, match="LSTM backward.*create_graph"):
        out.sum().backward(create_graph=True)
    out, _ = _forward(lstm, _input(), True)
    loss = out.sum()
    loss.backward(retain_graph=True)
    with pytest.raises(RuntimeError, match="LSTM backward.*retain_graph"):
        loss.backward()


def test_in_place_change_of_the_output_is_refused():
    lstm = _lstm()
    out, _ = _forward(lstm, _input(), True)
    with newch.no_grad():
        out.add_(1.0)
    with pytest.raises(RuntimeError, match="LstmBackward0.*modified by an inplace"):
        out.sum().backward()


def test_temporary_weights_get_temporary_grads():
    # weights that are not parameters (made in the step, requiring grad): their .grad is a
    # temporary, as the engine would make it, and the values match the per-step graph
    from newch.net.rnn_fused import lstm_sequence
    rng = np.random.default_rng(5)
    w_ih = newch.tensor(rng.standard_normal((4 * H, I)), requires_grad=True)
    w_hh = newch.tensor(rng.standard_normal((4 * H, H)), requires_grad=True)
    x, h0, c0 = _input(), newch.zeros(B, H, dtype=newch.float64), newch.zeros(B, H, dtype=newch.float64)
    out, h, c = lstm_sequence(x, h0, c0, w_ih, w_hh, None, None)
    (out * out).sum().backward()
    assert not w_ih.grad.is_persistent
    lstm = newch.nn.LSTM(I, H, bias=False).double()
    with newch.no_grad():
        lstm.weight_ih_l0.copy_(w_ih)
        lstm.weight_hh_l0.copy_(w_hh)
    ref, _ = _forward(lstm, x, False)
    (ref * ref).sum().backward()
    _close([w_ih.grad.numpy(), w_hh.grad.numpy()],
           [lstm.weight_ih_l0.grad.numpy(), lstm.weight_hh_l0.grad.numpy()])


def test_big_step_matches_torch():
    torch = pytest.importorskip("torch")
    newch.manual_seed(0)
    lstm = newch.nn.LSTM(200, 200, num_layers=2)
    tl = torch.nn.LSTM(200, 200, num_layers=2)
    tl.load_state_dict({k: torch.tensor(v.numpy()) for k, v in lstm.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((35, 20, 200)).astype(np.float32)
    w = np.random.default_rng(1).standard_normal((35, 20, 200)).astype(np.float32)
    out, _ = lstm(newch.tensor(x))
    (out * newch.tensor(w)).sum().backward()
    tout, _ = tl(torch.tensor(x))
    (tout * torch.tensor(w)).sum().backward()
    for p, q in zip(lstm.parameters(), tl.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=2e-3, atol=2e-3)


def _step_grads_on(threads):
    ctx = newch.Context(seed=0, threads=threads)
    old = newch.default_context()
    newch.set_default_context(ctx)
    try:
        newch.manual_seed(0)
        lstm = newch.nn.LSTM(200, 200, num_layers=2)
        x = newch.randn(35, 20, 200).requires_grad_()
        out, (h, c) = lstm(x)
        ((out * out).sum() + c.sum()).backward()
        return [x.grad.numpy().tobytes()] + [p.grad.numpy().tobytes() for p in lstm.parameters()]
    finally:
        newch.set_default_context(old)


def test_training_step_gradients_are_the_same_bits_on_1_and_2_threads():
    # the word LM's sizes: backward's products are gemm pieces that run in parallel
    if newch.default_context().backend == "ref":
        pytest.skip("a JIT guarantee: the ref backend's products are numpy's (BLAS) own")
    assert _step_grads_on(1) == _step_grads_on(2)
