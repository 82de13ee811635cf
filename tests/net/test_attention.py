"""MultiheadAttention, scaled_dot_product_attention and the Transformer layers against PyTorch."""
import numpy as np
import pytest

import newch
import newch.nn.functional as F
from tests.autograd.gradcheck import gradcheck

torch = pytest.importorskip("torch")
nn = newch.nn
RNG = np.random.default_rng(3)


def _twin(m, tm):
    assert list(m.state_dict()) == list(tm.state_dict())
    tm.load_state_dict({k: torch.tensor(v.detach().numpy()) for k, v in m.state_dict().items()})
    return tm


def _close(a, b, tol=2e-5):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("masks", ["none", "bool", "float", "padding", "causal"])
def test_multihead_attention_matches_torch(batch_first, masks):
    m = nn.MultiheadAttention(8, 2, batch_first=batch_first)
    tm = _twin(m, torch.nn.MultiheadAttention(8, 2, batch_first=batch_first))
    q = RNG.standard_normal((3, 5, 8) if batch_first else (5, 3, 8)).astype(np.float32)
    kv = RNG.standard_normal((3, 6, 8) if batch_first else (6, 3, 8)).astype(np.float32)
    kw, tkw = {}, {}
    if masks == "bool":
        am = np.triu(np.ones((5, 6), bool), 2)
        kw["attn_mask"], tkw["attn_mask"] = newch.tensor(am), torch.tensor(am)
    elif masks == "float":
        am = RNG.standard_normal((6, 5, 6)).astype(np.float32)      # (N * H, L, S)
        kw["attn_mask"], tkw["attn_mask"] = newch.tensor(am), torch.tensor(am)
    elif masks == "padding":
        kp = np.zeros((3, 6), bool)
        kp[0, 3:] = True
        kw["key_padding_mask"], tkw["key_padding_mask"] = newch.tensor(kp), torch.tensor(kp)
    elif masks == "causal":
        kv = q
        am = nn.Transformer.generate_square_subsequent_mask(5)
        kw.update(attn_mask=am, is_causal=True)
        tkw.update(attn_mask=torch.nn.Transformer.generate_square_subsequent_mask(5), is_causal=True)
    qn, qt = newch.tensor(q, requires_grad=True), torch.tensor(q, requires_grad=True)
    o, w = m(qn, newch.tensor(kv), newch.tensor(kv), **kw)
    to, tw = tm(qt, torch.tensor(kv), torch.tensor(kv), **tkw)
    _close(o, to)
    _close(w, tw)
    (o.sum() + w.sum()).backward()
    (to.sum() + tw.sum()).backward()
    _close(qn.grad, qt.grad, 1e-4)
    _close(m.in_proj_weight.grad, tm.in_proj_weight.grad, 1e-4)


def test_per_head_weights_and_unbatched_input():
    m = nn.MultiheadAttention(6, 3, kdim=4, vdim=5)
    tm = _twin(m, torch.nn.MultiheadAttention(6, 3, kdim=4, vdim=5))
    q, k, v = (RNG.standard_normal(s).astype(np.float32) for s in ((4, 6), (7, 4), (7, 5)))
    o, w = m(newch.tensor(q), newch.tensor(k), newch.tensor(v), average_attn_weights=False)
    to, tw = tm(torch.tensor(q), torch.tensor(k), torch.tensor(v), average_attn_weights=False)
    _close(o, to)
    _close(w, tw)


@pytest.mark.parametrize("kw", [{}, {"is_causal": True}, {"scale": 0.3}, {"mask": "bool"},
                                {"mask": "float"}])
