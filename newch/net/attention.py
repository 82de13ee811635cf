"""MultiheadAttention: attention over ``num_heads`` learnt projections of query, key and value.

Parameter names and initialisation are PyTorch's (``in_proj_weight`` / ``in_proj_bias`` packing
q, k, v; ``out_proj``), so state_dicts interchange.
"""
from . import functional as F
from . import init
from .linear import Linear
from .module import Module
from .parameter import Parameter, empty_persistent
from ..ops.activation import softmax
from ..ops.matrix import matmul

_NEG_INF = float("-inf")


class NonDynamicallyQuantizableLinear(Linear):
    """A Linear (the name PyTorch gives MultiheadAttention's output projection)."""


class MultiheadAttention(Module):
    """Multi-head attention: ``out, weights = mha(query, key, value)``.

    Args:
        embed_dim: model width E (split into ``num_heads`` heads of E / num_heads).
        num_heads: number of heads.
        dropout: dropout on the attention weights (training only).
        bias: biases on the input and output projections.
        kdim, vdim: key / value widths (default E; different widths use separate projections).
        batch_first: inputs are (N, L, E) instead of (L, N, E).

    Example:
        >>> mha = MultiheadAttention(8, 2, batch_first=True)
        >>> x = newch.randn(3, 5, 8)
        >>> out, w = mha(x, x, x)
        >>> out.shape, w.shape
        (newch.Size([3, 5, 8]), newch.Size([3, 5, 5]))
    """

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
                 add_zero_attn=False, kdim=None, vdim=None, batch_first=False, device=None, dtype=None):
        super().__init__()
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"MultiheadAttention: embed_dim and num_heads must be > 0, got "
                             f"{embed_dim} and {num_heads}")
        if embed_dim % num_heads:
            raise AssertionError("embed_dim must be divisible by num_heads")
        if add_bias_kv or add_zero_attn:
            raise NotImplementedError("MultiheadAttention: add_bias_kv / add_zero_attn are not supported")
        self.embed_dim, self.num_heads, self.dropout = embed_dim, num_heads, dropout
        self.kdim, self.vdim = kdim or embed_dim, vdim or embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.head_dim, self.batch_first = embed_dim // num_heads, batch_first
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(empty_persistent((3 * embed_dim, embed_dim), dtype))
            for n in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
                self.register_parameter(n, None)
        else:
            self.q_proj_weight = Parameter(empty_persistent((embed_dim, embed_dim), dtype))
            self.k_proj_weight = Parameter(empty_persistent((embed_dim, self.kdim), dtype))
            self.v_proj_weight = Parameter(empty_persistent((embed_dim, self.vdim), dtype))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(empty_persistent((3 * embed_dim,), dtype))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, dtype=dtype)
        self._reset_parameters()

    def _reset_parameters(self):
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            for w in (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
                init.xavier_uniform_(w)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)

    def _project(self, query, key, value, self_attention=False):
        e = self.embed_dim
        b = self.in_proj_bias
        bq, bk, bv = (None, None, None) if b is None else (b[:e], b[e:2 * e], b[2 * e:])
        if self._qkv_same_embed_dim:
            w = self.in_proj_weight
            if self_attention:
                # NOTE: self-attention: one product for q, k and v (one gemm each way in
                # backward instead of three, and no zero-padded gradient per weight slice)
                return F.linear(query, w, b).chunk(3, -1)
            wq, wk, wv = w[:e], w[e:2 * e], w[2 * e:]
        else:
            wq, wk, wv = self.q_proj_weight, self.k_proj_weight, self.v_proj_weight
        return F.linear(query, wq, bq), F.linear(key, wk, bk), F.linear(value, wv, bv)

    def _heads(self, x, n):
        """(L, N, E) -> (N, H, L, head_dim)."""
        return x.reshape(x.shape[0], n, self.num_heads, self.head_dim).permute(1, 2, 0, 3)

    def _mask_scores(self, scores, attn_mask, key_padding_mask, n, l, s):
        if attn_mask is not None:
            if attn_mask.ndim == 3:
                attn_mask = attn_mask.reshape(n, self.num_heads, l, s)
            if attn_mask.dtype.name == "bool":
                scores.masked_fill_(attn_mask, _NEG_INF)
            else:
                scores.add_(attn_mask)
        if key_padding_mask is not None:
            kp = key_padding_mask.reshape(n, 1, 1, s)
            if kp.dtype.name == "bool":
                scores.masked_fill_(kp, _NEG_INF)
            else:
                scores.add_(kp)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
                average_attn_weights=True, is_causal=False):
        batched = query.ndim == 3
        same = query is key and key is value
        if not batched:
            query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        elif self.batch_first:
            query, key, value = (t.transpose(0, 1) for t in (query, key, value))
        if is_causal and attn_mask is None:
            raise RuntimeError("MultiheadAttention: need attn_mask if specifying the is_causal hint")
        l, n, _ = query.shape
        s = key.shape[0]
        if query.shape[-1] != self.embed_dim:
            raise AssertionError(f"was expecting embedding dimension of {self.embed_dim}, but got "
                                 f"{query.shape[-1]}")
        q, k, v = self._project(query, key, value, same)
        q, k, v = self._heads(q * (self.head_dim ** -0.5), n), self._heads(k, n), self._heads(v, n)
        scores = matmul(q, k.transpose(-2, -1))                      # the one (N, H, L, S) tensor
        self._mask_scores(scores, attn_mask, key_padding_mask, n, l, s)
        p = softmax(scores, -1)
        pd = F.dropout(p, self.dropout, True) if self.dropout > 0.0 and self.training else p
        out = matmul(pd, v).permute(2, 0, 1, 3).reshape(l, n, self.embed_dim)
        out = self.out_proj(out)
        weights = None
        if need_weights:
            weights = p.mean(1) if average_attn_weights else p
        if not batched:
            out = out.squeeze(1)
            weights = weights.squeeze(0) if weights is not None else None
        elif self.batch_first:
            out = out.transpose(0, 1)
        return out, weights

    def extra_repr(self):
        return f"embed_dim={self.embed_dim}, num_heads={self.num_heads}"
