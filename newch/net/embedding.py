"""Embedding and EmbeddingBag layers: a learnt table of vectors looked up by index."""
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter, empty_persistent
from ..graph import no_grad


def _check_pad(name, padding_idx, n):
    if padding_idx is None:
        return None
    if not -n <= padding_idx < n:
        raise ValueError(f"{name}: padding_idx {padding_idx} must be within num_embeddings ({n})")
    return padding_idx % n


class Embedding(Module):
    """A table of ``num_embeddings`` vectors of size ``embedding_dim``; ``emb(idx)`` looks them up.

    ``weight`` ~ N(0, 1) as in PyTorch; the row at ``padding_idx`` starts at zero and gets no
    gradient. ``max_norm`` rescales looked-up rows in place.

    Example:
        >>> emb = Embedding(10, 4, padding_idx=0)
        >>> emb(newch.tensor([[1, 0, 3]])).shape
        newch.Size([1, 3, 4])
    """

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, sparse=False, _weight=None, _freeze=False, device=None,
                 dtype=None):
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.padding_idx = _check_pad("Embedding", padding_idx, num_embeddings)
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        if _weight is None:
            self.weight = Parameter(empty_persistent((num_embeddings, embedding_dim), dtype),
                                    requires_grad=not _freeze)
            self.reset_parameters()
        else:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise ValueError(f"Embedding: _weight has shape {tuple(_weight.shape)}, expected "
                                 f"({num_embeddings}, {embedding_dim})")
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    def reset_parameters(self):
        """Draw weight from N(0, 1) and zero the padding row, in place."""
        init.normal_(self.weight)
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self):
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, input):
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, padding_idx=None, max_norm=None, norm_type=2.0,
                        scale_grad_by_freq=False, sparse=False):
        """An Embedding whose weight is (a persistent copy of) the 2-D ``embeddings``; frozen by default.

        Example:
            >>> Embedding.from_pretrained(newch.eye(2))(newch.tensor([1])).tolist()
            [[0.0, 1.0]]
        """
        if embeddings.ndim != 2:
            raise ValueError(f"Embedding.from_pretrained: embeddings must be 2-D, got shape "
                             f"{tuple(embeddings.shape)}")
        rows, cols = embeddings.shape
        return cls(rows, cols, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse,
                   _weight=embeddings.detach(), _freeze=freeze)

    def extra_repr(self):
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        return s


class EmbeddingBag(Module):
    """Sums, means or maxima (``mode``) of bags of embeddings, without building the per-index rows
    a user would otherwise reduce by hand.

    Example:
        >>> bag = EmbeddingBag(10, 3, mode="sum")
        >>> bag(newch.tensor([1, 2, 4, 5]), newch.tensor([0, 2])).shape
        newch.Size([2, 3])
    """

    def __init__(self, num_embeddings, embedding_dim, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, mode="mean", sparse=False, _weight=None,
                 include_last_offset=False, padding_idx=None, device=None, dtype=None):
        super().__init__()
        if mode not in ("sum", "mean", "max"):
            raise ValueError(f"EmbeddingBag: mode must be 'sum', 'mean' or 'max', got {mode!r}")
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.max_norm, self.norm_type, self.scale_grad_by_freq = max_norm, norm_type, scale_grad_by_freq
        self.mode, self.sparse, self.include_last_offset = mode, sparse, include_last_offset
        self.padding_idx = _check_pad("EmbeddingBag", padding_idx, num_embeddings)
        if _weight is None:
            self.weight = Parameter(empty_persistent((num_embeddings, embedding_dim), dtype))
            self.reset_parameters()
        else:
            self.weight = Parameter(_weight)

    def reset_parameters(self):
        """Draw weight from N(0, 1) and zero the padding row, in place."""
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, input, offsets=None, per_sample_weights=None):
        return F.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type,
                               self.scale_grad_by_freq, self.mode, self.sparse, per_sample_weights,
                               self.include_last_offset, self.padding_idx)

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, max_norm=None, norm_type=2.0,
                        scale_grad_by_freq=False, mode="mean", sparse=False, include_last_offset=False,
                        padding_idx=None):
        """An EmbeddingBag over (a persistent copy of) ``embeddings``; frozen by default."""
        rows, cols = embeddings.shape
        bag = cls(rows, cols, max_norm, norm_type, scale_grad_by_freq, mode, sparse,
                  embeddings.detach(), include_last_offset, padding_idx)
        bag.weight.requires_grad = not freeze
        return bag

    def extra_repr(self):
        return f"{self.num_embeddings}, {self.embedding_dim}, mode={self.mode!r}"
