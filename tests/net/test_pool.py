"""Pooling, padding and interpolation: against PyTorch, finite differences, by hand, errors."""
import numpy as np
import pytest

import newch
import newch.nn as nn
import newch.nn.functional as F

from tests.autograd.gradcheck import gradcheck, to_np

RNG = np.random.default_rng(1)

CASES = [
    ("max_pool2d", (2, 3, 8, 8), (2,), {}),
    ("max_pool2d", (2, 3, 9, 7), (3, 2, 1), {"ceil_mode": True}),
    ("max_pool2d", (2, 3, 9, 7), ((3, 2), (2, 1), (1, 1)), {"dilation": (2, 1)}),
    ("max_pool2d", (3, 9, 7), (2,), {}),
    ("max_pool1d", (2, 3, 9), (3, 2, 1), {"ceil_mode": True}),
    ("avg_pool2d", (2, 3, 9, 7), (3, 2, 1), {"ceil_mode": True}),
    ("avg_pool2d", (2, 3, 9, 7), (3, 2, 1), {"ceil_mode": True, "count_include_pad": False}),
    ("avg_pool2d", (2, 3, 9, 7), ((3, 2), None, (1, 0)), {"divisor_override": 5}),
    ("avg_pool1d", (2, 3, 10), (4, 3, 2), {"ceil_mode": True, "count_include_pad": False}),
    ("adaptive_avg_pool2d", (2, 3, 9, 7), ((4, 3),), {}),
    ("adaptive_avg_pool2d", (2, 3, 9, 7), ((None, 3),), {}),
    ("adaptive_avg_pool1d", (2, 3, 10), (4,), {}),
    ("adaptive_max_pool2d", (2, 3, 9, 7), ((4, 5),), {}),
    ("adaptive_max_pool1d", (2, 3, 10), (4,), {}),
    ("interpolate", (2, 3, 5, 4), (), {"scale_factor": 2}),
    ("interpolate", (2, 3, 5, 4), (), {"size": (7, 3)}),
    ("interpolate", (2, 3, 5, 4), (), {"scale_factor": (1.5, 2.5), "mode": "bilinear"}),
    ("interpolate", (2, 3, 5, 4), (), {"size": (8, 9), "mode": "bilinear", "align_corners": True}),
    ("interpolate", (2, 3, 5, 4), (), {"size": (3, 2), "mode": "bilinear"}),
    ("interpolate", (2, 3, 6), (), {"size": 11, "mode": "linear"}),
    ("interpolate", (2, 3, 6), (), {"scale_factor": 3}),
    ("pad", (2, 3, 4, 5), ((1, 2, 0, 3),), {}),
    ("pad", (2, 3, 4, 5), ((1, -2, -1, 3),), {"value": 2.5}),
    ("pad", (2, 3, 4, 5), ((3, 2, 1, 3),), {"mode": "reflect"}),
    ("pad", (2, 3, 4, 5), ((3, 2, 1, 6),), {"mode": "replicate"}),
    ("pad", (2, 3, 4, 5), ((3, 2, 1, 4),), {"mode": "circular"}),
    ("pad", (2, 3, 5), ((2, 4),), {"mode": "reflect"}),
]


def _run(lib, fn, x, args, kw, g, ret_indices=False):
    out = getattr(lib.nn.functional, fn)(x, *args, **kw)
    if ret_indices:
        out, idx = out
    (out * g).sum().backward()
    return out, (idx if ret_indices else None)


