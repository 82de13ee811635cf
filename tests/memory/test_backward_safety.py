"""Backward never reads freed or changed memory: what it saved is checked when it runs.

Each backward gets the tensors it reads from autograd's saved-tensor mechanism,
which raises ``NcError`` (naming the node) when one was freed by ``release()`` or
``step_end()``, and RuntimeError when one was written in place, as PyTorch does.
The issue's reproducers are here, for every op that indexes by a saved tensor.
"""
import gc
import weakref

import numpy as np
import pytest

import newch
from newch import NcError


@pytest.fixture(autouse=True)
def _fresh_context(ctx):
    """Every test here runs on its own context (``ctx`` from conftest.py)."""
    yield ctx


def _leaf(n=5):
    with newch.persistent():
        return newch.randn(n, requires_grad=True)


# (name of the node that saved the index, forward: (x, index) -> scalar loss)
INDEX_OPS = {
    "IndexSelectBackward0": (lambda: newch.tensor([0, 1]), lambda x, i: x.index_select(0, i).sum()),
    "IndexBackward0": (lambda: newch.tensor([0, 1]), lambda x, i: x[i].sum()),
    "IndexBackward0 (mask)": (lambda: newch.tensor([True, False, True, False, True]),
                              lambda x, m: x[m].sum()),
    "MaskedSelectBackward0": (lambda: newch.tensor([True, False, True, False, True]),
                              lambda x, m: newch.masked_select(x, m).sum()),
    "CopySlices": (lambda: newch.tensor([0, 1]), lambda x, i: _put(x, i)),
    "GatherBackward0": (lambda: newch.tensor([0, 1]), lambda x, i: x.gather(0, i).sum()),
}


def _put(x, i):
    z = x * 1.0
    z[i] = newch.tensor([2.0, 3.0])
    return (z * z).sum()


def _junk(index, big):
    """A temporary made right after ``index`` died: it takes the index's bytes."""
    fill = 10 ** 12 if big else 3
    return newch.full(tuple(index.shape), fill if index.dtype is newch.int64 else True,
                      dtype=index.dtype)


@pytest.mark.parametrize("big", [True, False], ids=["junk_1e12", "junk_3"])
@pytest.mark.parametrize("name", list(INDEX_OPS))
def test_released_index_raises_at_backward(name, big):
    make_index, forward = INDEX_OPS[name]
    x, idx = _leaf(), make_index()
    y = forward(x, idx)
    newch.release(idx)
    junk = _junk(idx, big)
    with pytest.raises(NcError, match=name.split()[0]) as e:
        y.backward()
    assert "release()" in str(e.value)
    assert x.grad is None      # nothing was accumulated from freed bytes
    del junk


@pytest.mark.parametrize("name", list(INDEX_OPS))
def test_index_freed_by_step_end_under_a_persistent_output_raises(name):
    make_index, forward = INDEX_OPS[name]
    x, idx = _leaf(), make_index()            # the index is a temporary of this step
    with newch.persistent():
        y = forward(x, idx)                   # ... the loss lives on
    newch.step_end()
    junk = _junk(idx, True)
    with pytest.raises(NcError, match=name.split()[0]) as e:
        y.backward()
    assert "step_end()" in str(e.value)
    assert x.grad is None
    del junk


@pytest.mark.parametrize("name", list(INDEX_OPS))
def test_index_changed_in_place_raises_at_backward(name):
    make_index, forward = INDEX_OPS[name]
    x, idx = _leaf(), make_index()
    y = forward(x, idx)
    idx.fill_(0 if idx.dtype is newch.int64 else True)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_the_index_is_kept_alive_by_the_graph_while_referenced():
    # dropping the Python name is not freeing: the saved index keeps its bytes
    x = _leaf()
    y = x.index_select(0, newch.tensor([4, 4, 0])).sum()
    junk = newch.full((3,), 10 ** 12, dtype=newch.int64)
    y.backward()
    assert x.grad.tolist() == [1.0, 0.0, 0.0, 0.0, 2.0]
    del junk


def test_release_of_a_saved_persistent_tensor_gives_its_bytes_back_at_once():
    x = _leaf(4)
    with newch.persistent():
        w = newch.randn(1000)
    y = (x.sum() * w).sum()         # MulBackward0 saved w
    root = w._s.buf
    while root.base is not None:
        root = root.base
    freed = weakref.ref(root)
    del root
    newch.release(w)
    assert freed() is None          # the graph keeps no numpy view of the released bytes
    with pytest.raises(NcError, match="MulBackward0.*release"):
        y.backward()


