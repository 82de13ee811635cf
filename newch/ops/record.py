"""How ops attach their backward to the graph (the forward/backward pairing lives in each op)."""
import threading
import weakref

from ..graph import Accumulate, Node, SavedTensor, is_grad_enabled
from ..tensor import Tensor
from .alloc import empty


def needs_grad(*xs):
    """True when grad mode is on and any of ``xs`` is a tensor that requires grad."""
    for x in xs:
        if isinstance(x, Tensor) and x._rg:
            return is_grad_enabled()      # NOTE: looked up only when some input requires grad
    return False


def edge(t):
    """Where gradient for input ``t`` flows: its node, its leaf accumulator, or None."""
    if not (isinstance(t, Tensor) and t._rg):
        return None
    if t._node is not None:
        return t._node
    acc = t._acc() if t._acc is not None else None
    if acc is None:
        acc = Accumulate(t)
        t._acc = weakref.ref(acc)
    return acc


def record(out, name, inputs, backward, saved=()):
    """Make ``out`` (a tensor or tuple of tensors) the result of node ``name``.

    ``backward(grad_out, *saved)`` returns one gradient (or None) per entry of
    ``inputs``. ``saved`` lists every tensor the backward reads: it gets them back as
    arguments, after autograd checked that none was freed or modified in place since.
    The closure itself must hold no tensor and no numpy view of tensor memory.
    """
    outs = out if isinstance(out, tuple) else (out,)
    edges, dtypes, shares, is_inplace = [], [], False, False
    for x in inputs:
        if not isinstance(x, Tensor):
            edges.append(None)
            dtypes.append(None)
            continue
        vn = x._node
        if vn is not None and vn.view_version is not None and vn.view_version != x._s.version:
            raise RuntimeError(
                f"{name}: an input is a view ({vn.name()}) whose base tensor was modified in place "
                f"after the view was taken; newch autograd cannot follow that. Take the view after "
                f"the in-place op, or .clone() it before")
        for o in outs:
            is_inplace = is_inplace or x is o
            shares = shares or x._s is o._s
        e = edge(x)
        edges.append(e)
        dtypes.append(x._a.dtype if e is not None else None)   # numpy's: a cheap attribute
    if not saved:
        kept = ()
    elif len(outs) == 1:
        kept = tuple([SavedTensor(t, t is out) for t in saved])
    else:
        kept = tuple([SavedTensor(t, any(t is o for o in outs)) for t in saved])
    node = Node(name, backward, tuple(edges), kept, tuple(dtypes))
    # NOTE: a fresh output sharing an input's memory is a view; an in-place op's output is
    # one of its inputs (setitem) and is not.
    if shares and not is_inplace:
        node.view_version = outs[0]._s.version
    for o in outs:
        o._node = node
        o._rg = True
    return out


def pack(*xs):
    """Operands for ``record``: (tensors among ``xs``, ``restore``).

    Save the tensors; ``restore(*saved)`` gives ``xs`` back with each tensor replaced
    by its checked saved copy (numbers and None pass through), so a backward over
    mixed tensor/number operands never captures a tensor itself.

    Example:
        >>> x = newch.ones(2, requires_grad=True)
        >>> with newch.no_grad():
        ...     out = x * 2.0
        >>> saved, restore = pack(x, 2.0)
        >>> _ = record(out, "MulBackward0", (x,), lambda g, *s: (g * restore(*s)[1],), saved)
        >>> out.sum().backward(); x.grad.tolist()
        [2.0, 2.0]
    """
    slots = [i for i, x in enumerate(xs) if isinstance(x, Tensor)]
    if len(slots) == len(xs):
        return list(xs), _as_given      # NOTE: the common case, without a closure per op
    consts = [None if isinstance(x, Tensor) else x for x in xs]

    def restore(*saved):
        vals = list(consts)
        for i, t in zip(slots, saved):
            vals[i] = t
        return vals
    return [xs[i] for i in slots], restore


def _as_given(*saved):
    return saved


def sum_to(g, shape):
    """Sum gradient ``g`` down to ``shape`` (undo broadcasting)."""
    shape = tuple(shape)
    if tuple(g.shape) == shape:
        return g
    from .reduce import sum as _sum   # NOTE: reduce.py imports this module (a cycle)
    lead = g.ndim - len(shape)
    dims = list(range(lead)) + [lead + i for i, n in enumerate(shape) if n == 1 and g.shape[lead + i] != 1]
    r = _sum(g, dims, keepdim=True) if dims else g
    return r.reshape(shape)


def check_inplace(op, t):
    """Refuse in-place changes autograd cannot follow: on a leaf that requires grad (as PyTorch
    does) and on a view of a tensor that requires grad (newch cannot carry the change back to
    the base tensor's gradient, so it refuses rather than give a wrong one)."""
    if not (is_grad_enabled() and t._rg):
        return
    if t._node is None:
        raise RuntimeError(f"{op}: a leaf tensor that requires grad is being used in an in-place "
                           f"operation; wrap it in `with newch.no_grad():` or use the out-of-place op")
    if t._node.view_version is not None:
        raise RuntimeError(f"{op}: in-place change of a view ({t._node.name()}) of a tensor that "
                           f"requires grad; newch autograd cannot pass it back to the base tensor. "
                           f"Use the out-of-place op, or .clone() the view first")


# NOTE: set by the backward engine (autograd/engine.py, above ops) while a plain ``backward()``
# runs on this thread: not ``autograd.grad`` (its gradients go to the caller) nor create_graph.
class _Plain(threading.local):
    on = False      # NOTE: a class default: read without a swallowed AttributeError


plain_backward = _Plain()


def fresh_grad(t):
    """A new uninitialised tensor shaped like leaf ``t`` for a backward to write ``t``'s whole
    gradient into and install as ``t.grad``, returning None for ``t``; or None (return the
    gradient as usual).

    Saves the engine's copy of a gradient into ``.grad``. Only while a plain ``backward()``
    runs on this thread, for a leaf that requires grad and has no live ``.grad`` (one to add
    into keeps the usual path: its sum's rounding must not change). Persistent when ``t``
    is, as ``.grad`` would be.

    Example:
        >>> w = newch.ones(2, 3, requires_grad=True)
        >>> fresh_grad(w) is None        # no backward running
        True
    """
    if not plain_backward.on:
        return None
    if not isinstance(t, Tensor) or not t._rg or t._node is not None:
        return None
    g = t._grad
    if g is not None and g._s.gen.alive:
        return None
    return empty(t._a.shape, t.dtype, persistent=t._s.views is not None)