def test_sdpa_matches_torch_and_finite_differences(kw):
    kw = dict(kw)
    q, k, v = (RNG.standard_normal(s) for s in ((2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 7)))
    if kw.get("is_causal"):
        k, v = k[:, :, :4], v[:, :, :4]
    mask = kw.pop("mask", None)
    if mask == "bool":
        am = RNG.random((4, 6)) < 0.7
        am[:, 0] = True
    elif mask == "float":
        am = RNG.standard_normal((3, 4, 6))
    got = F.scaled_dot_product_attention(newch.tensor(q), newch.tensor(k), newch.tensor(v),
                                         attn_mask=newch.tensor(am) if mask else None, **kw)
    want = torch.nn.functional.scaled_dot_product_attention(
        torch.tensor(q), torch.tensor(k), torch.tensor(v), attn_mask=torch.tensor(am) if mask else None,
        **kw)
    _close(got, want, 1e-10)
    mk = newch.tensor(am) if mask else None
    gradcheck(lambda a, b, c: F.scaled_dot_product_attention(a, b, c, attn_mask=mk, **kw), q, k, v)


@pytest.mark.parametrize("norm_first, activation", [(False, "relu"), (True, "gelu")])
def test_transformer_matches_torch(norm_first, activation):
    cfg = dict(d_model=16, nhead=4, num_encoder_layers=2, num_decoder_layers=2, dim_feedforward=24,
               dropout=0.0, activation=activation, norm_first=norm_first, batch_first=True)
    m = nn.Transformer(**cfg)
    tm = _twin(m, torch.nn.Transformer(**cfg))
    m.eval()
    tm.eval()
    src = RNG.standard_normal((2, 6, 16)).astype(np.float32)
    tgt = RNG.standard_normal((2, 4, 16)).astype(np.float32)
    kp = np.zeros((2, 6), bool)
    kp[1, 4:] = True
    sn, st = newch.tensor(src, requires_grad=True), torch.tensor(src, requires_grad=True)
    o = m(sn, newch.tensor(tgt), tgt_mask=nn.Transformer.generate_square_subsequent_mask(4),
          src_key_padding_mask=newch.tensor(kp), memory_key_padding_mask=newch.tensor(kp))
    to = tm(st, torch.tensor(tgt), tgt_mask=torch.nn.Transformer.generate_square_subsequent_mask(4),
            src_key_padding_mask=torch.tensor(kp), memory_key_padding_mask=torch.tensor(kp))
    _close(o, to, 1e-4)
    (o ** 2).sum().backward()
    (to ** 2).sum().backward()
    _close(sn.grad, st.grad, 1e-4)
    for (name, p), tp in zip(m.named_parameters(), tm.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1e-3, atol=1e-4, err_msg=name)


def test_encoder_stack_with_causal_mask_matches_torch():
    layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.1, batch_first=True)
    enc = nn.TransformerEncoder(layer, 2)
    tenc = _twin(enc, torch.nn.TransformerEncoder(
        torch.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.1, batch_first=True), 2,
        enable_nested_tensor=False))
    enc.eval()
    tenc.eval()
    x = RNG.standard_normal((3, 5, 8)).astype(np.float32)
    mask = nn.Transformer.generate_square_subsequent_mask(5)
    tmask = torch.nn.Transformer.generate_square_subsequent_mask(5)
    _close(enc(newch.tensor(x), mask=mask, is_causal=True), tenc(torch.tensor(x), mask=tmask, is_causal=True))


def test_square_subsequent_mask():
    m = nn.Transformer.generate_square_subsequent_mask(3)
    assert m.tolist() == [[0.0, float("-inf"), float("-inf")], [0.0, 0.0, float("-inf")], [0.0, 0.0, 0.0]]


def test_attention_graph_keeps_one_score_sized_tensor():
    """After the forward, the graph holds the softmax output and no other (B, H, T, T) copy."""
    newch.manual_seed(0)
    mha = nn.MultiheadAttention(32, 4, batch_first=True)
    x = newch.randn(4, 64, 32).requires_grad_()
    mask = nn.Transformer.generate_square_subsequent_mask(64)
    base = newch.mem_stats()["arena_bytes_in_use"]
    out, _ = mha(x, x, x, attn_mask=mask, need_weights=False)
    held = newch.mem_stats()["arena_bytes_in_use"] - base
    bhtt = 4 * 4 * 64 * 64 * 4
    assert held < 2 * bhtt, f"the graph holds {held / bhtt:.2f} (B, H, T, T)-sized tensors"
    out.sum().backward()
    newch.step_end()
