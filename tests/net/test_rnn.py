"""RNN / LSTM / GRU layers and cells against PyTorch (values, gradients, state_dicts), packed
sequences, and finite differences in float64."""
import numpy as np
import pytest

import newch
from tests.autograd.gradcheck import gradcheck

torch = pytest.importorskip("torch")
nn = newch.nn
RNG = np.random.default_rng(1)


def _twin(m, tm):
    sd = m.state_dict()
    assert list(sd) == list(tm.state_dict())
    assert all(tuple(v.shape) == tuple(tm.state_dict()[k].shape) for k, v in sd.items())
    tm.load_state_dict({k: torch.tensor(v.detach().numpy()) for k, v in sd.items()})
    return tm


def _first(h):
    return h[0] if isinstance(h, tuple) else h


def _run_both(m, tm, x, hx=None, thx=None, tol=2e-5):
    _twin(m, tm)
    xn, xt = newch.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    o, h = m(xn, hx)
    to, th = tm(xt, thx)
    np.testing.assert_allclose(o.detach().numpy(), to.detach().numpy(), rtol=tol, atol=tol)
    for a, b in zip(h if isinstance(h, tuple) else (h,), th if isinstance(th, tuple) else (th,)):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)
    w = RNG.standard_normal(tuple(o.shape)).astype(x.dtype)
    ((o * newch.tensor(w)).sum() + (_first(h) ** 2).sum()).backward()
    ((to * torch.tensor(w)).sum() + (_first(th) ** 2).sum()).backward()
    np.testing.assert_allclose(xn.grad.numpy(), xt.grad.numpy(), rtol=10 * tol, atol=10 * tol)
    for (name, p), tp in zip(m.named_parameters(), tm.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=10 * tol, atol=10 * tol,
                                   err_msg=name)


CONFIGS = [
    ("RNN", dict(num_layers=2)),
    ("RNN", dict(nonlinearity="relu", bidirectional=True)),
    ("LSTM", dict(num_layers=2, bidirectional=True)),
    ("LSTM", dict(num_layers=2, proj_size=3)),
    ("LSTM", dict(batch_first=True, bias=False)),
    ("GRU", dict(num_layers=3, batch_first=True)),
    ("GRU", dict(bidirectional=True, bias=False)),
]


@pytest.mark.parametrize("kind, kw", CONFIGS)
def test_layers_match_torch(kind, kw):
    newch.manual_seed(0)
    m = getattr(nn, kind)(4, 6, **kw)
    tm = getattr(torch.nn, kind)(4, 6, **kw)
    _run_both(m, tm, RNG.standard_normal((5, 3, 4)).astype(np.float32))


@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
def test_initial_state_unbatched_and_float64(kind):
    m = getattr(nn, kind)(3, 5, num_layers=2, dtype=newch.float64)
    tm = getattr(torch.nn, kind)(3, 5, num_layers=2, dtype=torch.float64)
    h0 = RNG.standard_normal((2, 4, 5))
    c0 = RNG.standard_normal((2, 4, 5))
    if kind == "LSTM":
        hx, thx = (newch.tensor(h0), newch.tensor(c0)), (torch.tensor(h0), torch.tensor(c0))
    else:
        hx, thx = newch.tensor(h0), torch.tensor(h0)
    _run_both(m, tm, RNG.standard_normal((6, 4, 3)), hx, thx, tol=1e-10)
    m.zero_grad()
    tm.zero_grad()
    _run_both(m, tm, RNG.standard_normal((6, 3)), tol=1e-10)     # unbatched (T, I)


