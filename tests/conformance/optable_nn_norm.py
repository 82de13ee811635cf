"""Rows of THE conformance table for normalisation, dropout and classification losses.

Functional forms and layers: batch_norm / BatchNorm1d / BatchNorm2d (train and
eval, running statistics), layer_norm / LayerNorm, group_norm / GroupNorm,
dropout / Dropout* (deterministic settings: eval, p=0, p=1; random masks are
checked by property), cross_entropy, nll_loss, binary_cross_entropy(_with_logits),
kl_div, one_hot and the loss layers.
"""
import numpy as np

from . import gens as G
from . import strategies as S
from .cases import Case, Const
from .entry import Layer, Op, functional
from .strategies import FLOAT

RED = ("mean", "sum", "none")


def _reduction(draw, extra=()):
    return {"reduction": S.choice(draw, RED + extra)} if S.flag(draw) else {}


def _class_input(draw, dt=None):
    """Logits (C,), (N, C) or (N, C, d1[, d2]) and the class dim's size."""
    dt = dt or S.dtype(draw, FLOAT)
    C = S.integer(draw, 1, 5)
    kind = S.choice(draw, ("1d", "2d", "2d", "nd"))
    if kind == "1d":
        shp = (C,)
    elif kind == "2d":
        shp = (S.integer(draw, 0, 5), C)
    else:
        shp = (S.integer(draw, 1, 3), C) + S.shape(draw, 1, 2, 1, 3)
    return S.fill(draw, shp, dt, -4.0, 4.0), C


def _class_target(draw, x, C, ignore):
    """Class indices for logits ``x``: some equal to ``ignore`` when it is drawn."""
    shp = () if x.ndim == 1 else (x.shape[0],) + x.shape[2:]
    rng = np.random.default_rng(S.seed(draw))
    t = rng.integers(0, C, size=shp).astype(np.int64)
    if ignore is not None and t.size:
        t = np.where(rng.random(shp) < 0.3, ignore, t).astype(np.int64)
    return np.asarray(t)


def _class_kw(draw, C, dt, smoothing):
    kw = _reduction(draw)
    if S.flag(draw):
        kw["weight"] = Const(S.fill(draw, (C,), dt, 0.1, 2.0, ("uniform",)))
    ignore = None
    if S.flag(draw):
        ignore = S.choice(draw, (-100, 0, 1))
        if ignore != -100:
            kw["ignore_index"] = ignore
    if smoothing and S.flag(draw):
        kw["label_smoothing"] = S.choice(draw, (0.1, 0.5, 1.0))
    return kw, ignore


def _nll(draw):
    x, C = _class_input(draw)
    kw, ignore = _class_kw(draw, C, x.dtype.name, False)
    return G.make_case(draw, (x, Const(_class_target(draw, x, C, ignore))), kw)


def _cross_entropy(draw):
    x, C = _class_input(draw)
    if S.integer(draw, 0, 3) == 0:
        p = S.fill(draw, x.shape, x.dtype.name, 0.0, 1.0, ("uniform",))
        kw = _reduction(draw)
        if S.flag(draw):
            kw["label_smoothing"] = 0.2
        return G.make_case(draw, (x, Const(p)), kw)
    kw, ignore = _class_kw(draw, C, x.dtype.name, True)
    return G.make_case(draw, (x, Const(_class_target(draw, x, C, ignore))), kw)


_CLASS_BAD = [Case((np.zeros((2, 3), np.float32), Const(np.array([0, 1], np.int32)))),
              Case((np.zeros((2, 3), np.float32), Const(np.array([0, 3])))),
              Case((np.zeros((2, 3), np.float32), Const(np.array([0, 1, 2])))),
              Case((np.zeros((2, 3), np.float32), Const(np.array([0, 1]))), {"reduction": "avg"})]


def _bce(draw):
    x = S.array(draw, None, FLOAT, 0.02, 0.98, ("uniform",), max_dims=3, max_side=4)
    kw = _reduction(draw)
    if S.flag(draw):
        kw["weight"] = Const(S.fill(draw, x.shape, x.dtype.name, 0.0, 2.0, ("uniform",)))
    y = S.fill(draw, x.shape, x.dtype.name, 0.0, 1.0, ("uniform", "ints"))
    return G.make_case(draw, (x, Const(y)), kw)


