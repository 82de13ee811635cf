"""Classification losses and one_hot: values by hand, torch parity (values and gradients, every
option), finite differences, stability on huge logits, and errors naming the op."""
import numpy as np
import pytest

import newch
import newch.nn as nn
import newch.nn.functional as F

from tests.autograd.gradcheck import gradcheck, to_np

RNG = np.random.default_rng(5)
LOGITS = RNG.standard_normal((6, 4)) * 2
LOGITS_ND = RNG.standard_normal((3, 4, 2, 5))
TARGET = np.array([0, 3, 1, 1, 2, 3])
TARGET_ND = RNG.integers(0, 4, (3, 2, 5))
CLASS_W = np.array([0.5, 2.0, 1.0, 1.5])
PROBS = RNG.random((6, 4))
PROBS /= PROBS.sum(1, keepdims=True)
P01 = RNG.uniform(0.05, 0.95, (5, 3))
Y01 = RNG.integers(0, 2, (5, 3)).astype(np.float64)


def _log_softmax(x, axis=1):
    m = x.max(axis, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis, keepdims=True))


def test_cross_entropy_by_hand_with_weight_and_ignore_index():
    t = TARGET.copy()
    t[2] = -100
    lp = _log_softmax(LOGITS)
    keep = t != -100
    picked = -lp[np.arange(6)[keep], t[keep]]
    w = CLASS_W[t[keep]]
    got = F.cross_entropy(newch.tensor(LOGITS), newch.tensor(t), weight=newch.tensor(CLASS_W))
    np.testing.assert_allclose(got.item(), (picked * w).sum() / w.sum(), rtol=1e-12)
    none = to_np(F.cross_entropy(newch.tensor(LOGITS), newch.tensor(t), reduction="none"))
    assert none[2] == 0.0
    np.testing.assert_allclose(none[keep], picked, rtol=1e-12)


def test_nll_loss_by_hand_nd():
    lp = _log_softmax(LOGITS_ND)
    want = -np.take_along_axis(lp, TARGET_ND[:, None], 1)[:, 0]
    got = F.nll_loss(newch.tensor(lp), newch.tensor(TARGET_ND), reduction="none")
    np.testing.assert_allclose(to_np(got), want, rtol=1e-12)
    assert F.nll_loss(newch.tensor(lp), newch.tensor(TARGET_ND)).item() == pytest.approx(want.mean())


def test_all_targets_ignored_mean_is_nan_like_torch():
    out = F.cross_entropy(newch.tensor(LOGITS[:2]), newch.tensor([-100, -100]))
    assert np.isnan(out.item())


@pytest.mark.parametrize("kw", [{}, {"weight": True}, {"ignore_index": 1}, {"label_smoothing": 0.2},
                                {"weight": True, "label_smoothing": 0.3, "ignore_index": 3}])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("nd", [False, True])
