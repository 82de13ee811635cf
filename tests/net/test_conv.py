"""Convolution layers and F.conv1d / conv2d / conv_transpose2d: against PyTorch, finite differences."""
import math

import numpy as np
import pytest

import newch
import newch.nn as nn
import newch.nn.functional as F

from tests.autograd.gradcheck import gradcheck, to_np

RNG = np.random.default_rng(0)

CONV2D = [
    ((2, 3, 7, 6), (4, 3, 3, 3), {}),
    ((2, 3, 7, 6), (4, 3, 3, 2), {"stride": (2, 1), "padding": (1, 2), "dilation": (1, 2)}),
    ((3, 4, 9, 8), (6, 2, 3, 3), {"groups": 2, "padding": 1, "stride": 2}),
    ((3, 4, 9, 8), (8, 1, 3, 3), {"groups": 4, "padding": "same"}),           # depthwise x2
    ((2, 4, 9, 8), (4, 1, 4, 2), {"groups": 4, "padding": "same", "dilation": 2}),  # uneven 'same'
    ((2, 3, 7, 6), (4, 3, 3, 3), {"padding": "valid"}),
    ((3, 7, 6), (4, 3, 1, 1), {}),                                             # unbatched, 1x1
    ((40, 8, 12, 12), (16, 8, 3, 3), {"padding": 1}),                           # several chunks
]


def _torch_run(torch, fn, x, w, b, g, **kw):
    tx, tw = (torch.tensor(a, requires_grad=True) for a in (x, w))
    tb = torch.tensor(b, requires_grad=True) if b is not None else None
    ty = fn(tx, tw, tb, **kw)
    ty.backward(torch.tensor(g))
    return [t.detach().numpy() for t in (ty, tx.grad, tw.grad)] + \
        ([tb.grad.numpy()] if tb is not None else [])


def _newch_run(fn, x, w, b, g, dtype=newch.float64, **kw):
    nx, nw = (newch.tensor(a, dtype=dtype, requires_grad=True) for a in (x, w))
    nb = newch.tensor(b, dtype=dtype, requires_grad=True) if b is not None else None
    ny = fn(nx, nw, nb, **kw)
    ny.backward(newch.tensor(g, dtype=dtype))
    return [to_np(t) for t in (ny, nx.grad, nw.grad)] + ([to_np(nb.grad)] if nb is not None else [])


def _case(xs, ws, n_out, fn_t, torch, kw):
    """Input, weight, bias of n_out and an upstream gradient shaped like torch's output."""
    x, w, b = RNG.standard_normal(xs), RNG.standard_normal(ws), RNG.standard_normal(n_out)
    with torch.no_grad():
        ref_out = fn_t(torch.tensor(x), torch.tensor(w), None, **kw)
    return x, w, b, RNG.standard_normal(tuple(ref_out.shape))


@pytest.mark.parametrize("xs,ws,kw", CONV2D)
def test_conv2d_matches_torch_float64(torch, xs, ws, kw):
    x, w, b, g = _case(xs, ws, ws[0], torch.nn.functional.conv2d, torch, kw)
    want = _torch_run(torch, torch.nn.functional.conv2d, x, w, b, g, **kw)
    got = _newch_run(F.conv2d, x, w, b, g, **kw)
    for name, a, e in zip(("out", "dx", "dw", "db"), got, want):
        np.testing.assert_allclose(a, e, rtol=1e-10, atol=1e-10, err_msg=name)


def test_conv2d_float32_close_to_torch(torch):
    xs, ws, kw = (4, 8, 14, 14), (16, 8, 3, 3), {"padding": 1}
    x, w, b, g = _case(xs, ws, 16, torch.nn.functional.conv2d, torch, kw)
    f32 = [a.astype(np.float32) for a in (x, w, b, g)]
    want = _torch_run(torch, torch.nn.functional.conv2d, *f32, **kw)
    got = _newch_run(F.conv2d, *f32, dtype=newch.float32, **kw)
    for name, a, e in zip(("out", "dx", "dw", "db"), got, want):
        np.testing.assert_allclose(a, e, rtol=1e-4, atol=1e-4 * np.abs(e).max(), err_msg=name)


