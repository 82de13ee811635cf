"""The nn part of THE conformance table (``optable.TABLE``): functional, layers, losses, init, optim.

Layers are built on both sides with the same options; torch's initial
parameter values are copied into newch so that outputs and parameter
gradients can be compared. Optimizers run the same steps on the same
parameters and gradients.
"""
import numpy as np

from . import gens as G
from . import strategies as S
from .cases import Case, Const
from . import gens_optim as GO
from .entry import Layer, Op, Optim, functional, same, spellings
from .strategies import ALL, FLOAT


def _inplace_kw(draw, x, slope=0.0):
    """Sometimes inplace=True (never with a negative slope: PyTorch's backward refuses that)."""
    return {"inplace": True} if slope >= 0 and S.integer(draw, 0, 3) == 0 else {}


def _with_inplace(draw, x, key, values):
    v = S.choice(draw, values)
    return {key: v, **_inplace_kw(draw, x, v)}


def _F(name, fixed=None):
    """F.<name>(x, **kw); with inplace=True on a clone (torch refuses it on a leaf that needs grad)."""
    def call(lib, x, *args, **kw):
        f = getattr(lib.nn.functional, name)
        return f(x.clone() if kw.get("inplace") or name.endswith("_") else x, *args, **kw)
    return {"F." + name: (call, call)}


def _linear(draw):
    """input (*, in), weight (out, in) (now and then 1-D or mismatched), bias (out,) or None."""
    dt = S.dtype(draw, FLOAT)
    i, o = S.integer(draw, 0, 5), S.integer(draw, 0, 5)
    lead = S.shape(draw, 0, 2, 0, 3)
    x = S.fill(draw, lead + (i if S.integer(draw, 0, 11) else i + 1,), dt)
    w = S.fill(draw, (o, i) if S.integer(draw, 0, 5) else (i,), dt)
    b = S.fill(draw, (o,) if w.ndim == 2 else (), dt) if S.flag(draw) else None
    if w.ndim == 1 and x.ndim == 2:
        b = None        # torch refuses a bias there (its addmm path), newch does not: see the docs
    return G.make_case(draw, (x, w, b))


def _pair(draw, extra=None):
    """input, a target of the same shape (now and then a broadcastable other one), loss options."""
    sa, sb = S.broadcast_pair(draw, 2, bad=False)
    x = S.fill(draw, sa, S.dtype(draw, FLOAT))
    same_shape = S.integer(draw, 0, 5) != 0
    y = Const(S.fill(draw, sa if same_shape else sb, x.dtype.name))
    kw = {"reduction": S.choice(draw, ("mean", "sum", "none"))} if S.flag(draw) else {}
    if S.integer(draw, 0, 31) == 0:
        kw["reduction"] = "average"
    kw.update(extra(draw, x) if extra else {})
    return G.make_case(draw, (x, y), kw)


def _weight(draw, x):
    if S.integer(draw, 0, 3):
        return {}
    return {"weight": Const(S.fill(draw, x.shape, x.dtype.name, 0.0, 2.0))}


def _empty_int(case):
    """torch skips its dtype check when there is nothing to compute; newch always checks."""
    x = case.args[0]
    return x.size == 0 and x.dtype.kind != "f" and "dtype" not in case.kwargs


FUNCTIONAL = [
    Op("F.linear", _linear, {"F.linear": functional("linear")}, tol={"float32": (1e-4, 1e-5)},
       gtol={"float32": (1e-4, 1e-5)}),
    Op("F.relu", G.unary(FLOAT, kw=_inplace_kw), {**_F("relu"), **_F("relu_")}),
    Op("F.leaky_relu", G.unary(FLOAT, kw=lambda d, x: _with_inplace(d, x, "negative_slope",
                                                                     (0.01, 0.3, -0.2))),
       {**_F("leaky_relu")}),
    Op("F.leaky_relu_", G.unary(FLOAT), _F("leaky_relu_")),
    Op("F.elu", G.unary(FLOAT, kw=lambda d, x: _with_inplace(d, x, "alpha", (1.0, 0.5, -0.3))),
       _F("elu")),
    Op("F.elu_", G.unary(FLOAT), _F("elu_")),
    Op("F.gelu", G.unary(FLOAT, kw=lambda d, x: {"approximate": S.choice(d, ("none", "tanh"))}
                         if S.flag(d) else {}), _F("gelu"),
       bad=[Case((np.zeros(2, np.float32),), {"approximate": "fast"})]),
    Op("F.silu", G.unary(FLOAT, kw=_inplace_kw), _F("silu")),
    Op("F.sigmoid", G.unary(FLOAT), {**_F("sigmoid"), **_F("tanh")}),
    Op("softmax", G.softmax_like(ALL), spellings("softmax", "fmF"), lenient=_empty_int),
    Op("log_softmax", G.softmax_like(ALL), spellings("log_softmax", "fmF"), lenient=_empty_int),
    Op("F.mse_loss", lambda d: _pair(d, _weight), {"F.mse_loss": functional("mse_loss"),
                                                   "F.l1_loss": functional("l1_loss")}),
    Op("F.smooth_l1_loss", lambda d: _pair(d, lambda d2, x: {"beta": S.choice(d2, (1.0, 0.5, 0.0,
                                                                                   -1.0))}),
       {"F.smooth_l1_loss": functional("smooth_l1_loss")}),
    Op("F.huber_loss", lambda d: _pair(d, lambda d2, x: {"delta": S.choice(d2, (1.0, 0.5, 2.0)),
                                                         **_weight(d2, x)}),
       {"F.huber_loss": functional("huber_loss")}, bad=[Case((np.zeros(2, np.float32),
                                                               Const(np.zeros(2, np.float32))),
                                                              {"delta": 0.0})]),
]