def _bce_logits(draw):
    x = S.array(draw, None, FLOAT, -6.0, 6.0, ("uniform", "ints"), max_dims=3, max_side=4)
    kw = _reduction(draw)
    if S.flag(draw):
        kw["weight"] = Const(S.fill(draw, x.shape, x.dtype.name, 0.0, 2.0, ("uniform",)))
    if x.ndim and S.flag(draw):
        kw["pos_weight"] = Const(S.fill(draw, x.shape[-1:], x.dtype.name, 0.1, 3.0, ("uniform",)))
    y = S.fill(draw, x.shape, x.dtype.name, 0.0, 1.0, ("uniform", "ints"))
    return G.make_case(draw, (x, Const(y)), kw)


def _kl_div(draw):
    x = S.array(draw, None, FLOAT, -4.0, 0.0, ("uniform",), max_dims=3, max_side=4)
    log_target = S.flag(draw)
    if log_target:
        y = S.fill(draw, x.shape, x.dtype.name, -4.0, 0.0, ("uniform",))
    else:
        y = S.fill(draw, x.shape, x.dtype.name, 0.0, 1.0, ("uniform", "ints"))
    kw = {"log_target": log_target, **_reduction(draw, ("batchmean",))}
    return G.make_case(draw, (x, Const(y)), kw)


def _one_hot(draw):
    shp = S.shape(draw, 0, 3, 0, 4)
    x = np.random.default_rng(S.seed(draw)).integers(0, 4, size=shp).astype(np.int64)
    args = (x,)
    if S.flag(draw):
        args += (S.choice(draw, (4, 6, -1)),)
    return G.make_case(draw, args)


def _norm_input(draw, min_dims=2, max_dims=4):
    dt = S.dtype(draw, FLOAT)
    shp = (S.integer(draw, 1, 4), S.integer(draw, 1, 4)) + S.shape(draw, min_dims - 2,
                                                                    max_dims - 2, 1, 4)
    return S.fill(draw, shp, dt, -3.0, 3.0), dt


def _batch_norm(draw):
    x, dt = _norm_input(draw)
    C = x.shape[1]
    training = S.flag(draw)
    stats = (None, None)
    if not training or S.flag(draw):
        stats = (Const(S.fill(draw, (C,), dt, -1.0, 1.0, ("uniform",))),
                 Const(S.fill(draw, (C,), dt, 0.5, 2.0, ("uniform",))))
    w = S.fill(draw, (C,), dt) if S.flag(draw) else None
    b = S.fill(draw, (C,), dt) if S.flag(draw) else None
    kw = {"training": training, "momentum": S.choice(draw, (0.1, 0.5)),
          "eps": S.choice(draw, (1e-5, 1e-2))}
    return G.make_case(draw, (x,) + stats + (w, b), kw)


def _layer_norm(draw):
    x = S.array(draw, None, FLOAT, min_dims=1, max_dims=4, min_side=1, max_side=4)
    k = S.integer(draw, 1, x.ndim)
    ns = tuple(x.shape[x.ndim - k:])
    w = S.fill(draw, ns, x.dtype.name) if S.flag(draw) else None
    b = S.fill(draw, ns, x.dtype.name) if S.flag(draw) else None
    return G.make_case(draw, (x, ns, w, b), {"eps": S.choice(draw, (1e-5, 1e-3))})


def _group_norm(draw):
    g = S.integer(draw, 1, 3)
    dt = S.dtype(draw, FLOAT)
    # NOTE: groups of one value normalise to 0; torch's float32 result there is rounding noise
    shp = (S.integer(draw, 1, 3), g * S.integer(draw, 1, 3)) + S.shape(draw, 1, 2, 2, 4)
    x = S.fill(draw, shp, dt)
    C = shp[1]
    w = S.fill(draw, (C,), dt) if S.flag(draw) else None
    # NOTE: torch's backward fails ("tensor does not have a device") for a bias without weight
    b = S.fill(draw, (C,), dt) if w is not None and S.flag(draw) else None
    return G.make_case(draw, (x, g, w, b), {"eps": 1e-5})