@pytest.mark.parametrize("fn,shape,args,kw", CASES)
def test_matches_torch_float64(torch, fn, shape, args, kw):
    x = RNG.standard_normal(shape)
    with torch.no_grad():
        ref = getattr(torch.nn.functional, fn)(torch.tensor(x), *args, **kw)
    g = RNG.standard_normal(tuple(ref.shape))
    tx, nx = torch.tensor(x, requires_grad=True), newch.tensor(x, requires_grad=True)
    ty, _ = _run(torch, fn, tx, args, kw, torch.tensor(g))
    ny, _ = _run(newch, fn, nx, args, kw, newch.tensor(g))
    assert tuple(ny.shape) == tuple(ty.shape)
    np.testing.assert_allclose(to_np(ny), ty.detach().numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(to_np(nx.grad), tx.grad.numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("fn,shape,args,kw", [c for c in CASES if "max" in c[0]])
def test_return_indices_match_torch(torch, fn, shape, args, kw):
    x = RNG.standard_normal(shape)
    _, ti = getattr(torch.nn.functional, fn)(torch.tensor(x), *args, return_indices=True, **kw)
    _, ni = getattr(F, fn)(newch.tensor(x), *args, return_indices=True, **kw)
    assert ni.dtype == newch.int64
    assert ni.tolist() == ti.tolist()


def test_float32_max_pool_and_nan_and_ties(torch):
    x = np.array([[[[1.0, 1.0, 0.0, np.nan], [0.0, 1.0, 2.0, 2.0]]]], np.float32)
    ty, ti = torch.nn.functional.max_pool2d(torch.tensor(x), 2, return_indices=True)
    ny, ni = F.max_pool2d(newch.tensor(x), 2, return_indices=True)
    np.testing.assert_array_equal(to_np(ny), ty.numpy())
    assert ni.tolist() == ti.tolist()


def test_max_pool_by_hand_and_gradient_goes_to_the_maximum():
    x = newch.tensor([[[[1.0, 5.0, 2.0, 0.0], [3.0, 4.0, 8.0, 1.0]]]], requires_grad=True)
    y = F.max_pool2d(x, 2)
    assert y.tolist() == [[[[5.0, 8.0]]]]
    y.sum().backward()
    assert x.grad.tolist() == [[[[0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0]]]]


def test_avg_pool_by_hand():
    x = newch.arange(16.).reshape(1, 1, 4, 4)
    assert F.avg_pool2d(x, 2).tolist() == [[[[2.5, 4.5], [10.5, 12.5]]]]
    # padded corners: count_include_pad divides by 4, otherwise by the 1 real element
    assert F.avg_pool2d(x, 2, 2, 1)[0, 0, 0, 0].item() == 0.0
    assert F.avg_pool2d(x[:, :, 1:, 1:], 2, 2, 1, count_include_pad=False)[0, 0, 0, 0].item() == 5.0


@pytest.mark.parametrize("fn,args,kw", [
    ("max_pool2d", (2, 1), {"padding": 1}),
    ("avg_pool2d", (3, 2, 1), {"ceil_mode": True, "count_include_pad": False}),
    ("adaptive_avg_pool2d", ((2, 3),), {}),
    ("adaptive_max_pool2d", ((3, 2),), {}),
    ("interpolate", (), {"size": (4, 6), "mode": "bilinear"}),
    ("pad", ((1, 2, 2, 0),), {"mode": "reflect"}),
])
def test_finite_differences(fn, args, kw):
    # distinct values, far apart: a max never switches under the finite-difference step
    x = RNG.permutation(40).reshape(1, 2, 4, 5) * 0.1
    gradcheck(lambda t: getattr(F, fn)(t, *args, **kw), x)


@pytest.mark.parametrize("call,exc,match", [
    (lambda: F.max_pool2d(newch.ones(1, 1, 4, 4), 2, padding=2), ValueError, "half"),
    (lambda: F.max_pool2d(newch.ones(1, 1, 1, 4), 2), ValueError, "smaller"),
    (lambda: F.max_pool2d(newch.ones(4, 4), 2), ValueError, "3-D .* or 4-D"),
    (lambda: F.max_pool2d(newch.ones(1, 1, 4, 4, dtype=newch.int64), 2), TypeError, "floating"),
    (lambda: F.avg_pool2d(newch.ones(1, 1, 4, 4), 0), ValueError, "kernel_size"),
    (lambda: F.avg_pool2d(newch.ones(1, 1, 4, 4), 2, divisor_override=0), ValueError, "divisor"),
    (lambda: F.adaptive_avg_pool2d(newch.ones(1, 1, 4, 4), (2, 2, 2)), ValueError, "output_size"),
    (lambda: F.interpolate(newch.ones(1, 1, 4, 4), mode="bicubic", size=2), ValueError, "mode"),
    (lambda: F.interpolate(newch.ones(1, 1, 4, 4)), ValueError, "exactly one"),
    (lambda: F.interpolate(newch.ones(1, 1, 4), size=2, mode="bilinear"), ValueError, "4-D"),
    (lambda: F.pad(newch.ones(1, 1, 4, 4), (1,)), ValueError, "even"),
    (lambda: F.pad(newch.ones(1, 4, 4), (4, 0), mode="reflect"), ValueError, "at most 3"),
    (lambda: F.pad(newch.ones(1, 1, 4, 4), (1, 1), mode="wrap"), ValueError, "mode"),
])
def test_bad_input_errors(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_max_pool_keeps_a_byte_per_output_for_backward():
    """The graph holds uint8 window positions (a quarter of the output), not the input."""
    with newch.persistent():
        x = newch.randn(8, 16, 32, 32)
    x.requires_grad_(True)
    base = newch.mem_stats()["arena_bytes_in_use"]
    y = F.max_pool2d(x, 2)
    held = newch.mem_stats()["arena_bytes_in_use"] - base
    out_bytes = 8 * 16 * 16 * 16 * 4
    assert held <= out_bytes + out_bytes // 4 + 1024
    y.sum().backward()
    assert x.grad.shape == x.shape


@pytest.mark.parametrize("name,args,text", [
    ("MaxPool2d", (2,), "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)"),
    ("MaxPool1d", (3, 1), "MaxPool1d(kernel_size=3, stride=1, padding=0, dilation=1, ceil_mode=False)"),
    ("AvgPool2d", (2,), "AvgPool2d(kernel_size=2, stride=2, padding=0)"),
    ("AvgPool1d", (3,), "AvgPool1d(kernel_size=(3,), stride=(3,), padding=(0,))"),
    ("AdaptiveAvgPool2d", ((1, 1),), "AdaptiveAvgPool2d(output_size=(1, 1))"),
    ("AdaptiveAvgPool1d", (4,), "AdaptiveAvgPool1d(output_size=4)"),
    ("AdaptiveMaxPool2d", (2,), "AdaptiveMaxPool2d(output_size=2)"),
    ("ZeroPad2d", (1,), "ZeroPad2d((1, 1, 1, 1))"),
    ("ReflectionPad2d", ((1, 0, 2, 1),), "ReflectionPad2d((1, 0, 2, 1))"),
    ("Upsample", (None, 2), "Upsample(scale_factor=2.0, mode='nearest')"),
])
def test_layers_repr_and_forward_match_torch(torch, name, args, text):
    nl, tl = getattr(nn, name)(*args), getattr(torch.nn, name)(*args)
    assert repr(nl) == repr(tl) == text
    x = RNG.standard_normal((2, 3, 6, 6) if "1d" not in name else (2, 3, 6))
    np.testing.assert_allclose(to_np(nl(newch.tensor(x))), tl(torch.tensor(x)).numpy(), rtol=1e-12)


def test_layer_in_sequential_trains():
    model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 2))
    opt = newch.optim.SGD(model.parameters(), lr=0.1)
    x, y = newch.randn(8, 1, 8, 8), newch.randn(8, 2)
    losses = []
    for _ in range(20):
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0]
