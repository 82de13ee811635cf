"""``multinomial``: draw category indices from rows of (unnormalised) probabilities."""
import numpy as np

from .. import dtypes as D
from ..generator import rng_of
from .alloc import check_tensor, data, empty

__all__ = ["multinomial"]
TENSOR_METHODS = ["multinomial"]   # also bound as Tensor methods (ops/methods.py)


def _check_probs(p):
    if not np.all(np.isfinite(p)) or (p < 0).any():
        raise RuntimeError("multinomial: probability tensor contains either inf, nan or an element < 0")
    if (p.sum(axis=1) <= 0).any():
        raise RuntimeError("multinomial: invalid multinomial distribution (sum of probabilities <= 0)")


def multinomial(input, num_samples, replacement=False, *, generator=None):
    """``num_samples`` indices per row of ``input`` drawn with probability proportional to its
    entries (without replacement by default). Seeded by ``newch.manual_seed`` or ``generator``;
    the stream is newch's own, so the draws differ from PyTorch's.

    Example:
        >>> multinomial(newch.tensor([0.0, 1.0, 0.0]), 2, replacement=True).tolist()
        [1, 1]
    """
    check_tensor("multinomial", input)
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"multinomial: expected a floating point input, got {input.dtype}")
    if input.ndim not in (1, 2):
        raise RuntimeError(f"multinomial: prob_dist must be 1 or 2 dim, got {input.ndim}")
    if not isinstance(num_samples, (int, np.integer)) or num_samples <= 0:
        raise RuntimeError(f"multinomial: num_samples must be a positive int, got {num_samples!r}")
    p = data(input, "multinomial").astype(np.float64).reshape(-1, input.shape[-1])
    n = p.shape[1]
    if not replacement and num_samples > n:
        raise RuntimeError(f"multinomial: cannot sample n_sample ({num_samples}) > prob_dist.size(-1) "
                           f"({n}) samples without replacement")
    _check_probs(p)
    rng = rng_of(generator)
    out = empty((p.shape[0], int(num_samples)), D.int64)
    for r in range(p.shape[0]):
        q = p[r] / p[r].sum()
        if not replacement and num_samples > np.count_nonzero(q):
            raise RuntimeError("multinomial: invalid multinomial distribution (with replacement=False, "
                               "not enough non-negative category to sample)")
        out._a[r] = rng.choice(n, size=int(num_samples), replace=bool(replacement), p=q)
    return out.reshape(-1) if input.ndim == 1 else out
