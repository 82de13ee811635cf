"""Every backward reads its tensors through the saved-tensor mechanism, never through its closure.

For every differentiable op of the finite-difference suite, the graph it records
(and, with ``create_graph=True``, the graph of its gradient) is walked: no backward
closure may hold a tensor or a numpy array (a raw view could outlive its memory,
and a tensor held there escapes the liveness and version checks), and dropping the
result gives every byte back at once, with the cyclic GC off (no node -> closure ->
output -> node cycle).
"""
import gc
import types
import weakref

import numpy as np
import pytest

import newch
from newch.graph import Node, SavedTensor

from .test_gradcheck_ops import ALL, L, case, u


class _Square(newch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x * x
        ctx.save_for_backward(x, y)
        return y

    @staticmethod
    def backward(ctx, g):
        x, y = ctx.saved_tensors
        return g * 2.0 * x + 0.0 * y


def _inplace_chain(x, m):
    y = x * 1.0
    y.relu_().add_(m).mul_(x)
    y.masked_fill_(newch.tensor([True, False, False]), 0.5)
    y.scatter_add_(0, L(0, 2), m[:2])
    return y


def _copy_then_fill(x, v):
    y = x * 2.0
    z = x + 1.0
    y.copy_(v)
    z.fill_(3.0)
    return y * z + x


# ops and paths the finite-difference table does not reach
EXTRA = [
    case("max_dim_values", lambda a: a.max(1).values, u(2, 3)),
    case("min_dim_keepdim", lambda a: a.min(0, keepdim=True)[0], u(2, 3)),
    case("function_apply", lambda a: _Square.apply(a), u(3)),
    case("inplace_chain", _inplace_chain, u(3), u(3)),
    case("copy_and_fill", _copy_then_fill, u(3), u(3)),
    case("floor_div_rounding", lambda a, b: newch.div(a, b, rounding_mode="floor") + a, u(3), u(3)),
    case("to_float32", lambda a: a.float() * a.float(), u(3)),
    case("transpose_1d", lambda a: a.t() * a, u(3)),
    case("clamp_tensor_bounds", lambda a, lo, hi: a.clamp(lo, hi), u(3), u(3) - 2, u(3) + 2),
    case("rpow_zero_base", lambda a: 0.0 ** a, u(3) + 2),
    case("masked_fill", lambda a: a.masked_fill(newch.tensor([True, False, True]), 2.0), u(2, 3)),
]


def _held(obj, seen, path="closure"):
    """(path, object) for every tensor or numpy array reachable from ``obj`` by closures,
    containers and instance attributes."""
    if id(obj) in seen or isinstance(obj, (type, types.ModuleType, str, bytes, int, float)):
        return
    seen.add(id(obj))
    if isinstance(obj, (newch.Tensor, np.ndarray)):
        yield path, obj
        return
    if isinstance(obj, (list, tuple, set, frozenset)):
        for k, v in enumerate(obj):
            yield from _held(v, seen, f"{path}[{k}]")
        return
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _held(v, seen, f"{path}[{k!r}]")
        return
    if isinstance(obj, types.FunctionType):
        for name, cell in zip(obj.__code__.co_freevars, obj.__closure__ or ()):
            try:
                v = cell.cell_contents
            except ValueError:
                continue
            yield from _held(v, seen, f"{path}.{obj.__name__}:{name}")
        return
    if isinstance(obj, types.MethodType):
        yield from _held(obj.__self__, seen, f"{path}.__self__")
        return
    for k, v in getattr(obj, "__dict__", {}).items():
        yield from _held(v, seen, f"{path}.{k}")


def _nodes(outs):
    stack = [o.grad_fn for o in outs if isinstance(o, newch.Tensor) and o.grad_fn is not None]
    seen = {}
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen[id(n)] = n
        stack.extend(x for x in n.next if isinstance(x, Node))
    return list(seen.values())


def _check_graph(outs):
    nodes = _nodes(outs)
    assert nodes, "the op recorded no graph"
    for n in nodes:
        bad = list(_held(n.backward, set()))
        assert not bad, f"{n.name()}'s backward closure holds {[p for p, _ in bad]}"
        assert all(isinstance(s, SavedTensor) for s in n.saved)
    return nodes


def _outs(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _leaves(inputs):
    return [newch.tensor(a, dtype=newch.float64, requires_grad=True) for a in inputs]


@pytest.mark.parametrize("fn, inputs, kw", ALL + EXTRA)
def test_no_backward_closure_holds_a_tensor_or_array(fn, inputs, kw):
    xs = _leaves(inputs)
    outs = _outs(fn(*xs))
    _check_graph(outs)
    # NOTE: o * o: the gradient reaching each node depends on the inputs, so every
    # backward records its own graph under create_graph
    total = sum((o * o).sum() for o in outs if o.requires_grad)
    grads = newch.autograd.grad(total, xs, create_graph=True, allow_unused=True)
    second = [g for g in grads if g is not None and g.grad_fn is not None]
    if second:
        _check_graph(second)


@pytest.mark.parametrize("fn, inputs, kw", ALL + EXTRA)
def test_dropping_a_result_frees_its_graph_without_gc(fn, inputs, kw):
    xs = _leaves(inputs)
    fn(*xs)           # NOTE: a first call may compile kernels, and numba's compiler leaves
    gc.collect()      # cycles holding its arguments until the GC runs: warm up first
    base = newch.mem_stats()["arena_bytes_in_use"]
    gc.disable()
    try:
        outs = _outs(fn(*xs))
        probe = [weakref.ref(n) for n in _nodes(outs)]
        del outs
        assert all(p() is None for p in probe), "a dropped result's graph is kept alive by a cycle"
        assert newch.mem_stats()["arena_bytes_in_use"] == base
    finally:
        gc.enable()


def test_the_closure_check_finds_a_captured_tensor_or_view():
    x = newch.tensor([1.0, 2.0], dtype=newch.float64, requires_grad=True)
    y = x * 2.0
    from newch.ops.record import record
    view = x.detach()._a[:1]
    record(y, "Leaky", (x,), lambda g: (g * x,))
    with pytest.raises(AssertionError, match="Leaky"):
        _check_graph([y])
    record(y, "Leaky2", (x,), lambda g: (g + float(view[0]),))
    with pytest.raises(AssertionError, match="view"):
        _check_graph([y])


def test_a_cycle_through_the_output_is_detected():
    # the probe the test above relies on: the old way (a closure holding its output) is seen
    w = newch.tensor([1.0, 2.0], dtype=newch.float64, requires_grad=True)
    from newch.ops.record import record

    def cyclic():
        y = w * 2.0
        record(y, "Cyclic", (w,), lambda g: (g * y,))
        return weakref.ref(y.grad_fn)
    gc.disable()
    try:
        probe = cyclic()
        assert probe() is not None        # only the cyclic GC can free it
    finally:
        gc.enable()
    gc.collect()
    assert probe() is None
