"""Automatic differentiation: ``backward``, ``grad``, grad modes and custom ``Function``s.

Every op records its backward beside its forward (``ops/``); this package walks
the recorded graph (``engine.py``) and offers the user-facing entry points.
"""
from ..ops.creation import zeros_like
from ..ops.record import edge
from ..tensor import Tensor, UPPER
from .engine import _accumulate_grad, _roots, run_backward
from .function import Function, FunctionCtx
from ..graph import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled

__all__ = ["backward", "grad", "Function", "FunctionCtx", "no_grad", "enable_grad",
           "set_grad_enabled", "inference_mode", "is_grad_enabled"]


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate d(tensors)/d(leaf) into every leaf's ``.grad``.

    Args:
        tensors: a tensor or sequence of tensors to differentiate.
        grad_tensors: the gradient w.r.t. each (None for one-element tensors).
        retain_graph: keep the graph (and its saved tensors) for another backward;
            defaults to ``create_graph``.
        create_graph: record the backward itself, for higher-order gradients.
        inputs: only accumulate into these leaves.

    Example:
        >>> x = newch.ones(3, requires_grad=True)
        >>> (x * x).sum().backward()
        >>> x.grad.tolist()
        [2.0, 2.0, 2.0]
    """
    roots = _roots("backward", tensors, grad_tensors)
    retain = create_graph if retain_graph is None else retain_graph
    if inputs is None:
        run_backward(roots, retain, create_graph)
        return
    inputs = (inputs,) if not isinstance(inputs, (list, tuple)) else inputs
    got = grad([t for t, _ in roots], list(inputs), [g for _, g in roots], retain, create_graph,
               allow_unused=True)
    for t, g in zip(inputs, got):
        if g is not None:
            _accumulate_grad(t, g, create_graph)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         allow_unused=None, materialize_grads=False):
    """Return d(outputs)/d(inputs) as a tuple, without touching any ``.grad``.

    Example:
        >>> x = newch.tensor([3.0], requires_grad=True)
        >>> newch.autograd.grad((x ** 2).sum(), x)[0].item()
        6.0
    """
    single = isinstance(inputs, Tensor)
    inputs = (inputs,) if single else tuple(inputs)
    for t in inputs:
        if not isinstance(t, Tensor) or not t.requires_grad:
            raise RuntimeError("grad: one of the differentiated tensors does not require grad")
    roots = _roots("grad", outputs, grad_outputs)
    edges = [edge(t) for t in inputs]
    capture = {e: None for e in edges}
    retain = create_graph if retain_graph is None else retain_graph
    run_backward(roots, retain, create_graph, capture)
    result = []
    for t, e in zip(inputs, edges):
        g = capture[e]
        if g is None:
            if materialize_grads:
                g = zeros_like(t)
            elif not allow_unused:
                raise RuntimeError("grad: one of the differentiated tensors appears to not have "
                                   "been used in the graph; set allow_unused=True if this is intended")
        result.append(g)
    return tuple(result)


UPPER.backward = backward      # Tensor.backward calls the engine through this (tensor.py sits below)