def test_replacing_the_data_of_a_saved_tensor_raises():
    x = _leaf(3)
    t = newch.rand(3)
    y = (x * t).sum()
    t.data = newch.ones(3)
    with pytest.raises(RuntimeError, match="MulBackward0.*replaced"):
        y.backward()


# -- version counters on everything backward reads -------------------------------------

def test_max_indices_changed_in_place_raise_like_pytorch():
    a = newch.randn(3, 4, requires_grad=True)
    v, i = a.max(1)
    i.zero_()
    with pytest.raises(RuntimeError, match="MaxBackward0.*modified by an inplace operation"):
        v.sum().backward()


def test_clamp_tensor_bound_changed_in_place_raises_like_pytorch():
    x = newch.randn(4, requires_grad=True)
    lo, hi = newch.zeros(4), newch.ones(4)
    y = x.clamp(lo, hi)
    hi.fill_(5)
    with pytest.raises(RuntimeError, match="ClampBackward1.*modified by an inplace operation"):
        y.sum().backward()


@pytest.mark.parametrize("change", ["lo", "hi"])
def test_clamp_unchanged_bounds_still_give_the_gradient(change):
    x = newch.tensor([-2.0, 0.5, 3.0], requires_grad=True)
    lo = newch.zeros(3, requires_grad=True)
    hi = newch.ones(3, requires_grad=True)
    x.clamp(lo, hi).sum().backward()
    assert x.grad.tolist() == [0.0, 1.0, 0.0]
    assert lo.grad.tolist() == [1.0, 0.0, 0.0] and hi.grad.tolist() == [0.0, 0.0, 1.0]


@pytest.mark.parametrize("make", [
    lambda x, t: x * t,
    lambda x, t: x / t,
    lambda x, t: x ** t,
    lambda x, t: newch.maximum(x, t),
    lambda x, t: newch.atan2(x, t),
    lambda x, t: x @ t,
    lambda x, t: x.index_select(0, newch.tensor([1, 2])) * t[:2],
], ids=["mul", "div", "pow", "maximum", "atan2", "matmul", "index_then_mul"])
def test_any_saved_operand_changed_in_place_raises(make):
    x = newch.randn(4, requires_grad=True)
    t = newch.rand(4) + 0.5
    y = make(x, t)
    t.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


@pytest.mark.parametrize("op", ["where", "masked_fill"])
def test_saved_mask_changed_in_place_raises(op):
    x = newch.randn(4, requires_grad=True)
    m = newch.tensor([True, False, True, False])
    y = newch.where(m, x, 0.0) if op == "where" else x.masked_fill(m, 0.0)
    m.fill_(True)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_version_errors_match_pytorch(torch=None):
    torch = pytest.importorskip("torch")
    for lib in (torch, newch):
        a = lib.tensor([[1.0, 3.0], [4.0, 2.0]], requires_grad=True)
        v, i = a.max(1)
        i.zero_()
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            v.sum().backward()
        x = lib.tensor([0.5, 2.0], requires_grad=True)
        lo, hi = lib.zeros(2), lib.ones(2)
        y = x.clamp(lo, hi)
        hi.fill_(5)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()


# -- no reference cycles: a dropped result gives its bytes back at once --------------------

CYCLE_OPS = {
    "exp": lambda w: w.exp(), "tanh": lambda w: w.tanh(), "sigmoid": lambda w: w.sigmoid(),
    "div": lambda w: w / (w + 3.0), "rdiv": lambda w: 1.0 / (w + 3.0),
    "softmax": lambda w: w.softmax(0), "log_softmax": lambda w: w.log_softmax(0),
    "relu": lambda w: w.relu(), "pow": lambda w: w ** (w + 3.0), "sqrt": lambda w: (w + 3.0).sqrt(),
    "elu": lambda w: newch.nn.functional.elu(w), "amax": lambda w: w.amax(0),
    "logsumexp": lambda w: w.logsumexp(0), "std": lambda w: w.std(),
}


