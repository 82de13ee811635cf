"""``F.embedding`` and ``F.embedding_bag``: rows of a weight matrix picked by integer indices."""
import numpy as np

from ... import dtypes as D
from ...graph import no_grad
from ...ops.alloc import check_tensor, data
from ...ops.creation import tensor
from ...ops.extrema import max as _max
from ...ops.indexing import index_select
from ...ops.join import stack
from ...ops.reduce import sum as _sum
from ...ops.conditional import where


def _check_indices(op, input, weight):
    check_tensor(op, input)
    check_tensor(op, weight, "weight")
    if input.dtype not in (D.int64, D.int32):
        raise RuntimeError(f"{op}: expected indices of dtype long or int, got {input.dtype}")
    if weight.ndim != 2:
        raise RuntimeError(f"{op}: weight must be 2-D (num_embeddings, embedding_dim), got shape "
                           f"{tuple(weight.shape)}")
    ix = data(input, op)
    n = weight.shape[0]
    if ix.size and (ix.min() < 0 or ix.max() >= n):
        raise IndexError(f"{op}: index out of range: indices must be in 0..{n - 1}, got values "
                         f"{int(ix.min())}..{int(ix.max())}")
    return ix


def _padding(op, padding_idx, n):
    if padding_idx is None:
        return None
    if not -n <= padding_idx < n:
        raise ValueError(f"{op}: padding_idx {padding_idx} must be within num_embeddings ({n})")
    return padding_idx % n


def _renorm_(weight, ix, max_norm, norm_type):
    """Scale the rows named in ``ix`` whose ``norm_type``-norm exceeds ``max_norm`` (in place)."""
    w = data(weight, "embedding")
    rows = np.unique(ix)
    if not rows.size:
        return
    with no_grad():
        norms = np.linalg.norm(w[rows].astype(np.float64), ord=norm_type, axis=1)
        big = norms > max_norm
        scale = (max_norm / (norms[big] + 1e-7)).astype(w.dtype)
        w[rows[big]] *= scale[:, None]
        weight._bump_version()


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    """``weight[input]``: one row of ``weight`` per index; rows at ``padding_idx`` get no gradient.

    With ``max_norm`` the looked-up rows whose norm exceeds it are rescaled in place first.

    Example:
        >>> F.embedding(newch.tensor([[0, 2]]), newch.eye(3)).tolist()
        [[[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]]
    """
    ix = _check_indices("embedding", input, weight)
    if sparse:
        raise NotImplementedError("embedding: sparse=True gradients are not supported; use sparse=False")
    if scale_grad_by_freq:
        raise NotImplementedError("embedding: scale_grad_by_freq=True is not supported")
    pad = _padding("embedding", padding_idx, weight.shape[0])
    if max_norm is not None:
        _renorm_(weight, ix, max_norm, norm_type)
    flat = tensor(np.ascontiguousarray(ix.reshape(-1), dtype=np.int64), dtype=D.int64)
    out = index_select(weight, 0, flat)
    if pad is not None and weight.requires_grad and (ix == pad).any():
        mask = tensor((ix.reshape(-1) == pad)[:, None], dtype=D.bool_)
        out = where(mask, out.detach(), out)
    return out.reshape(tuple(input.shape) + (weight.shape[1],))


def _bags(input, offsets, include_last_offset):
    """(start, end) pairs of each bag in a 1-D ``input``."""
    if offsets is None:
        raise ValueError("embedding_bag: offsets has to be a 1D Tensor when input is 1D")
    off = [int(v) for v in data(offsets, "embedding_bag").reshape(-1)]
    n = input.shape[0]
    if off and off[0] != 0:
        raise ValueError(f"embedding_bag: offsets[0] has to be 0, got {off[0]}")
    ends = off[1:] if include_last_offset else off[1:] + [n]
    starts = off[:-1] if include_last_offset else off
    return list(zip(starts, ends))


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False,
                  mode="mean", sparse=False, per_sample_weights=None, include_last_offset=False,
                  padding_idx=None):
    """Sums, means or maxima of bags of embedding rows: rows of a 2-D ``input``, or the slices of a
    1-D ``input`` that ``offsets`` start. Entries equal to ``padding_idx`` are left out of bags.

    Example:
        >>> F.embedding_bag(newch.tensor([[0, 1]]), newch.eye(2), mode="sum").tolist()
        [[1.0, 1.0]]
    """
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"embedding_bag: mode must be 'sum', 'mean' or 'max', got {mode!r}")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError("embedding_bag: per_sample_weights is only supported for mode='sum'")
    ix = _check_indices("embedding_bag", input, weight)
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError("embedding_bag: offsets must be None when input is 2-D")
        b, m = input.shape
        bags = [(i * m, (i + 1) * m) for i in range(b)]
    elif input.ndim == 1:
        bags = _bags(input, offsets, include_last_offset)
    else:
        raise ValueError(f"embedding_bag: input has to be 1-D or 2-D, got {input.ndim}-D")
    rows = embedding(input.reshape(-1), weight, padding_idx, max_norm, norm_type)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.reshape(-1, 1)
    pad = _padding("embedding_bag", padding_idx, weight.shape[0])
    flat = ix.reshape(-1)
    outs = []
    for s, e in bags:
        keep = [k for k in range(s, e) if pad is None or flat[k] != pad]
        if not keep:
            outs.append(weight.new_zeros(weight.shape[1]))
            continue
        r = index_select(rows, 0, tensor(np.asarray(keep, np.int64), dtype=D.int64))
        if mode == "max":
            outs.append(_max(r, 0).values)      # ties: the gradient goes to the first maximum
        else:
            sm = _sum(r, 0)
            outs.append(sm / len(keep) if mode == "mean" else sm)
    if not outs:
        return weight.new_zeros(0, weight.shape[1])
    return stack(outs)


