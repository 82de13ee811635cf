"""Conformance rows of the optimizers after SGD, of each lr scheduler driving SGD, and of
gradient clipping before an SGD step.

Each row draws options (every flag each optimizer has), parameter shapes
(0-d and empty included), parameter groups and a step count; the runner
compares parameters after every step. ``bad`` lists options torch rejects.
"""
from . import strategies as S
from .entry import Optim


def _common(draw, lrs, flags=("maximize",), wd=(0.0, 0.0, 0.01, 0.1)):
    cfg = {"lr": S.choice(draw, lrs), "weight_decay": S.choice(draw, wd)}
    for f in flags:
        if S.flag(draw):
            cfg[f] = S.flag(draw)
    if S.flag(draw):
        cfg["groups"] = {"lr": lrs[0] / 2}
    return cfg


def _shapes(draw):
    return [S.shape(draw, 0, 2, 0, 3) for _ in range(S.integer(draw, 1, 3))]


def _betas(draw, cfg):
    if S.flag(draw):
        cfg["betas"] = S.choice(draw, ((0.9, 0.999), (0.5, 0.9), (0.0, 0.99)))
    return cfg


def _gen(extra):
    def gen(draw):
        cfg = extra(draw)
        return cfg, _shapes(draw), S.integer(draw, 1, 5)
    return gen


GENS = {
    "Adam": lambda d: _betas(d, _common(d, (1e-3, 0.01, 0.1),
                                        ("maximize", "amsgrad", "decoupled_weight_decay"))),
    "AdamW": lambda d: _betas(d, _common(d, (1e-3, 0.01, 0.1), ("maximize", "amsgrad"))),
    "Adamax": lambda d: _betas(d, _common(d, (2e-3, 0.05))),
    "NAdam": lambda d: {**_betas(d, _common(d, (2e-3, 0.05),
                                            ("maximize", "decoupled_weight_decay"))),
                        "momentum_decay": S.choice(d, (4e-3, 0.05))},
    "RAdam": lambda d: _betas(d, _common(d, (1e-3, 0.05), ("maximize", "decoupled_weight_decay"))),
    "RMSprop": lambda d: {**_common(d, (0.01, 0.001), ("maximize", "centered")),
                          "momentum": S.choice(d, (0.0, 0.0, 0.9)),
                          "alpha": S.choice(d, (0.99, 0.5))},
    "Adagrad": lambda d: {**_common(d, (0.01, 0.1)), "lr_decay": S.choice(d, (0.0, 0.01)),
                          "initial_accumulator_value": S.choice(d, (0.0, 0.1))},
    "Adadelta": lambda d: {**_common(d, (1.0, 0.5)), "rho": S.choice(d, (0.9, 0.5))},
}
BAD = {
    "Adam": [{"lr": -1.0}, {"betas": (1.0, 0.9)}, {"eps": -1.0}, {"weight_decay": -0.1}],
    "AdamW": [{"betas": (0.9, -0.1)}],
    "Adamax": [{"betas": (0.9, 1.0)}],
    "NAdam": [{"momentum_decay": -1.0}],
    "RAdam": [{"lr": -0.1}],
    "RMSprop": [{"alpha": -0.5}, {"momentum": -1.0}],
    "Adagrad": [{"lr_decay": -1.0}, {"initial_accumulator_value": -1.0}],
    "Adadelta": [{"rho": 1.5}],
}


def _build(name):
    return lambda lib, params, **kw: getattr(lib.optim, name)(params, **kw)


class _Scheduled:
    """An optimizer whose lr a scheduler changes after every step (what training loops do)."""

    def __init__(self, opt, sched):
        self.opt, self.sched = opt, sched

    def zero_grad(self):
        self.opt.zero_grad()

    def step(self):
        self.opt.step()
        self.sched.step()


class _Plateau(_Scheduled):
    """ReduceLROnPlateau fed the sum of the parameters as its metric."""

    def __init__(self, opt, sched, params):
        super().__init__(opt, sched)
        self.params = params

    def step(self):
        self.opt.step()
        self.sched.step(sum(float(p.detach().sum().item()) for p in self.params))