def _dropout_det(min_dims):
    """Deterministic dropout settings: eval mode, p=0 or p=1."""
    def gen(draw):
        x = S.array(draw, None, FLOAT, min_dims=min_dims, max_dims=min_dims + 1)
        p, training = S.choice(draw, ((0.5, False), (0.0, True), (1.0, True)))
        return G.make_case(draw, (x,), {"p": p, "training": training})
    return gen


def _dropout_prop(n_mask_dims):
    """Random masks: every output is 0 or x / (1 - p); with channel masks, whole channels drop."""
    def prop(out, case):
        x = case.args[0].astype(np.float64)
        p = case.kwargs["p"]
        y = out.detach().numpy().astype(np.float64)
        zero = y == 0
        assert (zero | np.isclose(y, x / (1 - p), rtol=1e-6)).all(), \
            "dropout output is neither 0 nor x / (1 - p)"
        if n_mask_dims and y.size:
            per = zero.reshape(y.shape[:n_mask_dims] + (-1,))
            assert (per.all(-1) | (~per).all(-1)).all(), "a channel is partly dropped"
    return prop


def _dropout_random(min_dims):
    def gen(draw):
        x = S.fill(draw, S.shape(draw, min_dims, min_dims + 1, 1, 5), S.dtype(draw, FLOAT),
                   0.5, 3.0, ("uniform",))
        return G.make_case(draw, (x,), {"p": S.choice(draw, (0.2, 0.5, 0.9))})
    return gen


FUNCTIONAL = [
    Op("F.cross_entropy", _cross_entropy, {"F.cross_entropy": functional("cross_entropy")},
       bad=_CLASS_BAD + [Case((np.zeros((2, 3), np.float32), Const(np.array([0, 1]))),
                              {"label_smoothing": 1.5})]),
    Op("F.nll_loss", _nll, {"F.nll_loss": functional("nll_loss")}, bad=_CLASS_BAD),
    Op("F.binary_cross_entropy", _bce,
       {"F.binary_cross_entropy": functional("binary_cross_entropy")},
       bad=[Case((np.array([1.5], np.float32), Const(np.array([1.0], np.float32)))),
            Case((np.array([0.5, 0.2], np.float32), Const(np.array([1.0], np.float32))))]),
    Op("F.binary_cross_entropy_with_logits", _bce_logits,
       {"F.binary_cross_entropy_with_logits": functional("binary_cross_entropy_with_logits")},
       bad=[Case((np.array([0.5, 0.2], np.float32), Const(np.array([1.0], np.float32))))]),
    Op("F.kl_div", _kl_div, {"F.kl_div": functional("kl_div")}),
    Op("F.one_hot", _one_hot, {"F.one_hot": functional("one_hot")}, grad=False,
       bad=[Case((np.array([1, -1]),)), Case((np.array([1, 5]), 3)), Case((np.array([1.0]),))]),
    Op("F.batch_norm", _batch_norm, {"F.batch_norm": functional("batch_norm")}, mutates=True,
       tol={"float32": (1e-4, 1e-5)}, gtol={"float32": (1e-3, 1e-4)},
       bad=[Case((np.zeros((1, 3), np.float32), None, None), {"training": True})]),
    Op("F.layer_norm", _layer_norm, {"F.layer_norm": functional("layer_norm")},
       tol={"float32": (1e-4, 1e-5)}, gtol={"float32": (1e-3, 1e-4)},
       bad=[Case((np.zeros((3, 5), np.float32), (4,)))]),
    Op("F.group_norm", _group_norm, {"F.group_norm": functional("group_norm")},
       tol={"float32": (1e-4, 1e-5)}, gtol={"float32": (1e-3, 1e-4)},
       bad=[Case((np.zeros((2, 4), np.float32), 3))]),
    Op("F.dropout", _dropout_det(0), {"F.dropout": functional("dropout")},
       bad=[Case((np.zeros(2, np.float32),), {"p": 1.5})]),
    Op("F.dropout1d", _dropout_det(2), {"F.dropout1d": functional("dropout1d")},
       bad=[Case((np.zeros((2, 2, 2, 2), np.float32),))]),
    Op("F.dropout2d", _dropout_det(3), {"F.dropout2d": functional("dropout2d")}),
    Op("F.dropout random", _dropout_random(0), {"F.dropout": functional("dropout")},
       grad=False, values=False, prop=_dropout_prop(0)),
    Op("F.dropout2d random", _dropout_random(4), {"F.dropout2d": functional("dropout2d")},
       grad=False, values=False, prop=_dropout_prop(2)),
]