@pytest.mark.parametrize("xs,ws,kw", [
    ((2, 3, 10), (4, 3, 3), {}),
    ((2, 4, 11), (6, 2, 3), {"stride": 2, "padding": 2, "dilation": 2, "groups": 2}),
    ((2, 3, 10), (4, 3, 4), {"padding": "same"}),
    ((3, 10), (4, 3, 3), {"padding": 1}),
])
def test_conv1d_matches_torch(torch, xs, ws, kw):
    x, w, b, g = _case(xs, ws, ws[0], torch.nn.functional.conv1d, torch, kw)
    want = _torch_run(torch, torch.nn.functional.conv1d, x, w, b, g, **kw)
    got = _newch_run(F.conv1d, x, w, b, g, **kw)
    for name, a, e in zip(("out", "dx", "dw", "db"), got, want):
        np.testing.assert_allclose(a, e, rtol=1e-10, atol=1e-10, err_msg=name)


@pytest.mark.parametrize("xs,ws,kw", [
    ((2, 3, 4, 5), (3, 2, 3, 3), {}),
    ((2, 4, 4, 5), (4, 3, 3, 2), {"stride": 2, "padding": 1, "output_padding": 1, "groups": 2}),
    ((2, 3, 4, 4), (3, 2, 2, 3), {"stride": (2, 3), "dilation": (2, 1), "padding": (1, 0)}),
    ((3, 4, 4), (3, 2, 3, 3), {"stride": 2}),
])
def test_conv_transpose2d_matches_torch(torch, xs, ws, kw):
    cout = ws[1] * kw.get("groups", 1)
    x, w, b, g = _case(xs, ws, cout, torch.nn.functional.conv_transpose2d, torch, kw)
    want = _torch_run(torch, torch.nn.functional.conv_transpose2d, x, w, b, g, **kw)
    got = _newch_run(F.conv_transpose2d, x, w, b, g, **kw)
    for name, a, e in zip(("out", "dx", "dw", "db"), got, want):
        np.testing.assert_allclose(a, e, rtol=1e-10, atol=1e-10, err_msg=name)


def test_conv2d_finite_differences():
    x, w, b = RNG.standard_normal((2, 4, 5, 5)), RNG.standard_normal((4, 2, 3, 2)), RNG.standard_normal(4)
    gradcheck(lambda x, w, b: F.conv2d(x, w, b, stride=(2, 1), padding=1, dilation=(1, 2), groups=2),
              x, w, b)


def test_conv_transpose2d_finite_differences():
    x, w = RNG.standard_normal((2, 2, 3, 3)), RNG.standard_normal((2, 3, 3, 2))
    gradcheck(lambda x, w: F.conv_transpose2d(x, w, stride=2, padding=1, output_padding=1), x, w)


def test_conv2d_by_hand():
    """A 3x3 box filter over a 4x4 ramp: each output is the sum of its 3x3 neighbourhood."""
    x = newch.arange(16.).reshape(1, 1, 4, 4)
    y = F.conv2d(x, newch.ones(1, 1, 3, 3), newch.tensor([0.5]))
    a = np.arange(16.).reshape(4, 4)
    want = [[a[i:i + 3, j:j + 3].sum() + 0.5 for j in range(2)] for i in range(2)]
    assert y[0, 0].tolist() == want