def _init_call(name):
    def call(lib, x, *args, **kw):
        t = x.detach().clone()
        r = getattr(lib.nn.init, name)(t, *args, **kw)
        return r, r is t
    return {"nn.init." + name: (call, call)}


def _init_rows():
    exact = [Op("nn.init.constant_", G.unary(FLOAT, kw=lambda d, x: {"val": S.scalar(d, "float")}),
                {**_init_call("constant_"), **_init_call("ones_"), **_init_call("zeros_")}, grad=False),
             Op("nn.init.eye_", G.unary(FLOAT, min_dims=1, max_dims=3), _init_call("eye_"), grad=False),
             Op("nn.init.calculate_gain", lambda d: Case((S.choice(d, (
                 "linear", "conv2d", "sigmoid", "tanh", "relu", "leaky_relu", "selu", "softmax")),) + (
                 (S.choice(d, (0.2, 1, None)),) if S.flag(d) else ())),
                {"nn.init.calculate_gain": same(lambda m, *a: m.nn.init.calculate_gain(*a))},
                grad=False)]
    rand = {}
    for name in ("uniform_", "normal_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_",
                 "kaiming_normal_", "trunc_normal_", "orthogonal_"):
        rand.update(_init_call(name))
    return exact + [Op("nn.init.random", G.unary(FLOAT, min_dims=2, max_dims=3, min_side=1), rand,
                       grad=False, values=False)]


def _act_layer(name, cfg):
    """A row for an activation layer: ``cfg(draw) -> options``; forward on ``x * 1`` (inplace-safe)."""
    def gen(draw):
        return cfg(draw), G.make_case(draw, (S.array(draw, None, FLOAT),))
    return Layer("nn." + name, lambda lib, **kw: getattr(lib.nn, name)(**kw), gen,
                 forward=lambda mod, x: mod(x * 1))


def _none(draw):
    return {}


def _inplace_cfg(draw):
    return {"inplace": S.flag(draw)}


def _loss_layer(name, extra):
    def gen(draw):
        case = _pair(draw)
        red = case.kwargs.pop("reduction", None)
        cfg = {**({"reduction": red} if red else {}), **extra(draw)}
        return cfg, case
    return Layer("nn." + name, lambda lib, **kw: getattr(lib.nn, name)(**kw), gen)


def _linear_layer(draw):
    i, o = S.integer(draw, 0, 5), S.integer(draw, 0, 5)
    x = S.fill(draw, S.shape(draw, 0, 2, 0, 3) + (i,), "float32")
    return {"in_features": i, "out_features": o, "bias": S.flag(draw)}, G.make_case(draw, (x,))


def _mlp(lib, kind, width=3):
    nn = lib.nn
    if kind == "Sequential":
        return nn.Sequential(nn.Linear(4, width), nn.ReLU(), nn.Linear(width, 2), nn.Tanh())
    if kind == "ModuleList":
        return nn.ModuleList([nn.Linear(4, width), nn.Linear(width, 2)])
    if kind == "ModuleDict":
        return nn.ModuleDict({"first": nn.Linear(4, width), "second": nn.Linear(width, 2)})
    return _custom_module(lib)


def _custom_module(lib):
    """A user-written Module with a Parameter, a buffer and a child, as in small-model scripts."""
    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.scale = lib.nn.Parameter(lib.ones(4))
            self.register_buffer("shift", lib.full((4,), 0.5))
            self.head = lib.nn.Linear(4, 2)

        def forward(self, x):
            return self.head(x * self.scale + self.shift).relu()
    return Net()


def _run_container(mod, x):
    """Sequential: call it; ModuleList: iterate; ModuleDict: look up by key."""
    if type(mod).__name__ == "ModuleList":
        for layer in mod:
            x = layer(x)
        return x, len(mod)
    if type(mod).__name__ == "ModuleDict":
        return mod["second"](mod["first"](x)), sorted(mod.keys())
    return mod(x), len(mod), type(mod[0]).__name__


def _container(kind):
    def gen(draw):
        return {"kind": kind, "width": S.integer(draw, 1, 4)}, G.make_case(
            draw, (S.fill(draw, S.shape(draw, 0, 2, 0, 3) + (4,), "float32"),))
    return Layer("nn." + kind, lambda lib, kind, width: _mlp(lib, kind, width), gen,
                 forward=_run_container)