@pytest.mark.parametrize("name", list(CYCLE_OPS))
def test_dropped_result_returns_its_bytes_without_gc(name):
    w = _leaf(1000)
    CYCLE_OPS[name](w)          # NOTE: a first call may compile a kernel; numba's compiler
    gc.collect()                # itself leaves cycles holding its arguments until gc runs
    base = newch.mem_stats()["arena_bytes_in_use"]
    gc.disable()
    try:
        y = CYCLE_OPS[name](w)
        assert newch.mem_stats()["arena_bytes_in_use"] > base
        del y
        assert newch.mem_stats()["arena_bytes_in_use"] == base
    finally:
        gc.enable()


def test_metric_loop_in_grad_mode_without_step_end_does_not_grow_the_arena(ctx):
    with newch.persistent():
        w = newch.randn(32, 10, requires_grad=True)
        x = newch.randn(64, 32)
        t = newch.randint(0, 10, (64,))
    gc.disable()
    try:
        seen = []
        for step in range(400):
            p = (x @ w).softmax(1)
            acc = (p.argmax(1) == t).float().mean().item()
            conf = p.max(1).values.log().mean().item()
            seen.append(newch.mem_stats()["arena_bytes_reserved"])
            assert 0.0 <= acc <= 1.0 and conf <= 0.0
        in_use = newch.mem_stats()["arena_bytes_in_use"]
    finally:
        gc.enable()
    assert seen[5] == seen[-1]
    assert in_use <= 64 * 10 * 4 + 1024      # only the last step's p (and small results)


# -- smaller items -----------------------------------------------------------------------

@pytest.mark.parametrize("op", ["floordiv", "mod", "fmod", "div_trunc"])
def test_integer_division_by_a_stale_tensor_raises_nc_error(op):
    a = newch.tensor([7, 9])
    b = newch.tensor([2, 3])
    newch.step_end()
    with newch.persistent():
        a = newch.tensor([7, 9])
    fn = {"floordiv": lambda: a // b, "mod": lambda: a % b, "fmod": lambda: newch.fmod(a, b),
          "div_trunc": lambda: newch.div(a, b, rounding_mode="trunc")}[op]
    junk = newch.zeros(2, dtype=newch.int64)      # reuses b's bytes: b would read 0
    with pytest.raises(NcError, match="step_end"):
        fn()
    del junk


def test_index_select_refuses_negative_indices_like_pytorch():
    x = newch.arange(5.0)
    with pytest.raises(IndexError, match="index -1 is out of bounds"):
        x.index_select(0, newch.tensor([0, -1]))
    with pytest.raises(IndexError, match="index 5 is out of bounds"):
        x.index_select(0, newch.tensor([5]))
    assert x[newch.tensor([-1, 0])].tolist() == [4.0, 0.0]       # plain indexing wraps


def test_index_select_negative_matches_pytorch():
    torch = pytest.importorskip("torch")
    with pytest.raises(IndexError):
        torch.arange(5.0).index_select(0, torch.tensor([-1]))


def test_gradient_takes_the_dtype_of_the_tensor_it_flows_into():
    a = newch.randn(3, 4, requires_grad=True)
    b = newch.randn(4, 2, requires_grad=True)
    c = newch.randn(3, 2, dtype=newch.float64, requires_grad=True)
    ((a @ b) * c).sum().backward()
    assert (a.grad.dtype, b.grad.dtype, c.grad.dtype) == (newch.float32, newch.float32, newch.float64)
    an, bn, cn = (t.detach().numpy().astype(np.float64) for t in (a, b, c))
    np.testing.assert_allclose(a.grad.numpy(), cn @ bn.T, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(b.grad.numpy(), an.T @ cn, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(c.grad.numpy(), an @ bn, rtol=1e-5, atol=1e-6)


def test_mixed_dtype_gradients_match_pytorch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal((4, 2)).astype(np.float32),
              rng.standard_normal((3, 2))]
    grads = []
    for lib in (torch, newch):
        a, b, c = (lib.tensor(v, requires_grad=True) for v in arrays)
        ((a @ b).exp() * c).sum().backward()
        grads.append([(str(t.grad.dtype).split(".")[-1], np.array(t.grad.tolist())) for t in (a, b, c)])
    for (dt_t, g_t), (dt_n, g_n) in zip(*grads):
        assert dt_t == dt_n
        np.testing.assert_allclose(g_n, g_t, rtol=1e-5, atol=1e-5)
