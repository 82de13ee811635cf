"""The backward engine: walks the graph newest node first, freeing as it goes.

Each node's gradient is summed from its consumers, handed to its backward
closure, and then dropped; unless ``retain_graph`` is set the closure (and so
every tensor it saved) is dropped too. That is what keeps backward's memory
close to the forward's live set instead of "all activations plus all grads".
"""
import heapq
import threading

from ..context import default_context
from ..dtypes import from_numpy_dtype
from ..tensor import Tensor
from ..graph import Accumulate, Node, set_grad_enabled
from ..ops.creation import ones_like, zeros_like
from ..ops.record import edge, plain_backward


def _roots(op, tensors, grads):
    if isinstance(tensors, Tensor):
        tensors = (tensors,)
    if grads is None or isinstance(grads, Tensor):
        grads = (grads,) * len(tensors) if grads is None else (grads,)
    if len(grads) != len(tensors):
        raise ValueError(f"{op}: got {len(tensors)} tensors but {len(grads)} gradients")
    out = []
    for t, g in zip(tensors, grads):
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}: expected Tensors, got {type(t).__name__}")
        if not t.requires_grad:
            raise RuntimeError(f"{op}: element of the tensors does not require grad and does not "
                               f"have a grad_fn")
        t._data(op)
        if g is None:
            if t.numel() != 1:
                raise RuntimeError(f"{op}: grad can be implicitly created only for scalar outputs, "
                                   f"got shape {tuple(t.shape)}; pass gradient=")
            g = ones_like(t)
        elif tuple(g.shape) != tuple(t.shape):
            raise ValueError(f"{op}: gradient of shape {tuple(g.shape)} does not match the "
                             f"tensor's shape {tuple(t.shape)}")
        out.append((t, g))
    return out


def _edge_of(t):
    return edge(t)


def _dependencies(starts):
    """How many consumers each reachable node has (so we know when its grad is complete)."""
    deps, seen, stack = {}, set(), [n for n in starts if isinstance(n, Node)]
    for n in stack:
        seen.add(id(n))
    while stack:
        node = stack.pop()
        for nxt in node.next:
            if isinstance(nxt, Node):
                deps[nxt] = deps.get(nxt, 0) + 1
                if id(nxt) not in seen:
                    seen.add(id(nxt))
                    stack.append(nxt)
    return deps


class _Walk:
    """State of one backward pass: pending grads, ready nodes (newest first), capture slots."""

    def __init__(self, deps, retain_graph, create_graph, capture):
        self.deps = deps
        self.retain_graph = retain_graph
        self.create_graph = create_graph
        self.capture = capture
        self.pending = {}
        self.heap = []
        self.queued = set()

    def send(self, edge, g, consumed=True):
        """Hand gradient ``g`` (None: "zero", it still counts as delivered) to ``edge``."""
        if edge is None:
            return
        if isinstance(edge, Accumulate):
            if g is None:
                return
            if self.capture is None:
                _accumulate_grad(edge.leaf, g, self.create_graph)
            elif edge in self.capture:
                old = self.capture[edge]
                self.capture[edge] = g if old is None else old + g
            return
        if g is not None:
            prev = self.pending.get(edge)
            self.pending[edge] = g if prev is None else prev + g
        if consumed:
            self.deps[edge] -= 1
        if self.deps.get(edge, 0) == 0 and edge not in self.queued:
            self.queued.add(edge)
            heapq.heappush(self.heap, (-edge.seq, edge.seq, edge))

    def run(self):
        while self.heap:
            node = heapq.heappop(self.heap)[2]
            g = self.pending.pop(node, None)
            if g is None:
                # NOTE: every consumer sent None: the node has nothing to propagate, but its
                # inputs must still count this consumer as done or they would never run.
                for nxt in node.next:
                    self.send(nxt, None)
                continue
            if self.capture is not None and node in self.capture:
                self.capture[node] = g
            self.run_node(node, g)
            del g

    def run_node(self, node, g):
        if node.backward is None:
            raise RuntimeError(
                f"backward: trying to backward through {node.name()} a second time (its saved "
                f"tensors were already freed); pass retain_graph=True to the first backward")
        for s in node.saved:
            s.check(node)     # NOTE: before anything happens: a freed or changed input raises
        if node.retain is not None:
            t = node.retain()
            if t is not None:
                _accumulate_grad(t, g, self.create_graph)
        grads = node.backward(g, *[s.unpack(node) for s in node.saved])
        if not self.retain_graph:
            # NOTE: this frees memory during backward: the node held the saved tensors.
            node.backward = None
            node.saved = ()
        dtypes = node.dtypes or (None,) * len(node.next)
        for nxt, gi, dt in zip(node.next, grads, dtypes):
            if nxt is not None:
                # NOTE: as PyTorch, a gradient takes the dtype of the tensor it flows into
                # (a float64 grad reaching a float32 matmul result is cast down)
                if gi is not None and dt is not None and gi.dtype.np != dt:
                    gi = gi.to(from_numpy_dtype(dt))
                self.send(nxt, gi)