# scheduler name -> how a row builds it on an optimizer
_SCHEDULES = {
    "StepLR": lambda L, o: L.StepLR(o, step_size=2, gamma=0.5),
    "MultiStepLR": lambda L, o: L.MultiStepLR(o, milestones=[1, 3, 3], gamma=0.5),
    "ExponentialLR": lambda L, o: L.ExponentialLR(o, gamma=0.7),
    "CosineAnnealingLR": lambda L, o: L.CosineAnnealingLR(o, T_max=3, eta_min=0.01),
    "LambdaLR": lambda L, o: L.LambdaLR(o, lambda e: 1.0 / (1 + e)),
    "MultiplicativeLR": lambda L, o: L.MultiplicativeLR(o, lambda e: 0.8),
    "OneCycleLR": lambda L, o: L.OneCycleLR(o, max_lr=0.5, total_steps=6),
    "LinearLR": lambda L, o: L.LinearLR(o, start_factor=0.25, total_iters=3),
    "ConstantLR": lambda L, o: L.ConstantLR(o, factor=0.5, total_iters=2),
    "PolynomialLR": lambda L, o: L.PolynomialLR(o, total_iters=4, power=2.0),
    "CosineAnnealingWarmRestarts": lambda L, o: L.CosineAnnealingWarmRestarts(o, T_0=2),
    "SequentialLR": lambda L, o: L.SequentialLR(
        o, [L.ConstantLR(o, factor=0.5, total_iters=2), L.ExponentialLR(o, gamma=0.5)],
        milestones=[2]),
    "ChainedScheduler": lambda L, o: L.ChainedScheduler(
        [L.ConstantLR(o, factor=0.5, total_iters=2), L.ExponentialLR(o, gamma=0.9)]),
}


def _scheduled(name):
    def build(lib, params, **kw):
        flat = params if not isinstance(params[0], dict) else [p for g in params
                                                                for p in g["params"]]
        opt = lib.optim.SGD(params, momentum=0.9, **kw)
        L = lib.optim.lr_scheduler
        if name == "ReduceLROnPlateau":
            return _Plateau(opt, L.ReduceLROnPlateau(opt, factor=0.5, patience=0), flat)
        return _Scheduled(opt, _SCHEDULES[name](L, opt))
    return build


def _scheduled_gen(draw):
    cfg = {"lr": S.choice(draw, (0.1, 0.5))}
    if S.flag(draw):
        cfg["groups"] = {"lr": 0.05}
    return cfg, _shapes(draw), S.integer(draw, 1, 5)


class _Clipped(_Scheduled):
    """SGD after clipping the gradients (the usual place of clip_grad_norm_ / clip_grad_value_)."""

    def __init__(self, lib, opt, params, how, limit, norm_type):
        super().__init__(opt, None)
        self.lib, self.params, self.how = lib, params, how
        self.limit, self.norm_type = limit, norm_type

    def step(self):
        utils = self.lib.nn.utils
        # NOTE: torch's clip_grad_value_ fails on an internal check when no parameter has a
        # gradient (newch does nothing then); the runner sometimes leaves all of them unused
        if self.how == "norm":
            utils.clip_grad_norm_(self.params, self.limit, norm_type=self.norm_type)
        elif any(p.grad is not None for p in self.params):
            utils.clip_grad_value_(self.params, self.limit)
        self.opt.step()


def _clipped(how):
    def build(lib, params, limit, norm_type=2.0, **kw):
        return _Clipped(lib, lib.optim.SGD(params, **kw), params, how, limit, norm_type)
    return build


def _clip_gen(draw):
    cfg = {"lr": 0.5, "limit": S.choice(draw, (0.1, 1.0, 100.0)),
           "norm_type": S.choice(draw, (2.0, 1.0, float("inf"), 3.0))}
    shapes = [S.shape(draw, 0, 2, 1, 3) for _ in range(S.integer(draw, 1, 3))]
    return cfg, shapes, S.integer(draw, 1, 4)


def _value_gen(draw):
    cfg, shapes, steps = _clip_gen(draw)
    del cfg["norm_type"]
    return cfg, shapes, steps


OPTIMIZERS = [Optim(f"optim.{name}", _build(name), _gen(gen),
                    bad=[(cfg, [(2,)]) for cfg in BAD[name]], examples=10)
              for name, gen in GENS.items()]
OPTIMIZERS += [Optim(f"lr_scheduler.{name}", _scheduled(name), _scheduled_gen, examples=6)
               for name in list(_SCHEDULES) + ["ReduceLROnPlateau"]]
OPTIMIZERS[-1].calls["optim.lr_scheduler"] = None          # the module's own row
OPTIMIZERS += [
    Optim("nn.utils.clip_grad_norm_", _clipped("norm"), _clip_gen, examples=10),
    Optim("nn.utils.clip_grad_value_", _clipped("value"), _value_gen, examples=6),
]