@pytest.mark.parametrize("mode", ["zeros", "reflect", "replicate", "circular"])
def test_conv2d_layer_padding_modes_match_torch(torch, mode):
    tl = torch.nn.Conv2d(3, 4, 3, padding=(1, 2), padding_mode=mode).double()
    nl = nn.Conv2d(3, 4, 3, padding=(1, 2), padding_mode=mode, dtype=newch.float64)
    nl.load_state_dict({k: newch.tensor(v.detach().numpy()) for k, v in tl.state_dict().items()})
    x = RNG.standard_normal((2, 3, 6, 7))
    tx, nx = torch.tensor(x, requires_grad=True), newch.tensor(x, requires_grad=True)
    ty, ny = tl(tx), nl(nx)
    np.testing.assert_allclose(to_np(ny), ty.detach().numpy(), rtol=1e-10, atol=1e-10)
    ty.sum().backward()
    ny.sum().backward()
    np.testing.assert_allclose(to_np(nx.grad), tx.grad.numpy(), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(to_np(nl.weight.grad), tl.weight.grad.numpy(), rtol=1e-10, atol=1e-9)


def test_conv1d_layer_same_circular_matches_torch(torch):
    tl = torch.nn.Conv1d(2, 3, 4, padding="same", padding_mode="circular").double()
    nl = nn.Conv1d(2, 3, 4, padding="same", padding_mode="circular", dtype=newch.float64)
    nl.load_state_dict({k: newch.tensor(v.detach().numpy()) for k, v in tl.state_dict().items()})
    x = RNG.standard_normal((2, 2, 9))
    np.testing.assert_allclose(to_np(nl(newch.tensor(x))), tl(torch.tensor(x)).detach().numpy(),
                               rtol=1e-10, atol=1e-10)


def test_conv_transpose_layer_output_size(torch):
    tl = torch.nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1)
    nl = nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1)
    x = newch.randn(1, 4, 5, 5)
    assert tuple(nl(x, output_size=(10, 10)).shape) == tuple(
        tl(torch.randn(1, 4, 5, 5), output_size=(10, 10)).shape) == (1, 2, 10, 10)
    with pytest.raises(ValueError, match="not reachable"):
        nl(x, output_size=(12, 12))


@pytest.mark.parametrize("cls,args", [
    ("Conv2d", (1, 32, 3)), ("Conv2d", (4, 8, (3, 5), 2, 1, 1, 2, False)),
    ("Conv1d", (2, 6, 3)), ("ConvTranspose2d", (8, 4, 2, 2)),
])
def test_layer_parameters_and_state_dict_interchange(torch, cls, args):
    tl, nl = getattr(torch.nn, cls)(*args), getattr(nn, cls)(*args)
    tsd, nsd = tl.state_dict(), nl.state_dict()
    assert list(tsd) == list(nsd)
    for k in tsd:
        assert tuple(tsd[k].shape) == tuple(nsd[k].shape), k
    nl.load_state_dict({k: newch.tensor(v.numpy()) for k, v in tsd.items()})
    tl.load_state_dict({k: torch.tensor(v.numpy()) for k, v in nl.state_dict().items()})
    assert repr(nl) == repr(tl)


def test_default_init_bounds():
    """weight and bias uniform in +-1/sqrt(fan_in), as PyTorch's kaiming_uniform_(a=sqrt(5))."""
    layer = nn.Conv2d(16, 32, 3)
    bound = 1 / math.sqrt(16 * 9)
    w, b = to_np(layer.weight), to_np(layer.bias)
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    assert np.abs(w).max() > 0.9 * bound            # spread over the whole range
    assert abs(w.std() - bound / math.sqrt(3)) < 0.05 * bound


@pytest.mark.parametrize("cfg,repr_", [
    ((1, 32, 3), "Conv2d(1, 32, kernel_size=(3, 3), stride=(1, 1))"),
    ({"in_channels": 4, "out_channels": 8, "kernel_size": (3, 5), "padding": "same", "groups": 2,
      "bias": False, "padding_mode": "reflect"},
     "Conv2d(4, 8, kernel_size=(3, 5), stride=(1, 1), padding=same, groups=2, bias=False, "
     "padding_mode=reflect)"),
])
def test_conv_repr(cfg, repr_):
    layer = nn.Conv2d(**cfg) if isinstance(cfg, dict) else nn.Conv2d(*cfg)
    assert repr(layer) == repr_


