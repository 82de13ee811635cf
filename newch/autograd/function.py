"""Custom differentiable operations: subclass ``Function`` with ``forward`` and ``backward``."""
from ..tensor import Tensor
from ..graph import no_grad
from ..ops.layout import broadcast_shapes
from ..ops.record import needs_grad, pack, record, sum_to


class FunctionCtx:
    """What ``forward`` hands to ``backward``: saved tensors and anything set as attributes."""

    def __init__(self):
        self.saved_tensors = ()
        self.needs_input_grad = ()

    def save_for_backward(self, *tensors):
        """Keep ``tensors`` for ``backward`` (read them back as ``ctx.saved_tensors``)."""
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward: expected Tensors or None, got {type(t).__name__}")
        self.saved_tensors = tensors

    def mark_non_differentiable(self, *tensors):
        self.non_differentiable = tensors


def _fit(name, k, grad, meta):
    """Check gradient ``k`` a custom backward returned: sum a broadcast one down, match the dtype.

    ``meta`` is (shape, dtype, requires_grad) of the forward input, None for a non-tensor.
    """
    if grad is None or meta is None or not meta[2]:
        return None
    shape, dtype = meta[0], meta[1]
    if not isinstance(grad, Tensor):
        raise TypeError(f"{name}.backward: gradient {k} must be a Tensor or None, got "
                        f"{type(grad).__name__}")
    if tuple(grad.shape) != shape:
        try:
            ok = broadcast_shapes(name, shape, grad.shape) == tuple(grad.shape)
        except ValueError:
            ok = False
        if not ok:
            raise RuntimeError(f"{name}.backward: gradient {k} has shape {tuple(grad.shape)}, "
                               f"expected the input's shape {shape}")
        grad = sum_to(grad, shape)
    return grad if grad.dtype is dtype else grad.to(dtype)


class Function:
    """Base class of user-defined ops.

    Example:
        >>> class Square(newch.autograd.Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         ctx.save_for_backward(x)
        ...         return x * x
        ...     @staticmethod
        ...     def backward(ctx, g):
        ...         (x,) = ctx.saved_tensors
        ...         return 2 * x * g
        >>> x = newch.tensor([3.0], requires_grad=True)
        >>> Square.apply(x).sum().backward(); x.grad.item()
        6.0
    """

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("Function subclasses must implement forward(ctx, ...)")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("Function subclasses must implement backward(ctx, ...)")

    @classmethod
    def apply(cls, *args):
        ctx = FunctionCtx()
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        with no_grad():
            out = cls.forward(ctx, *args)
        if needs_grad(*args):
            outs = out if isinstance(out, tuple) else (out,)
            nd = {id(t) for t in getattr(ctx, "non_differentiable", ())}

            # NOTE: shapes and flags only: the saved tensors reach backward through record
            metas = [(tuple(a.shape), a.dtype, a.requires_grad) if isinstance(a, Tensor) else None
                     for a in args]
            kept = ctx.saved_tensors
            saved, restore = pack(*kept)
            ctx.saved_tensors = ()

            def backward(g, *s):
                ctx.saved_tensors = tuple(restore(*s))
                try:
                    res = cls.backward(ctx, g)
                finally:
                    ctx.saved_tensors = ()
                res = res if isinstance(res, tuple) else (res,)
                if len(res) != len(metas):
                    raise RuntimeError(f"{cls.__name__}.backward returned {len(res)} gradients, "
                                       f"expected {len(metas)} (one per forward input)")
                return tuple(_fit(cls.__name__, k, r, m) for k, (r, m) in enumerate(zip(res, metas)))
            diff = tuple(o for o in outs if isinstance(o, Tensor) and id(o) not in nd)
            if len(diff) > 1:
                raise NotImplementedError(f"{cls.__name__}: newch Functions support one "
                                          f"differentiable output")
            if diff:
                record(diff[0], f"{cls.__name__}Backward", args, backward, saved)
            else:
                ctx.saved_tensors = kept
        return out
