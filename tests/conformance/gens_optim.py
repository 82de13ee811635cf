"""Conformance rows of the optimizers after SGD, and of lr_scheduler driving one.

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


_SCHEDULES = {
    "step": lambda L, o: L.StepLR(o, step_size=2, gamma=0.5),
    "cosine": lambda L, o: L.CosineAnnealingLR(o, T_max=3),
    "onecycle": lambda L, o: L.OneCycleLR(o, max_lr=0.5, total_steps=6),
    "linear": lambda L, o: L.LinearLR(o, start_factor=0.25, total_iters=3),
    "restarts": lambda L, o: L.CosineAnnealingWarmRestarts(o, T_0=2),
}


def _scheduled(lib, params, schedule, **kw):
    opt = lib.optim.SGD(params, momentum=0.9, **kw)
    return _Scheduled(opt, _SCHEDULES[schedule](lib.optim.lr_scheduler, opt))


def _scheduled_gen(draw):
    cfg = {"lr": S.choice(draw, (0.1, 0.5)), "schedule": S.choice(draw, sorted(_SCHEDULES))}
    return cfg, _shapes(draw), S.integer(draw, 1, 5)


OPTIMIZERS = [Optim(f"optim.{name}", _build(name), _gen(gen),
                    bad=[(cfg, [(2,)]) for cfg in BAD[name]], examples=10)
              for name, gen in GENS.items()]
OPTIMIZERS.append(Optim("optim.lr_scheduler", _scheduled, _scheduled_gen, examples=10))