@pytest.mark.parametrize("call,exc,match", [
    (lambda: F.conv2d(newch.ones(1, 3, 5, 5), newch.ones(4, 2, 3, 3)), ValueError, "3 channels"),
    (lambda: F.conv2d(newch.ones(3, 5), newch.ones(4, 3, 3, 3)), ValueError, "3-D .* or 4-D"),
    (lambda: F.conv2d(newch.ones(1, 3, 2, 2), newch.ones(4, 3, 3, 3)), ValueError, "smaller"),
    (lambda: F.conv2d(newch.ones(1, 3, 5, 5), newch.ones(4, 3, 3, 3), stride=0), ValueError, "stride"),
    (lambda: F.conv2d(newch.ones(1, 3, 5, 5), newch.ones(4, 3, 3, 3), padding="same", stride=2),
     ValueError, "strided"),
    (lambda: F.conv2d(newch.ones(1, 3, 5, 5), newch.ones(4, 3, 3, 3), padding="full"), ValueError,
     "padding"),
    (lambda: F.conv2d(newch.ones(1, 3, 5, 5), newch.ones(4, 3, 3, 3, dtype=newch.float64)),
     TypeError, "dtype"),
    (lambda: F.conv2d(newch.ones(1, 3, 5, 5), newch.ones(4, 3, 3, 3), newch.ones(3)), ValueError,
     "bias"),
    (lambda: F.conv2d(newch.ones(1, 4, 5, 5), newch.ones(3, 2, 3, 3), groups=2), ValueError,
     "divisible"),
    (lambda: F.conv_transpose2d(newch.ones(1, 2, 3, 3), newch.ones(2, 2, 3, 3), stride=2,
                                output_padding=2), ValueError, "output_padding"),
    (lambda: nn.Conv2d(3, 4, 3, groups=2), ValueError, "divisible"),
    (lambda: nn.Conv2d(3, 4, 3, padding_mode="mirror"), ValueError, "padding_mode"),
])
def test_bad_input_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_bad_input_leaves_arena_intact():
    before = newch.mem_stats()["arena_bytes_in_use"]
    with pytest.raises(ValueError):
        F.conv2d(newch.ones(1, 3, 2, 2), newch.ones(4, 3, 3, 3))
    assert newch.mem_stats()["arena_bytes_in_use"] == before


def test_backward_after_step_end_names_the_problem():
    x = newch.randn(1, 2, 5, 5)
    layer = nn.Conv2d(2, 3, 3)
    y = layer(x).sum()
    newch.step_end()
    with pytest.raises(newch.NcError, match="step_end"):
        y.backward()


def test_input_changed_in_place_is_refused():
    x = newch.randn(1, 2, 5, 5)
    w = newch.randn(3, 2, 3, 3, requires_grad=True)
    y = F.conv2d(x, w)
    x.add_(1.0)
    with pytest.raises(RuntimeError, match="modified|in-place|version"):
        y.sum().backward()


def test_graph_keeps_only_what_backward_needs():
    """Input without grad and a weight that needs one: the graph keeps the input, not the output."""
    layer = nn.Conv2d(4, 8, 3)
    x = newch.randn(16, 4, 20, 20)
    newch.step_end()
    with newch.persistent():
        x = newch.randn(16, 4, 20, 20)
    base = newch.mem_stats()["arena_bytes_in_use"]
    y = layer(x).sum()
    # the (16, 8, 18, 18) output died; only the scalar and a few bytes of the sum remain
    assert newch.mem_stats()["arena_bytes_in_use"] - base < 16 * 8 * 18 * 18 * 4 // 2
    y.backward()
    assert layer.weight.grad is not None


def test_double_backward_is_refused_not_silently_zero():
    x = newch.randn(1, 2, 5, 5, requires_grad=True)
    w = newch.randn(3, 2, 3, 3, requires_grad=True)
    y = (F.conv2d(x, w) ** 2).sum()
    with pytest.raises(RuntimeError, match="double backward"):
        newch.autograd.grad(y, x, create_graph=True)


def test_empty_batch_and_non_contiguous_input(torch):
    x = newch.zeros(0, 3, 5, 5, requires_grad=True)
    w = newch.ones(4, 3, 3, 3, requires_grad=True)
    b = newch.ones(4, requires_grad=True)
    y = F.conv2d(x, w, b)
    assert tuple(y.shape) == (0, 4, 3, 3)
    y.sum().backward()
    assert to_np(w.grad).tolist() == np.zeros((4, 3, 3, 3)).tolist()
    assert to_np(b.grad).tolist() == [0.0] * 4
    a = RNG.standard_normal((2, 5, 5, 3))
    wt = RNG.standard_normal((4, 3, 3, 3))
    got = F.conv2d(newch.tensor(a).permute(0, 3, 1, 2), newch.tensor(wt))
    want = torch.nn.functional.conv2d(torch.tensor(a).permute(0, 3, 1, 2), torch.tensor(wt))
    np.testing.assert_allclose(to_np(got), want.numpy(), rtol=1e-10, atol=1e-10)