LAYERS = [
    Layer("nn.Linear", lambda lib, **kw: lib.nn.Linear(**kw), _linear_layer,
          tol={"float32": (1e-4, 1e-5)}, bad=[({"in_features": -1, "out_features": 2},
                                               Case((np.zeros((1, 1), np.float32),)))]),
    _act_layer("Identity", _none), _act_layer("ReLU", _inplace_cfg),
    _act_layer("LeakyReLU", lambda d: {"negative_slope": S.choice(d, (0.01, 0.2)), **_inplace_cfg(d)}),
    _act_layer("ELU", lambda d: {"alpha": S.choice(d, (1.0, 0.5)), **_inplace_cfg(d)}),
    _act_layer("GELU", lambda d: {"approximate": S.choice(d, ("none", "tanh"))}),
    _act_layer("SiLU", _inplace_cfg), _act_layer("Sigmoid", _none), _act_layer("Tanh", _none),
    _act_layer("Softmax", lambda d: {"dim": S.integer(d, -1, 0)}),
    _act_layer("LogSoftmax", lambda d: {"dim": S.integer(d, -1, 0)}),
    _act_layer("Flatten", lambda d: {"start_dim": S.integer(d, -2, 1), "end_dim": S.integer(d, -1, 1)}),
    Layer("nn.Unflatten", lambda lib, **kw: lib.nn.Unflatten(**kw),
          lambda d: ({"dim": -1, "unflattened_size": (2, -1)},
                     G.make_case(d, (S.fill(d, S.shape(d, 0, 2, 1, 3) + (2 * S.integer(d, 0, 3),),
                                        "float32"),)))),
    _loss_layer("MSELoss", _none), _loss_layer("L1Loss", _none),
    _loss_layer("SmoothL1Loss", lambda d: {"beta": S.choice(d, (1.0, 0.5, 0.0))}),
    _loss_layer("HuberLoss", lambda d: {"delta": S.choice(d, (1.0, 0.5, 2.0))}),
    _container("Sequential"), _container("ModuleList"), _container("ModuleDict"),
    Layer("nn.Module", lambda lib, kind, width: _mlp(lib, kind, width),
          lambda d: ({"kind": "custom", "width": 3},
                     G.make_case(d, (S.fill(d, S.shape(d, 0, 2, 0, 3) + (4,), "float32"),)))),
]
LAYERS[-1].calls = {"nn.Module": None, "nn.Parameter": None}


def _sgd_gen(draw):
    momentum = S.choice(draw, (0.0, 0.0, 0.9, 0.5))
    cfg = {"lr": S.choice(draw, (0.1, 0.01, 1.0)), "momentum": momentum,
           "weight_decay": S.choice(draw, (0.0, 0.0, 0.01)), "maximize": S.flag(draw)}
    if momentum and S.flag(draw):
        cfg["nesterov"] = True
    elif momentum:
        cfg["dampening"] = S.choice(draw, (0.0, 0.1))
    if S.flag(draw):
        cfg["groups"] = {"lr": 0.05}
    shapes = [S.shape(draw, 0, 2, 0, 3) for _ in range(S.integer(draw, 1, 3))]
    return cfg, shapes, S.integer(draw, 1, 4)


def _plain_sgd(lib, params, lr):
    """A user-written Optimizer subclass: its own step() over param_groups, as tutorials write it."""
    class PlainSGD(lib.optim.Optimizer):
        def __init__(self, params, lr):
            super().__init__(params, dict(lr=lr))

        @lib.no_grad()
        def step(self, closure=None):
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is not None:
                        p.add_(p.grad, alpha=-group["lr"])
    return PlainSGD(params, lr)


def _plain_gen(draw):
    shapes = [S.shape(draw, 0, 2, 0, 3) for _ in range(S.integer(draw, 1, 3))]
    cfg = {"lr": S.choice(draw, (0.1, 0.5))}
    if S.flag(draw):
        cfg["groups"] = {"lr": 0.05}
    return cfg, shapes, S.integer(draw, 1, 3)


OPTIMIZERS = [
    Optim("optim.Optimizer", _plain_sgd, _plain_gen, bad=[({"lr": 0.1}, [])]),
    Optim("optim.SGD", lambda lib, params, **kw: lib.optim.SGD(params, **kw), _sgd_gen,
          bad=[(cfg, [(2,)]) for cfg in (
              {"lr": -1.0}, {"lr": 0.1, "momentum": -0.5}, {"lr": 0.1, "weight_decay": -1.0},
              {"lr": 0.1, "nesterov": True}, {"lr": 0.1, "momentum": 0.9, "dampening": 0.1,
                                              "nesterov": True})] + [({"lr": 0.1}, [])]),
]

from .optable_nn_norm import NORM_LOSS  # noqa: E402  (normalisation, dropout, classification losses)

NN = FUNCTIONAL + _init_rows() + LAYERS + OPTIMIZERS + GO.OPTIMIZERS + NORM_LOSS

from .optable_cnn import CNN  # noqa: E402  (convolution, pooling, padding, resampling: issue 10)
NN = NN + CNN
