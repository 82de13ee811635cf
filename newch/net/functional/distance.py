"""``F.normalize`` and ``F.cosine_similarity``: scaling vectors to unit norm and comparing them."""
from ...ops.alloc import check_tensor
from ...ops.norms import norm
from ...ops.reduce import sum as _sum


def normalize(input, p=2.0, dim=1, eps=1e-12):
    """``input`` divided by its ``p``-norm along ``dim`` (the norm clamped below at ``eps``).

    Example:
        >>> F.normalize(newch.tensor([[3.0, 4.0]])).tolist()
        [[0.6000000238418579, 0.800000011920929]]
    """
    check_tensor("normalize", input)
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"normalize: expected a floating point input, got {input.dtype}")
    n = norm(input, p, dim, keepdim=True).clamp_min(eps)
    return input / n


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """The cosine of the angle between ``x1`` and ``x2`` along ``dim`` (they broadcast); each norm
    is clamped below at ``eps``.

    Example:
        >>> F.cosine_similarity(newch.tensor([[1.0, 0.0]]), newch.tensor([[1.0, 1.0]])).tolist()
        [0.7071067690849304]
    """
    check_tensor("cosine_similarity", x1, "x1")
    check_tensor("cosine_similarity", x2, "x2")
    if not (x1.dtype.is_floating_point and x2.dtype.is_floating_point):
        raise RuntimeError(f"cosine_similarity: expected floating point inputs, got {x1.dtype} and "
                           f"{x2.dtype}")
    n1 = norm(x1, 2, dim, keepdim=True).clamp_min(eps)
    n2 = norm(x2, 2, dim, keepdim=True).clamp_min(eps)
    return _sum((x1 / n1) * (x2 / n2), dim)
