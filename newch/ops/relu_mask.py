"""relu, keeping one bit per element for its backward (not the output, not the input).

The gradient of relu is g where the output is positive, else 0, so the node
saves a packed bit mask: 1/32 of a float32 activation. In the MNIST Net the
second ReLU's output (9 MiB at batch 64) then dies as soon as max pooling has
read it.
"""
from .. import dtypes as D
from .alloc import data, empty, kernels
from .record import needs_grad, record


def relu_saving_bits(input, inplace=False):
    """relu of a contiguous float tensor that needs a gradient, saving a bit mask; else None.

    ``inplace=True`` (``relu_``) writes over ``input`` (each element is read, then written,
    by the same loop iteration) and bumps its version; it returns ``input``.
    """
    a = data(input, "relu")
    if not (input.dtype.is_floating_point and needs_grad(input) and a.flags.c_contiguous):
        return None
    n = a.size
    out = input if inplace else empty(a.shape, input.dtype)
    bits = empty(((n + 7) // 8,), D.uint8)
    kernels().relu_bits(a.reshape(-1), out._a.reshape(-1), bits._a)
    if inplace:
        input._s.version += 1
    record(out, "ReluBackward0", (input,), _bits_backward(a.shape), saved=[bits])
    return out


def _bits_backward(shape):
    """ReluBackward0 over a saved bit mask, for an output of ``shape``."""

    def backward(g, mask):
        ga = data(g, "ReluBackward0")
        if not ga.flags.c_contiguous:
            g = g.contiguous()
            ga = data(g, "ReluBackward0")
        dx = empty(shape, g.dtype)
        kernels().bits_select(ga.reshape(-1), data(mask, "ReluBackward0"), dx._a.reshape(-1))
        if needs_grad(g):     # create_graph=True: d(dx)/dg is the same mask
            record(dx, "ReluBackwardBackward0", (g,), lambda h, m: (relu_mask_apply(h, m),),
                   saved=[mask])
        return (dx,)
    return backward


def relu_mask_apply(g, bits):
    """g where the saved bit is set, else 0 (a new tensor)."""
    gg = g.contiguous()
    dx = empty(tuple(g.shape), g.dtype)
    kernels().bits_select(data(gg, "ReluBackward0").reshape(-1), data(bits, "ReluBackward0"),
                          dx._a.reshape(-1))
    return dx
