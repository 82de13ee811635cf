"""engine.grad_buffer: the .grad a fused backward may add into directly, only when a plain
backward() is running (never under autograd.grad or create_graph, never for a non-leaf)."""
import newch
from newch.autograd.engine import grad_buffer


class _Probe(newch.autograd.Function):
    """Identity whose backward records what grad_buffer offers for the tensors in ``asked``."""
    asked, seen = [], []

    @staticmethod
    def forward(ctx, x):
        return x * 1.0

    @staticmethod
    def backward(ctx, g):
        _Probe.seen = [grad_buffer(t) for t in _Probe.asked]
        return g


def _run(w, how, asked):
    _Probe.asked = asked
    y = _Probe.apply(w)
    if how == "backward":
        (y * y).sum().backward()
    elif how == "grad":
        newch.autograd.grad((y * y).sum(), [w])
    else:
        (y * y).sum().backward(create_graph=True)
    return _Probe.seen


def test_none_outside_backward_and_under_grad_or_create_graph():
    w = newch.nn.Parameter(newch.ones(2, 3))
    assert grad_buffer(w) is None
    assert _run(w, "grad", [w]) == [None]
    assert _run(w, "create", [w]) == [None]


def test_a_persistent_leaf_gets_persistent_zeros_then_its_grad_is_reused():
    w = newch.nn.Parameter(newch.ones(2, 3))
    (buf,) = _run(w, "backward", [w])
    assert buf is w.grad and buf.is_persistent
    # the engine then added 2 * w into the very buffer it handed out
    assert w.grad.tolist() == [[2.0] * 3] * 2
    (again,) = _run(w, "backward", [w])
    assert again is buf and w.grad.tolist() == [[4.0] * 3] * 2


def test_none_for_a_non_leaf_or_a_grad_in_a_graph():
    w = newch.nn.Parameter(newch.ones(2))
    mid = w * 2
    assert _run(w, "backward", [mid]) == [None]
    w.grad = newch.ones(2).requires_grad_()
    assert _run(w, "backward", [w]) == [None]
