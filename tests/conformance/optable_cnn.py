"""Conformance rows for convolution, pooling, padding and resampling (functional and layers).

Part of THE table (``optable.TABLE`` through ``optable_nn.NN``). Shapes are
drawn so that the window fits (torch and newch both refuse the rest, checked
by the ``bad`` cases); values include integer-valued floats, so max pooling
meets ties (both keep the first maximum).
"""
import numpy as np

from . import gens as G
from . import strategies as S
from .cases import Case
from .entry import Layer, Op, functional
from .strategies import FLOAT

CONV_TOL = {"float32": (1e-4, 1e-5)}


def _conv_shapes(draw, nd, transposed=False):
    """(input shape, weight shape, options) of a valid convolution over nd spatial dims."""
    groups = S.choice(draw, (1, 1, 2))
    cin, cout = groups * S.integer(draw, 1, 2), groups * S.integer(draw, 1, 2)
    k = tuple(S.integer(draw, 1, 3) for _ in range(nd))
    stride = tuple(S.integer(draw, 1, 2) for _ in range(nd))
    dil = tuple(S.integer(draw, 1, 2) for _ in range(nd))
    kw = {"stride": stride, "dilation": dil, "groups": groups}
    if transposed:
        pad = tuple(S.integer(draw, 0, (d * (kk - 1)) // 2) for kk, d in zip(k, dil))
        kw.update(padding=pad, output_padding=tuple(S.integer(draw, 0, max(s, d) - 1)
                                                    for s, d in zip(stride, dil)))
        sizes = tuple(S.integer(draw, 1, 4) for _ in range(nd))
        wshape = (cin, cout // groups) + k
    else:
        how = S.choice(draw, ("int", "int", "same", "valid"))
        if how == "same":
            kw["stride"] = (1,) * nd
            kw["padding"] = "same"
        else:
            kw["padding"] = "valid" if how == "valid" else tuple(S.integer(draw, 0, 1) for _ in range(nd))
        sizes = tuple(d * (kk - 1) + 1 + S.integer(draw, 0, 3) for kk, d in zip(k, dil))
        wshape = (cout, cin // groups) + k
    lead = (S.integer(draw, 1, 2),) if S.integer(draw, 0, 4) else ()
    return lead + (cin,) + sizes, wshape, kw, cout


def _conv(nd, transposed=False):
    def gen(draw):
        dt = S.dtype(draw, FLOAT)
        xs, ws, kw, cout = _conv_shapes(draw, nd, transposed)
        x, w = S.fill(draw, xs, dt), S.fill(draw, ws, dt)
        b = S.fill(draw, (cout,), dt) if S.flag(draw) else None
        return G.make_case(draw, (x, w, b), kw)
    return gen


def _f32(*shape):
    return np.zeros(shape, np.float32)


def _pool_case(draw, nd, max_pool):
    dt = S.dtype(draw, FLOAT)
    k = tuple(S.integer(draw, 1, 3) for _ in range(nd))
    s = tuple(S.integer(draw, 1, 3) for _ in range(nd))
    d = tuple(S.integer(draw, 1, 2) for _ in range(nd)) if max_pool else (1,) * nd
    p = tuple(S.integer(draw, 0, kk // 2) for kk in k)
    sizes = tuple(dd * (kk - 1) + 1 + S.integer(draw, 0, 4) for kk, dd in zip(k, d))
    lead = (S.integer(draw, 1, 2),) if S.integer(draw, 0, 4) else ()
    x = S.fill(draw, lead + (S.integer(draw, 1, 3),) + sizes, dt)
    kw = {"kernel_size": k, "padding": p, "ceil_mode": S.flag(draw)}
    if S.integer(draw, 0, 3):
        kw["stride"] = s
    if max_pool:
        kw["dilation"] = d
    elif S.flag(draw):
        kw["count_include_pad"] = False
    return x, kw


def _pool(nd, max_pool):
    def gen(draw):
        x, kw = _pool_case(draw, nd, max_pool)
        return G.make_case(draw, (x,), kw)
    return gen


def _adaptive(nd):
    def gen(draw):
        lead = (S.integer(draw, 1, 2),) if S.integer(draw, 0, 4) else ()
        x = S.fill(draw, lead + (S.integer(draw, 1, 3),) + tuple(S.integer(draw, 1, 7) for _ in range(nd)),
                   S.dtype(draw, FLOAT))
        out = tuple(S.integer(draw, 1, 5) for _ in range(nd))
        return G.make_case(draw, (x, out[0] if nd == 1 or S.flag(draw) else out))
    return gen


def _pad(draw):
    mode = S.choice(draw, ("constant", "constant", "reflect", "replicate", "circular"))
    npad = S.integer(draw, 1, 2)
    x = S.fill(draw, (S.integer(draw, 1, 2), S.integer(draw, 1, 2)) +
               tuple(S.integer(draw, 2, 5) for _ in range(npad)), S.dtype(draw, FLOAT))
    pad = []
    for n in reversed(x.shape[-npad:]):
        hi = {"reflect": n - 1, "circular": n}.get(mode, 3)
        lo = -1 if mode == "constant" else 0
        pad += [S.integer(draw, lo, hi), S.integer(draw, lo, hi)]
    kw = {"mode": mode}
    if mode == "constant" and S.flag(draw):
        kw["value"] = 1.5
    return G.make_case(draw, (x, tuple(pad)), kw)


def _interp(draw):
    nd = S.integer(draw, 1, 2)
    mode = S.choice(draw, ("nearest", "linear" if nd == 1 else "bilinear"))
    x = S.fill(draw, (S.integer(draw, 1, 2), S.integer(draw, 1, 2)) +
               tuple(S.integer(draw, 1, 5) for _ in range(nd)), S.dtype(draw, FLOAT))
    if S.flag(draw):
        kw = {"size": tuple(S.integer(draw, 1, 8) for _ in range(nd))}
    else:
        kw = {"scale_factor": S.choice(draw, (2, 0.5, 1.5, 3))}
    kw["mode"] = mode
    if mode != "nearest" and S.flag(draw):
        kw["align_corners"] = S.flag(draw)
    return G.make_case(draw, (x,), kw)


FUNCTIONAL = [
    Op("F.conv2d", _conv(2), {"F.conv2d": functional("conv2d")}, tol=CONV_TOL, gtol=CONV_TOL,
       bad=[Case((_f32(1, 3, 5, 5), _f32(4, 2, 3, 3))), Case((_f32(1, 3, 2, 2), _f32(4, 3, 3, 3))),
            Case((_f32(1, 3, 5, 5), _f32(4, 3, 3, 3)), {"padding": "same", "stride": 2})]),
    Op("F.conv1d", _conv(1), {"F.conv1d": functional("conv1d")}, tol=CONV_TOL, gtol=CONV_TOL,
       bad=[Case((_f32(1, 3, 5), _f32(4, 2, 3)))]),
    Op("F.conv_transpose2d", _conv(2, True), {"F.conv_transpose2d": functional("conv_transpose2d")},
       tol=CONV_TOL, gtol=CONV_TOL, bad=[Case((_f32(1, 3, 5, 5), _f32(2, 2, 3, 3)))]),
    Op("F.max_pool2d", _pool(2, True), {"F.max_pool2d": functional("max_pool2d")},
       bad=[Case((_f32(1, 1, 4, 4), 2), {"padding": 2})]),
    Op("F.max_pool1d", _pool(1, True), {"F.max_pool1d": functional("max_pool1d")}),
    Op("F.avg_pool2d", _pool(2, False), {"F.avg_pool2d": functional("avg_pool2d")},
       bad=[Case((_f32(1, 1, 4, 4), 2), {"padding": 2})]),
    Op("F.avg_pool1d", _pool(1, False), {"F.avg_pool1d": functional("avg_pool1d")}),
    Op("F.adaptive_avg_pool2d", _adaptive(2), {"F.adaptive_avg_pool2d": functional("adaptive_avg_pool2d")}),
    Op("F.adaptive_avg_pool1d", _adaptive(1), {"F.adaptive_avg_pool1d": functional("adaptive_avg_pool1d")}),
    Op("F.adaptive_max_pool2d", _adaptive(2), {"F.adaptive_max_pool2d": functional("adaptive_max_pool2d")}),
    Op("F.adaptive_max_pool1d", _adaptive(1), {"F.adaptive_max_pool1d": functional("adaptive_max_pool1d")}),
    Op("F.pad", _pad, {"F.pad": functional("pad")}, bad=[Case((_f32(2, 3), (1,)))]),
    Op("F.interpolate", _interp, {"F.interpolate": functional("interpolate")},
       tol={"float32": (1e-5, 1e-5)}),
]


def _layer(name, cfg_and_input, tol=None):
    def build(lib, **kw):
        return getattr(lib.nn, name)(**kw)
    return Layer("nn." + name, build, cfg_and_input, tol=tol, gtol=tol)


def _conv_layer(nd, transposed=False):
    def gen(draw):
        dt = "float32"
        xs, ws, kw, cout = _conv_shapes(draw, nd, transposed)
        cin = xs[-nd - 1]
        kw = dict(kw, in_channels=cin, out_channels=cout, kernel_size=ws[2:], bias=S.flag(draw))
        if not transposed and kw["padding"] != "valid" and S.flag(draw):
            kw["padding_mode"] = S.choice(draw, ("reflect", "replicate", "circular"))
            if kw["padding"] != "same":
                kw["padding"] = tuple(min(p, n - 1) for p, n in zip(kw["padding"], xs[-nd:]))
        return kw, G.make_case(draw, (S.fill(draw, xs, dt),))
    return gen


def _pool_layer(nd, max_pool):
    def gen(draw):
        x, kw = _pool_case(draw, nd, max_pool)
        return kw, G.make_case(draw, (x.astype(np.float32),))
    return gen


def _adaptive_layer(nd):
    def gen(draw):
        case = _adaptive(nd)(draw)
        return {"output_size": case.args[1]}, G.make_case(draw, (case.args[0].astype(np.float32),))
    return gen


def _pad_layer(draw):
    x = S.fill(draw, (S.integer(draw, 1, 2), S.integer(draw, 1, 4), S.integer(draw, 1, 4)), "float32")
    pad = S.integer(draw, 0, 2) if S.flag(draw) else tuple(S.integer(draw, -1, 2) for _ in range(4))
    return {"padding": pad}, G.make_case(draw, (x,))


def _upsample_layer(draw):
    case = _interp(draw)
    return dict(case.kwargs), G.make_case(draw, (case.args[0].astype(np.float32),))


LAYERS = [
    _layer("Conv2d", _conv_layer(2), CONV_TOL), _layer("Conv1d", _conv_layer(1), CONV_TOL),
    _layer("ConvTranspose2d", _conv_layer(2, True), CONV_TOL),
    _layer("MaxPool2d", _pool_layer(2, True)), _layer("MaxPool1d", _pool_layer(1, True)),
    _layer("AvgPool2d", _pool_layer(2, False)), _layer("AvgPool1d", _pool_layer(1, False)),
    _layer("AdaptiveAvgPool2d", _adaptive_layer(2)), _layer("AdaptiveAvgPool1d", _adaptive_layer(1)),
    _layer("AdaptiveMaxPool2d", _adaptive_layer(2)), _layer("AdaptiveMaxPool1d", _adaptive_layer(1)),
    _layer("ZeroPad2d", _pad_layer),
    _layer("ConstantPad2d", lambda d: ({**_pad_layer(d)[0], "value": 0.5},
                                       G.make_case(d, (S.fill(d, (2, 3, 3), "float32"),)))),
    _layer("ReflectionPad2d", lambda d: ({"padding": tuple(S.integer(d, 0, 2) for _ in range(4))},
                                         G.make_case(d, (S.fill(d, (2, 3, 4), "float32"),)))),
    _layer("ReplicationPad2d", lambda d: ({"padding": tuple(S.integer(d, 0, 3) for _ in range(4))},
                                          G.make_case(d, (S.fill(d, (2, 3, 4), "float32"),)))),
    _layer("Upsample", _upsample_layer, {"float32": (1e-5, 1e-5)}),
]

CNN = FUNCTIONAL + LAYERS