def test_cross_entropy_matches_torch(torch, kw, reduction, nd):
    x, t = (LOGITS_ND, TARGET_ND) if nd else (LOGITS, TARGET)
    kw = dict(kw)
    out = {}
    for lib in (newch, torch):
        xt = lib.tensor(x, dtype=lib.float64, requires_grad=True)
        k = {**kw, "weight": lib.tensor(CLASS_W)} if kw.get("weight") else kw
        loss = lib.nn.functional.cross_entropy(xt, lib.tensor(t), reduction=reduction, **k)
        loss.backward(lib.ones_like(loss))
        out[lib.__name__] = (loss.detach().numpy(), xt.grad.numpy())
    for a, b in zip(out["newch"], out["torch"]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("kw", [{}, {"weight": True}, {"label_smoothing": 0.25}])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_probability_targets_match_torch(torch, kw, reduction):
    out = {}
    for lib in (newch, torch):
        xt = lib.tensor(LOGITS, dtype=lib.float64, requires_grad=True)
        k = {**kw, "weight": lib.tensor(CLASS_W)} if kw.get("weight") else kw
        loss = lib.nn.functional.cross_entropy(xt, lib.tensor(PROBS), reduction=reduction, **k)
        loss.backward(lib.ones_like(loss))
        out[lib.__name__] = (loss.detach().numpy(), xt.grad.numpy())
    for a, b in zip(out["newch"], out["torch"]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_cross_entropy_and_nll_finite_differences():
    gradcheck(lambda x: F.cross_entropy(x, newch.tensor(TARGET), weight=newch.tensor(CLASS_W),
                                        label_smoothing=0.1), LOGITS)
    gradcheck(lambda x: F.cross_entropy(x, newch.tensor(TARGET_ND), reduction="none"), LOGITS_ND)
    gradcheck(lambda x, p: F.cross_entropy(x, p), LOGITS, PROBS)
    gradcheck(lambda x: F.nll_loss(x, newch.tensor(TARGET), ignore_index=3, reduction="sum"),
              LOGITS)


def test_cross_entropy_is_finite_on_huge_logits():
    x = newch.tensor([[1e4, -1e4, 0.0], [-1e4, 1e4, 5e3]], requires_grad=True)
    loss = F.cross_entropy(x, newch.tensor([1, 1]))
    loss.backward()
    assert np.isfinite(loss.item()) and loss.item() == pytest.approx(1e4, rel=1e-6)
    assert np.all(np.isfinite(to_np(x.grad)))


def test_uint8_targets_are_accepted():
    a = F.nll_loss(newch.tensor(LOGITS), newch.tensor(TARGET.astype(np.uint8)))
    b = F.nll_loss(newch.tensor(LOGITS), newch.tensor(TARGET))
    assert a.item() == b.item()


@pytest.mark.parametrize("fn", [F.cross_entropy, F.nll_loss])
def test_class_target_errors_name_the_op(fn):
    name = fn.__name__
    x = newch.tensor(LOGITS)
    with pytest.raises(RuntimeError, match=f"{name}: expected target dtype to be Long"):
        fn(x, newch.tensor(TARGET.astype(np.int32)))
    with pytest.raises(ValueError, match=f"{name}: expected input batch_size \\(6\\) to match"):
        fn(x, newch.tensor(TARGET[:4]))
    with pytest.raises(IndexError, match=f"{name}: target 7 is out of bounds for 4 classes"):
        fn(x, newch.tensor([0, 1, 7, 1, 2, 3]))
    with pytest.raises(ValueError, match=f"{name}: 'avg' is not a valid value for reduction"):
        fn(x, newch.tensor(TARGET), reduction="avg")


def test_label_smoothing_out_of_range():
    with pytest.raises(ValueError, match="cross_entropy: label_smoothing must be between"):
        F.cross_entropy(newch.tensor(LOGITS), newch.tensor(TARGET), label_smoothing=1.5)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_binary_cross_entropy_matches_torch(torch, weighted, reduction):
    w = RNG.random((5, 3)) + 0.5
    out = {}
    for lib in (newch, torch):
        x = lib.tensor(P01, requires_grad=True)
        y = lib.tensor(Y01, requires_grad=True)
        kw = {"weight": lib.tensor(w)} if weighted else {}
        loss = lib.nn.functional.binary_cross_entropy(x, y, reduction=reduction, **kw)
        loss.backward(lib.ones_like(loss))
        out[lib.__name__] = (loss.detach().numpy(), x.grad.numpy(), y.grad.numpy())
    for a, b in zip(out["newch"], out["torch"]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_binary_cross_entropy_clamps_logs_at_minus_100(torch):
    for lib in (newch, torch):
        x = lib.tensor([0.0, 1.0, 0.0, 1.0], requires_grad=True)
        loss = lib.nn.functional.binary_cross_entropy(x, lib.tensor([1.0, 0.0, 0.0, 1.0]),
                                                      reduction="none")
        loss.sum().backward()
        if lib is newch:
            got = (loss.detach().numpy(), x.grad.numpy())
        else:
            want = (loss.detach().numpy(), x.grad.numpy())
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_allclose(got[1], want[1], rtol=1e-6)


@pytest.mark.parametrize("pos", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_bce_with_logits_matches_torch(torch, pos, weighted, reduction):
    x0 = RNG.standard_normal((5, 3)) * 3
    x0[0, 0] = 0.0
    pw, w = RNG.random(3) * 3, RNG.random((5, 3)) + 0.5
    out = {}
    for lib in (newch, torch):
        x = lib.tensor(x0, requires_grad=True)
        y = lib.tensor(Y01 * 0.8 + 0.1, requires_grad=True)
        kw = {"weight": lib.tensor(w)} if weighted else {}
        if pos:
            kw["pos_weight"] = lib.tensor(pw)
        loss = lib.nn.functional.binary_cross_entropy_with_logits(x, y, reduction=reduction, **kw)
        loss.backward(lib.ones_like(loss))
        out[lib.__name__] = [loss.detach().numpy(), x.grad.numpy(), y.grad.numpy()]
    for a, b in zip(out["newch"], out["torch"]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_bce_with_logits_is_finite_on_huge_logits():
    x = newch.tensor([1e4, -1e4, 1e4, -1e4], requires_grad=True)
    y = newch.tensor([1.0, 0.0, 0.0, 1.0])
    loss = F.binary_cross_entropy_with_logits(x, y, reduction="none")
    loss.sum().backward()
    np.testing.assert_allclose(to_np(loss), [0.0, 0.0, 1e4, 1e4])
    np.testing.assert_allclose(to_np(x.grad), [0.0, 0.0, 1.0, -1.0])


def test_bce_finite_differences():
    gradcheck(lambda x, y: F.binary_cross_entropy(x, y), P01, Y01 * 0.6 + 0.2)
    pw = newch.tensor(RNG.random(3) + 0.5, dtype=newch.float64)
    gradcheck(lambda x, y: F.binary_cross_entropy_with_logits(x, y, pos_weight=pw),
              RNG.standard_normal((5, 3)), Y01 * 0.5 + 0.2)


def test_class_weights_that_require_grad_are_refused_as_in_torch():
    w = newch.ones(4, requires_grad=True)
    x = newch.tensor(LOGITS, requires_grad=True)
    with pytest.raises(RuntimeError, match="cross_entropy: not differentiable with respect to "
                                           "argument 'weight'"):
        F.cross_entropy(x, newch.tensor(TARGET), weight=w)
    with pytest.raises(RuntimeError, match="binary_cross_entropy_with_logits: .*'pos_weight'"):
        F.binary_cross_entropy_with_logits(x, newch.rand(6, 4), pos_weight=w)


def test_bce_errors():
    with pytest.raises(RuntimeError, match="binary_cross_entropy: all elements of input should be"):
        F.binary_cross_entropy(newch.tensor([1.5]), newch.tensor([1.0]))
    with pytest.raises(ValueError, match="binary_cross_entropy: target size"):
        F.binary_cross_entropy(newch.tensor([0.5, 0.2]), newch.tensor([1.0]))
    with pytest.raises(ValueError, match="binary_cross_entropy_with_logits: target size"):
        F.binary_cross_entropy_with_logits(newch.tensor([0.5, 0.2]), newch.tensor([1.0]))


@pytest.mark.parametrize("log_target", [False, True])
@pytest.mark.parametrize("reduction", ["mean", "batchmean", "sum", "none"])
def test_kl_div_matches_torch(torch, log_target, reduction):
    inp = _log_softmax(LOGITS)
    tgt = PROBS.copy()
    tgt[0, 1] = 0.0
    if log_target:
        tgt = np.log(PROBS)
    out = {}
    for lib in (newch, torch):
        x = lib.tensor(inp, requires_grad=True)
        with pytest.warns(UserWarning) if reduction == "mean" else _nothing():
            loss = lib.nn.functional.kl_div(x, lib.tensor(tgt), reduction=reduction,
                                            log_target=log_target)
        loss.backward(lib.ones_like(loss))
        out[lib.__name__] = (loss.detach().numpy(), x.grad.numpy())
    for a, b in zip(out["newch"], out["torch"]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_one_hot():
    got = F.one_hot(newch.tensor([[0, 2], [1, 1]]))
    assert got.dtype is newch.int64
    np.testing.assert_array_equal(got.numpy(), np.eye(3, dtype=np.int64)[[[0, 2], [1, 1]]])
    assert tuple(F.one_hot(newch.tensor([1]), 5).shape) == (1, 5)
    with pytest.raises(RuntimeError, match="one_hot: class values must be non-negative"):
        F.one_hot(newch.tensor([1, -1]))
    with pytest.raises(RuntimeError, match="one_hot: class values must be smaller"):
        F.one_hot(newch.tensor([1, 5]), 3)
    with pytest.raises(RuntimeError, match="one_hot: one_hot is only applicable"):
        F.one_hot(newch.tensor([1.0]))


def test_loss_modules_hold_weights_as_buffers_and_match_functional():
    w = newch.tensor(CLASS_W, dtype=newch.float64)
    ce = nn.CrossEntropyLoss(weight=w, ignore_index=2, label_smoothing=0.1)
    assert list(ce.state_dict()) == ["weight"]
    x, t = newch.tensor(LOGITS), newch.tensor(TARGET)
    assert ce(x, t).item() == F.cross_entropy(x, t, weight=w, ignore_index=2,
                                              label_smoothing=0.1).item()
    assert nn.NLLLoss(reduction="sum")(x, t).item() == F.nll_loss(x, t, reduction="sum").item()
    p, y = newch.tensor(P01), newch.tensor(Y01)
    assert nn.BCELoss()(p, y).item() == F.binary_cross_entropy(p, y).item()
    pw = newch.tensor([1.0, 2.0, 3.0], dtype=newch.float64)
    bce = nn.BCEWithLogitsLoss(pos_weight=pw)
    assert list(bce.state_dict()) == ["pos_weight"]
    assert bce(p, y).item() == F.binary_cross_entropy_with_logits(p, y, pos_weight=pw).item()
    kl = nn.KLDivLoss(reduction="batchmean", log_target=True)
    assert kl(x, x).item() == 0.0
    assert repr(nn.CrossEntropyLoss()) == "CrossEntropyLoss()"
