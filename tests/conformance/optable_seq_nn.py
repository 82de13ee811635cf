"""Rows for the sequence-model layers and functionals (issue 14): embeddings, recurrent layers and
cells, attention, the Transformer. Dropout is 0 so values compare; options are drawn."""
from . import gens as G
from . import strategies as S
from .cases import Const
from .entry import Layer, Op, spellings
from .strategies import FLOAT

LOOSE = {"float32": (1e-4, 1e-5)}
LOOSER = {"float32": (1e-3, 1e-4)}


def _indices(draw, n, shape):
    return Const(S.fill(draw, shape, "int64", 0, n - 1))


def _embedding_layer(draw):
    n, d = S.integer(draw, 1, 6), S.integer(draw, 0, 4)
    cfg = {"num_embeddings": n, "embedding_dim": d}
    if S.flag(draw):
        cfg["padding_idx"] = S.integer(draw, -n, n - 1)
    return cfg, G.make_case(draw, (_indices(draw, n, S.shape(draw, 0, 3, 0, 4)),))


def _bag_layer(draw):
    n, d = S.integer(draw, 1, 6), S.integer(draw, 1, 4)
    cfg = {"num_embeddings": n, "embedding_dim": d, "mode": S.choice(draw, ("sum", "mean", "max"))}
    return cfg, G.make_case(draw, (_indices(draw, n, (S.integer(draw, 1, 3), S.integer(draw, 1, 4))),))


def _embedding_fn(draw):
    n = S.integer(draw, 1, 6)
    w = S.array(draw, (n, S.integer(draw, 0, 4)), FLOAT)
    kw = {"padding_idx": S.integer(draw, 0, n - 1)} if S.flag(draw) else {}
    return G.make_case(draw, (_indices(draw, n, S.shape(draw, 0, 3, 0, 4)), w), kw)


def _bag_fn(draw):
    n = S.integer(draw, 1, 6)
    w = S.array(draw, (n, S.integer(draw, 1, 4)), FLOAT)
    idx = _indices(draw, n, (S.integer(draw, 1, 3), S.integer(draw, 1, 4)))
    return G.make_case(draw, (idx, w), {"mode": S.choice(draw, ("sum", "mean", "max"))})


def _recurrent(kind):
    def gen(draw):
        i, h = S.integer(draw, 1, 4), S.integer(draw, 1, 4)
        cfg = {"input_size": i, "hidden_size": h, "num_layers": S.integer(draw, 1, 2),
               "bias": S.flag(draw), "batch_first": S.flag(draw), "bidirectional": S.flag(draw)}
        if kind == "RNN" and S.flag(draw):
            cfg["nonlinearity"] = "relu"
        if kind == "LSTM" and h > 1 and S.flag(draw):
            cfg["proj_size"] = S.integer(draw, 1, h - 1)
        shp = (S.integer(draw, 1, 4), S.integer(draw, 1, 3), i) if S.integer(draw, 0, 3) else \
            (S.integer(draw, 1, 4), i)
        return cfg, G.make_case(draw, (S.fill(draw, shp, "float32"),))
    return gen


def _cell(kind):
    def gen(draw):
        i, h = S.integer(draw, 1, 4), S.integer(draw, 1, 4)
        cfg = {"input_size": i, "hidden_size": h, "bias": S.flag(draw)}
        shp = (S.integer(draw, 1, 3), i) if S.flag(draw) else (i,)
        return cfg, G.make_case(draw, (S.fill(draw, shp, "float32"),))
    return gen


def _two_steps(mod, x):
    """A cell run twice, the second step from the first one's state."""
    return mod(x, mod(x))


def _rnnbase(draw):
    cfg = {"mode": S.choice(draw, ("LSTM", "GRU", "RNN_TANH")), "input_size": S.integer(draw, 1, 3),
           "hidden_size": S.integer(draw, 1, 3), "num_layers": S.integer(draw, 1, 2),
           "bidirectional": S.flag(draw)}
    return cfg, G.make_case(draw, (S.fill(draw, (2,), "float32"),))


def _params_times(mod, x):
    """RNNBase has no forward of its own: compare its parameters (names, shapes, gradients)."""
    return tuple(p * x.sum() for p in mod.parameters())


def _mha(draw):
    h = S.integer(draw, 1, 3)
    e = h * S.integer(draw, 1, 3)
    bf = S.flag(draw)
    cfg = {"embed_dim": e, "num_heads": h, "batch_first": bf, "bias": S.flag(draw)}
    n, lq, lk = S.integer(draw, 1, 3), S.integer(draw, 1, 4), S.integer(draw, 1, 4)
    q = S.fill(draw, (n, lq, e) if bf else (lq, n, e), "float32")
    kv = S.fill(draw, (n, lk, e) if bf else (lk, n, e), "float32")
    mask = S.fill(draw, (lq, lk), "float32", -2, 2)
    return cfg, G.make_case(draw, (q, kv, Const(mask)))


def _mha_forward(mod, q, kv, mask):
    return mod(q, kv, kv, attn_mask=mask)


def _encoder_layer(draw):
    h = S.integer(draw, 1, 2)
    e = h * S.integer(draw, 1, 3)
    cfg = {"d_model": e, "nhead": h, "dim_feedforward": S.integer(draw, 1, 6), "dropout": 0.0,
           "batch_first": True, "norm_first": S.flag(draw), "activation": S.choice(draw, ("relu", "gelu"))}
    x = S.fill(draw, (S.integer(draw, 1, 3), S.integer(draw, 1, 4), e), "float32")
    return cfg, G.make_case(draw, (x,))


