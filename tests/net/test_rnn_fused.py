"""The fused LSTM path (one graph node per layer-direction) against the per-step graph and
PyTorch: values and gradients through out, h_n and c_n; its limits raise clearly."""
import numpy as np
import pytest

import newch
from newch.nn import rnn_fused


def _grads(kw, x_np, h_np, c_np, fused):
    newch.manual_seed(3)
    lstm = newch.nn.LSTM(3, 4, **kw).double()
    x = newch.tensor(x_np, requires_grad=True)
    h0, c0 = newch.tensor(h_np, requires_grad=True), newch.tensor(c_np, requires_grad=True)
    old = rnn_fused.ENABLED
    rnn_fused.ENABLED = fused
    try:
        out, (h, c) = lstm(x, (h0, c0))
    finally:
        rnn_fused.ENABLED = old
    w = newch.tensor(np.linspace(-1, 1, out.numel()).reshape(out.shape))
    ((out * w).sum() + (h * h).sum() + (c * 2).sum()).backward()
    return [out, h, c, x.grad, h0.grad, c0.grad] + [p.grad for p in lstm.parameters()]


@pytest.mark.parametrize("kw", [{}, dict(num_layers=2, bidirectional=True),
                                dict(batch_first=True, bias=False), dict(num_layers=3)])
def test_fused_equals_per_step_graph(kw):
    rng = np.random.default_rng(0)
    dirs = (2 if kw.get("bidirectional") else 1) * kw.get("num_layers", 1)
    x = rng.standard_normal((5, 6, 3))
    h, c = rng.standard_normal((dirs, 5 if kw.get("batch_first") else 6, 4)), \
        rng.standard_normal((dirs, 5 if kw.get("batch_first") else 6, 4))
    for a, b in zip(_grads(kw, x, h, c, True), _grads(kw, x, h, c, False)):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10, atol=1e-12)


def test_fused_matches_torch_with_state_gradients():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    x, h, c = rng.standard_normal((7, 2, 3)), rng.standard_normal((2, 2, 4)), rng.standard_normal((2, 2, 4))
    got = _grads(dict(num_layers=2), x, h, c, True)
    tl = torch.nn.LSTM(3, 4, num_layers=2).double()
    newch.manual_seed(3)
    ref = newch.nn.LSTM(3, 4, num_layers=2).double()
    tl.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ref.state_dict().items()})
    tx = torch.tensor(x, requires_grad=True)
    th, tc = torch.tensor(h, requires_grad=True), torch.tensor(c, requires_grad=True)
    out, (hn, cn) = tl(tx, (th, tc))
    w = torch.tensor(np.linspace(-1, 1, out.numel()).reshape(out.shape))
    ((out * w).sum() + (hn * hn).sum() + (cn * 2).sum()).backward()
    want = [out, hn, cn, tx.grad, th.grad, tc.grad] + [p.grad for p in tl.parameters()]
    for a, b in zip(got, want):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-9, atol=1e-11)


def test_second_backward_raises_and_per_step_graph_allows_it():
    lstm = newch.nn.LSTM(2, 3)
    out, _ = lstm(newch.randn(4, 1, 2))
    loss = out.sum()
    loss.backward(retain_graph=True)
    with pytest.raises(RuntimeError, match="LSTM backward.*retain_graph"):
        loss.backward()
    rnn_fused.ENABLED = False
    try:
        out, _ = lstm(newch.randn(4, 1, 2))
    finally:
        rnn_fused.ENABLED = True
    out.sum().backward(retain_graph=True)
    out.sum().backward()


def test_no_grad_forward_records_nothing():
    lstm = newch.nn.LSTM(2, 3)
    with newch.no_grad():
        out, (h, c) = lstm(newch.randn(4, 2, 2))
    assert not out.requires_grad and out.grad_fn is None
    np.testing.assert_array_equal(h[0].numpy(), out[-1].numpy())


def test_stale_input_in_backward_raises():
    lstm = newch.nn.LSTM(2, 3)
    x = newch.randn(4, 1, 2)
    out, _ = lstm(x)
    loss = out.sum()
    newch.step_end()
    with pytest.raises(newch.NcError):
        loss.backward()


def test_mismatched_dtype_and_empty_sequence_name_the_layer():
    lstm = newch.nn.LSTM(2, 3)
    with pytest.raises(ValueError, match="LSTM: input dtype"):
        lstm(newch.randn(4, 1, 2, dtype=newch.float64))
    with pytest.raises(RuntimeError, match="LSTM"):
        lstm(newch.randn(0, 1, 2))
