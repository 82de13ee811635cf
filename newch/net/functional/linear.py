"""``F.linear``: y = x @ W.T + b, the whole computation of ``nn.Linear``."""
from ...ops.arith import add
from ...ops.matrix import linear_2d, matmul
from ...tensor import Tensor


def linear(input, weight, bias=None):
    """Affine map ``input @ weight.T + bias`` over the last dim of ``input``.

    ``weight.T`` is a strided view: the matrix kernel reads it in place, no copy.

    Args:
        input: (*, in_features) tensor.
        weight: (out_features, in_features) tensor.
        bias: (out_features,) tensor or None.

    Example:
        >>> y = linear(newch.randn(8, 4), newch.randn(2, 4), newch.zeros(2))
        >>> y.shape
        newch.Size([8, 2])
    """
    for name, t in (("input", input), ("weight", weight)):
        if not isinstance(t, Tensor):
            raise TypeError(f"linear: {name} must be a Tensor, got {type(t).__name__}")
    if weight.ndim not in (1, 2):
        raise ValueError(f"linear: weight must be 1-D or 2-D (out_features, in_features), got "
                         f"shape {tuple(weight.shape)}")
    if input.ndim == 0 or input.shape[-1] != weight.shape[-1]:
        raise ValueError(f"linear: input of shape {tuple(input.shape)} has "
                         f"{input.shape[-1] if input.ndim else 0} features in its last dim, but "
                         f"weight of shape {tuple(weight.shape)} expects {weight.shape[-1]}")
    if input.dtype is not weight.dtype:
        raise TypeError(f"linear: input is {input.dtype} but weight is {weight.dtype}; convert one "
                        f"of them (x.float(), or model.double() for float64 data)")
    if (input.ndim == 2 and weight.ndim == 2 and (bias is None or (
            isinstance(bias, Tensor) and bias.ndim == 1 and bias.dtype is input.dtype
            and bias.shape[0] == weight.shape[0]))):
        return linear_2d(input, weight, bias)        # NOTE: one node, no transpose or add op
    out = matmul(input, weight.t())
    return out if bias is None else add(out, bias)