def _decoder_layer(draw):
    cfg, case = _encoder_layer(draw)
    mem = S.fill(draw, (case.args[0].shape[0], S.integer(draw, 1, 4), cfg["d_model"]), "float32")
    return cfg, G.make_case(draw, (case.args[0], mem))


def _stack(lib, kind, num_layers, **cfg):
    layer = getattr(lib.nn, kind + "Layer")(**cfg)
    torch_encoder = kind == "TransformerEncoder" and lib.__name__ == "torch"
    extra = {"enable_nested_tensor": False} if torch_encoder else {}
    return getattr(lib.nn, kind)(layer, num_layers, **extra)


def _encoder(draw):
    cfg, case = _encoder_layer(draw)
    return {"kind": "TransformerEncoder", "num_layers": S.integer(draw, 1, 2), **cfg}, case


def _decoder(draw):
    cfg, case = _decoder_layer(draw)
    return {"kind": "TransformerDecoder", "num_layers": S.integer(draw, 1, 2), **cfg}, case


def _transformer(draw):
    cfg, case = _decoder_layer(draw)
    cfg.update(num_encoder_layers=S.integer(draw, 1, 2), num_decoder_layers=S.integer(draw, 1, 2))
    return cfg, case


def _sdpa(draw):
    dt = S.dtype(draw, FLOAT)
    lead = S.shape(draw, 0, 2, 1, 3)
    lq, lk, e, ev = (S.integer(draw, 1, 4) for _ in range(4))
    q, k, v = (S.fill(draw, lead + s, dt) for s in ((lq, e), (lk, e), (lk, ev)))
    kw = {}
    how = S.choice(draw, ("none", "causal", "bool", "float", "scale"))
    if how == "causal":
        kw["is_causal"] = True
    elif how == "bool":
        m = S.fill(draw, (lq, lk), "bool")
        m[:, 0] = True
        kw["attn_mask"] = Const(m)
    elif how == "float":
        kw["attn_mask"] = Const(S.fill(draw, (lq, lk), dt))
    elif how == "scale":
        kw["scale"] = S.choice(draw, (0.5, 2.0))
    return G.make_case(draw, (q, k, v), kw)


def _layer(name, gen, **kw):
    return Layer("nn." + name, lambda lib, **cfg: getattr(lib.nn, name)(**cfg), gen, **kw)


SEQ_NN = [
    Op("embedding", _embedding_fn, spellings("embedding", "F")),
    Op("embedding_bag", _bag_fn, spellings("embedding_bag", "F"), tol=LOOSE, gtol=LOOSE),
    Op("scaled_dot_product_attention", _sdpa, spellings("scaled_dot_product_attention", "F"),
       tol=LOOSE, gtol=LOOSE),
    _layer("Embedding", _embedding_layer),
    _layer("EmbeddingBag", _bag_layer, tol=LOOSE),
    _layer("RNN", _recurrent("RNN"), tol=LOOSE, gtol=LOOSE),
    _layer("LSTM", _recurrent("LSTM"), tol=LOOSE, gtol=LOOSE),
    _layer("GRU", _recurrent("GRU"), tol=LOOSE, gtol=LOOSE),
    _layer("RNNCell", _cell("RNNCell"), forward=_two_steps, tol=LOOSE, gtol=LOOSE),
    _layer("LSTMCell", _cell("LSTMCell"), forward=_two_steps, tol=LOOSE, gtol=LOOSE),
    _layer("GRUCell", _cell("GRUCell"), forward=_two_steps, tol=LOOSE, gtol=LOOSE),
    _layer("RNNBase", _rnnbase, forward=_params_times),
    _layer("MultiheadAttention", _mha, forward=_mha_forward, tol=LOOSE, gtol=LOOSER),
    _layer("TransformerEncoderLayer", _encoder_layer, tol=LOOSER, gtol=LOOSER),
    _layer("TransformerDecoderLayer", _decoder_layer, tol=LOOSER, gtol=LOOSER),
    Layer("nn.TransformerEncoder", lambda lib, kind, num_layers, **cfg: _stack(lib, kind, num_layers, **cfg),
          _encoder, tol=LOOSER, gtol=LOOSER),
    Layer("nn.TransformerDecoder", lambda lib, kind, num_layers, **cfg: _stack(lib, kind, num_layers, **cfg),
          _decoder, tol=LOOSER, gtol=LOOSER),
    _layer("Transformer", _transformer, tol=LOOSER, gtol=LOOSER),
]



def _lbfgs_case(draw):
    x0 = S.fill(draw, (S.integer(draw, 2, 4),), "float64", -1.5, 1.5, ("uniform",))
    return G.make_case(draw, (x0,), {"line_search_fn": S.choice(draw, (None, "strong_wolfe")),
                                     "history_size": S.integer(draw, 1, 6),
                                     "max_iter": S.integer(draw, 1, 8)})


def _lbfgs_run(lib, x0, **cfg):
    """Three LBFGS steps on a Rosenbrock function from ``x0``: the trajectory and evaluation count."""
    w = lib.nn.Parameter(x0.detach().clone())
    opt = lib.optim.LBFGS([w], **cfg)

    def closure():
        opt.zero_grad()
        loss = (100 * (w[1:] - w[:-1] ** 2) ** 2 + (1 - w[:-1]) ** 2).sum()
        loss.backward()
        return loss
    out = []
    for _ in range(3):
        opt.step(closure)
        out.append(w.detach().clone())
    return lib.stack(out), opt.state_dict()["state"][0]["func_evals"]


SEQ_NN.append(Op("LBFGS", _lbfgs_case, {"optim.LBFGS": (_lbfgs_run, _lbfgs_run)}, grad=False,
                 tol={"float64": (1e-7, 1e-9)}, examples=10))