def _layer(name, gen, **kw):
    def build(lib, mode="train", **cfg):
        cfg = {k: (lib.tensor(v) if isinstance(v, np.ndarray) else v) for k, v in cfg.items()}
        return getattr(lib.nn, name)(**cfg).train(mode == "train")
    return Layer("nn." + name, build, gen, **kw)


def _bn_layer(rank_shapes):
    def gen(draw):
        rank = S.choice(draw, rank_shapes)
        C = S.integer(draw, 1, 4)
        shp = (S.integer(draw, 2, 4), C) + tuple(S.integer(draw, 1, 4) for _ in range(rank - 2))
        cfg = {"num_features": C, "momentum": S.choice(draw, (0.1, None, 0.5)),
               "affine": S.flag(draw), "track_running_stats": S.flag(draw),
               "mode": S.choice(draw, ("train", "train", "eval"))}
        return cfg, G.make_case(draw, (S.fill(draw, shp, "float32"),))
    return gen


def _ln_layer(draw):
    shp = S.shape(draw, 1, 3, 1, 4)
    k = S.integer(draw, 1, len(shp))
    cfg = {"normalized_shape": shp[len(shp) - k:], "elementwise_affine": S.flag(draw),
           "bias": S.flag(draw)}
    return cfg, G.make_case(draw, (S.fill(draw, shp, "float32"),))


def _gn_layer(draw):
    g = S.integer(draw, 1, 3)
    C = g * S.integer(draw, 1, 2)
    shp = (S.integer(draw, 1, 3), C) + S.shape(draw, 1, 2, 2, 4)
    return ({"num_groups": g, "num_channels": C, "affine": S.flag(draw)},
            G.make_case(draw, (S.fill(draw, shp, "float32"),)))


def _drop_layer(rank):
    def gen(draw):
        x = S.fill(draw, S.shape(draw, rank, rank, 1, 4), "float32")
        p, mode = S.choice(draw, ((0.5, "eval"), (0.0, "train"), (1.0, "train")))
        return {"p": p, "mode": mode}, G.make_case(draw, (x,))
    return gen


def _loss_layer(name, gen_case, options):
    def gen(draw):
        case = gen_case(draw)
        cfg = {k: v.array if isinstance(v, Const) else v for k, v in case.kwargs.items()
               if k in options}
        case.kwargs.clear()
        return cfg, case
    return _layer(name, gen)


LAYERS = [
    _layer("BatchNorm1d", _bn_layer((2, 3)), tol={"float32": (1e-4, 1e-5)},
           gtol={"float32": (1e-3, 1e-4)},
           bad=[({"num_features": 3}, Case((np.zeros((2, 3, 2, 2), np.float32),)))]),
    _layer("BatchNorm2d", _bn_layer((4,)), tol={"float32": (1e-4, 1e-5)},
           gtol={"float32": (1e-3, 1e-4)},
           bad=[({"num_features": 3}, Case((np.zeros((2, 3), np.float32),)))]),
    _layer("LayerNorm", _ln_layer, tol={"float32": (1e-4, 1e-5)}, gtol={"float32": (1e-3, 1e-4)}),
    _layer("GroupNorm", _gn_layer, tol={"float32": (1e-4, 1e-5)}, gtol={"float32": (1e-3, 1e-4)},
           bad=[({"num_groups": 3, "num_channels": 4}, Case((np.zeros((2, 4), np.float32),)))]),
    _layer("Dropout", _drop_layer(2)),
    _layer("Dropout1d", _drop_layer(3)),
    _layer("Dropout2d", _drop_layer(4)),
    _loss_layer("CrossEntropyLoss", _cross_entropy,
                ("weight", "ignore_index", "reduction", "label_smoothing")),
    _loss_layer("NLLLoss", _nll, ("weight", "ignore_index", "reduction")),
    _loss_layer("BCELoss", _bce, ("weight", "reduction")),
    _loss_layer("BCEWithLogitsLoss", _bce_logits, ("weight", "reduction", "pos_weight")),
    _loss_layer("KLDivLoss", _kl_div, ("reduction", "log_target")),
]

NORM_LOSS = FUNCTIONAL + LAYERS