def run_backward(roots, retain_graph, create_graph, capture=None):
    """Propagate ``roots`` [(tensor, grad)] to the leaves.

    Leaf gradients are accumulated into ``.grad``, or, when ``capture`` (a dict
    edge -> None) is given, stored there instead.
    """
    edges = [(_edge_of(t), g) for t, g in roots]
    walk = _Walk(_dependencies([e for e, _ in edges]), retain_graph, create_graph, capture)
    outer = getattr(_running, "walk", None)
    outer_plain = plain_backward.on
    _running.walk = walk
    plain_backward.on = capture is None and not create_graph    # NOTE: ops' fresh_grad asks
    try:
        with set_grad_enabled(create_graph):
            for e, g in edges:
                walk.send(e, g, consumed=False)
            del edges, roots
            walk.run()
    finally:
        _running.walk = outer
        plain_backward.on = outer_plain


_running = threading.local()     # the walk running on this thread (``grad_buffer`` asks it)


def grad_buffer(t):
    """``t.grad``, for a fused backward to add ``t``'s gradient into in place, or None.

    A backward that would hand the engine a gradient as big as a weight (only to be added into
    ``.grad`` and dropped) may write it there directly and return None for ``t`` instead, which
    keeps that temporary out of the arena. None (send the gradient as usual) unless a plain
    ``backward()`` is running on this thread (not ``autograd.grad`` nor ``create_graph``) and ``t``
    is a leaf that requires grad whose ``.grad`` is absent or a writable, contiguous tensor of its
    dtype outside any graph; an absent ``.grad`` is created as zeros (persistent for a persistent
    ``t``, as ``.grad`` would be).

    Example:
        >>> w = newch.ones(2, 3, requires_grad=True)
        >>> grad_buffer(w) is None        # no backward running
        True
    """
    walk = getattr(_running, "walk", None)
    if walk is None or walk.capture is not None or walk.create_graph:
        return None
    if not isinstance(t, Tensor) or not t.requires_grad or not t.is_leaf:
        return None
    g = t.grad
    if g is None or not g.is_alive:
        if t.is_persistent:
            with default_context().persistent():
                t.grad = zeros_like(t)
        else:
            t.grad = zeros_like(t)
        return t.grad
    a = g._data("backward")
    if g.requires_grad or g.dtype is not t.dtype or g.shape != t.shape \
            or not a.flags.c_contiguous or not a.flags.writeable:
        return None
    return g


def _accumulate_grad(t, g, create_graph):
    """Add ``g`` into ``t.grad``; a persistent tensor's grad is persistent too."""
    if g.dtype is not t.dtype:
        g = g.to(t.dtype)
    old = t.grad
    if old is None or not old.is_alive:
        if create_graph and g.requires_grad:
            t.grad = g
        elif t.is_persistent:
            with default_context().persistent():
                t.grad = g.clone()
        else:
            t.grad = g.clone()
    elif create_graph or old.requires_grad:
        # NOTE: a grad kept from create_graph=True is part of a graph (and may be a
        # read-only broadcast view): never write into it.
        if t.is_persistent and not create_graph:
            with default_context().persistent():
                t.grad = old + g
        else:
            t.grad = old + g
    else:
        old.add_(g)