@pytest.mark.parametrize("kind", ["RNNCell", "LSTMCell", "GRUCell"])
def test_cells_match_torch(kind):
    m, tm = getattr(nn, kind)(3, 4), getattr(torch.nn, kind)(3, 4)
    _twin(m, tm)
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    xn, xt = newch.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    hn, ht = m(xn), tm(xt)
    for _ in range(2):      # a second step from the first one's state
        hn, ht = m(xn, hn), tm(xt, ht)
    _first(hn).sum().backward()
    _first(ht).sum().backward()
    np.testing.assert_allclose(_first(hn).detach().numpy(), _first(ht).detach().numpy(), atol=1e-6)
    np.testing.assert_allclose(xn.grad.numpy(), xt.grad.numpy(), atol=1e-5)
    np.testing.assert_allclose(m.weight_hh.grad.numpy(), tm.weight_hh.grad.numpy(), atol=1e-5)


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_packed_sequences_match_torch(kind):
    R, TR = nn.utils.rnn, torch.nn.utils.rnn
    m = getattr(nn, kind)(3, 4, bidirectional=True, num_layers=2)
    tm = _twin(m, getattr(torch.nn, kind)(3, 4, bidirectional=True, num_layers=2))
    seqs = [RNG.standard_normal((n, 3)).astype(np.float32) for n in (2, 5, 3)]
    xs = [newch.tensor(s, requires_grad=True) for s in seqs]
    txs = [torch.tensor(s, requires_grad=True) for s in seqs]
    p = R.pack_padded_sequence(R.pad_sequence(xs), [2, 5, 3], enforce_sorted=False)
    tp = TR.pack_padded_sequence(TR.pad_sequence(txs), [2, 5, 3], enforce_sorted=False)
    o, h = m(p)
    to, th = tm(tp)
    assert o.batch_sizes.tolist() == to.batch_sizes.tolist()
    np.testing.assert_allclose(o.data.detach().numpy(), to.data.detach().numpy(), atol=1e-5)
    np.testing.assert_allclose(_first(h).detach().numpy(), _first(th).detach().numpy(), atol=1e-5)
    pad, lengths = R.pad_packed_sequence(o, batch_first=True)
    tpad, tlengths = TR.pad_packed_sequence(to, batch_first=True)
    assert lengths.tolist() == tlengths.tolist() == [2, 5, 3]
    np.testing.assert_allclose(pad.detach().numpy(), tpad.detach().numpy(), atol=1e-5)
    (pad.sum() + _first(h).sum()).backward()
    (tpad.sum() + _first(th).sum()).backward()
    for a, b in zip(xs, txs):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), atol=1e-5)


def test_pad_and_pack_utilities_match_torch():
    R, TR = nn.utils.rnn, torch.nn.utils.rnn
    seqs = [RNG.standard_normal((n, 2)).astype(np.float32) for n in (3, 1, 4)]
    got = R.pad_sequence([newch.tensor(s) for s in seqs], batch_first=True, padding_value=-1.0)
    want = TR.pad_sequence([torch.tensor(s) for s in seqs], batch_first=True, padding_value=-1.0)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    p = R.pack_sequence([newch.tensor(s) for s in seqs], enforce_sorted=False)
    tp = TR.pack_sequence([torch.tensor(s) for s in seqs], enforce_sorted=False)
    np.testing.assert_array_equal(p.data.numpy(), tp.data.numpy())
    assert p.sorted_indices.tolist() == tp.sorted_indices.tolist()
    assert [u.shape[0] for u in R.unpack_sequence(p)] == [3, 1, 4]
    with pytest.raises(RuntimeError, match="enforce_sorted"):
        R.pack_padded_sequence(newch.zeros(4, 2), [1, 3])


def test_gradients_match_finite_differences():
    newch.manual_seed(0)
    for m in (nn.LSTM(2, 3, dtype=newch.float64), nn.GRU(2, 3, dtype=newch.float64),
              nn.RNN(2, 3, dtype=newch.float64, bidirectional=True)):
        gradcheck(lambda x: m(x)[0], RNG.standard_normal((4, 2, 2)))


def test_bad_input_names_the_layer():
    with pytest.raises(RuntimeError, match="LSTM: input.size"):
        nn.LSTM(3, 4)(newch.zeros(2, 1, 5))
    with pytest.raises(RuntimeError, match="GRU: expected hidden size"):
        nn.GRU(3, 4)(newch.zeros(2, 1, 3), newch.zeros(2, 1, 4))
    with pytest.raises(ValueError, match="proj_size"):
        nn.GRU(3, 4, proj_size=2)


def test_dropout_between_layers_only_in_training():
    m = nn.LSTM(3, 4, num_layers=2, dropout=0.5)
    x = newch.randn(5, 2, 3)
    m.eval()
    a, b = m(x)[0], m(x)[0]
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    m.train()
    newch.manual_seed(1)
    c = m(x)[0]
    newch.manual_seed(2)
    d = m(x)[0]
    assert not np.array_equal(c.detach().numpy(), d.detach().numpy())


def test_nn_utils_rnn_imports_as_one_module():
    import newch.nn.utils.rnn as R
    from newch.net import rnn as layers
    assert R is newch.nn.utils.rnn
    assert R.PackedSequence is layers.PackedSequence     # else packed input is not recognised
