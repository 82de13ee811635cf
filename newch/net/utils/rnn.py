"""``nn.utils.rnn``: batches of sequences of different lengths, padded or packed.

A PackedSequence holds the steps of every sequence time-major, longest sequences first, with no
padding: ``data`` (sum of lengths, *), ``batch_sizes`` (how many sequences are still running at
each step), and the permutation that sorted the batch by length. Packing and unpacking are
``index_select`` calls, so gradients flow through them.
"""
from collections import namedtuple

import numpy as np

from ... import dtypes as D
from ...ops.alloc import check_tensor, data
from ...ops.creation import tensor
from ...ops.indexing import index_select
from ...ops.join import cat
from ...tensor import Tensor


class PackedSequence(namedtuple("PackedSequence", ["data", "batch_sizes", "sorted_indices",
                                                   "unsorted_indices"])):
    """Sequences packed time-major without padding (see the module docstring).

    Example:
        >>> p = pack_sequence([newch.tensor([1, 2, 3]), newch.tensor([4])])
        >>> p.data.tolist(), p.batch_sizes.tolist()
        ([1, 4, 2, 3], [2, 1, 1])
    """

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None and sorted_indices is not None:
            unsorted_indices = _invert(sorted_indices)
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        return self._replace(data=self.data.to(*args, **kwargs))

    @property
    def is_cuda(self):
        return False


def _long(a):
    return tensor(np.ascontiguousarray(a, dtype=np.int64), dtype=D.int64)


def _invert(perm):
    p = data(perm, "PackedSequence").reshape(-1)
    inv = np.empty_like(p)
    inv[p] = np.arange(p.shape[0])
    return _long(inv)


def _lengths(op, lengths):
    if isinstance(lengths, Tensor):
        ls = data(lengths, op).reshape(-1).astype(np.int64)
    else:
        ls = np.asarray(list(lengths), dtype=np.int64)
    return ls


def _order(lengths):
    """The sorted order (longest first, ties in batch order) and the per-step batch sizes."""
    order = np.argsort(-lengths, kind="stable")
    sizes = np.array([(lengths > t).sum() for t in range(int(lengths.max()))], np.int64) \
        if lengths.size else np.zeros(0, np.int64)
    return order, sizes


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Pack a padded batch (T, B, *) (or (B, T, *) with ``batch_first``) of sequences of ``lengths``.

    Example:
        >>> x = newch.tensor([[1, 4], [2, 0], [3, 0]])      # (T=3, B=2)
        >>> pack_padded_sequence(x, [3, 1]).data.tolist()
        [1, 4, 2, 3]
    """
    check_tensor("pack_padded_sequence", input)
    ls = _lengths("pack_padded_sequence", lengths)
    x = input.transpose(0, 1) if batch_first else input
    t_max, b = x.shape[0], x.shape[1]
    if ls.shape[0] != b:
        raise ValueError(f"pack_padded_sequence: expected {b} lengths (the batch size), got {ls.shape[0]}")
    if ls.size and (ls.min() <= 0 or ls.max() > t_max):
        raise RuntimeError(f"pack_padded_sequence: lengths must be in 1..{t_max} (the padded length), "
                           f"got {ls.tolist()}")
    if enforce_sorted and (np.diff(ls) > 0).any():
        raise RuntimeError("pack_padded_sequence: `lengths` array must be sorted in decreasing order "
                           "when `enforce_sorted` is True; pass enforce_sorted=False to pack unsorted "
                           "sequences")
    order, sizes = _order(ls)
    rows = [t * b + int(order[j]) for t in range(len(sizes)) for j in range(int(sizes[t]))]
    flat = x.reshape((t_max * b,) + tuple(x.shape[2:]))
    packed = index_select(flat, 0, _long(rows))
    if enforce_sorted:
        return PackedSequence(packed, _long(sizes), None, None)
    return PackedSequence(packed, _long(sizes), _long(order), None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Undo ``pack_padded_sequence``: (padded tensor, lengths) in the original batch order.

    Example:
        >>> p = pack_sequence([newch.tensor([1, 2]), newch.tensor([3])])
        >>> pad_packed_sequence(p, batch_first=True)[0].tolist()
        [[1, 2], [3, 0]]
    """
    packed, sizes = sequence.data, data(sequence.batch_sizes, "pad_packed_sequence").reshape(-1)
    b = int(sizes[0]) if sizes.size else 0
    t_max = len(sizes)
    if total_length is not None:
        if total_length < t_max:
            raise ValueError(f"pad_packed_sequence: total_length {total_length} is less than the "
                             f"longest sequence ({t_max})")
        t_max = total_length
    order = (data(sequence.sorted_indices, "pad_packed_sequence").reshape(-1)
             if sequence.sorted_indices is not None else np.arange(b))
    n = packed.shape[0]
    rows = np.full((t_max, b), n, np.int64)      # n: the padding row appended below
    k = 0
    for t in range(len(sizes)):
        for j in range(int(sizes[t])):
            rows[t, order[j]] = k
            k += 1
    pad = packed.new_full((1,) + tuple(packed.shape[1:]), padding_value)
    full = index_select(cat([packed, pad], 0), 0, _long(rows.reshape(-1)))
    out = full.reshape((t_max, b) + tuple(packed.shape[1:]))
    lengths = np.zeros(b, np.int64)
    for j in range(b):
        lengths[order[j]] = int((sizes > j).sum())
    return (out.transpose(0, 1) if batch_first else out), _long(lengths)


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stack tensors of shapes (L_i, *) into one (L_max, B, *) tensor (or (B, L_max, *)), padded.

    Example:
        >>> pad_sequence([newch.tensor([1, 2]), newch.tensor([3])], batch_first=True).tolist()
        [[1, 2], [3, 0]]
    """
    seqs = list(sequences)
    if not seqs:
        raise RuntimeError("pad_sequence: received an empty list of sequences")
    if padding_side not in ("right", "left"):
        raise ValueError(f"pad_sequence: padding_side must be 'left' or 'right', got {padding_side!r}")
    trail = tuple(seqs[0].shape[1:])
    for s in seqs:
        check_tensor("pad_sequence", s, "sequences")
        if tuple(s.shape[1:]) != trail:
            raise RuntimeError(f"pad_sequence: all sequences must share their trailing shape {trail}, "
                               f"got {tuple(s.shape[1:])}")
    t_max = max(s.shape[0] for s in seqs)
    parts = []
    for s in seqs:
        short = t_max - s.shape[0]
        if short:
            fill = s.new_full((short,) + trail, padding_value)
            s = cat([s, fill] if padding_side == "right" else [fill, s], 0)
        parts.append(s.unsqueeze(0 if batch_first else 1))
    return cat(parts, 0 if batch_first else 1)


def pack_sequence(sequences, enforce_sorted=True):
    """Pack a list of tensors (L_i, *) (longest first unless ``enforce_sorted=False``).

    Example:
        >>> pack_sequence([newch.tensor([1, 2]), newch.tensor([3])]).batch_sizes.tolist()
        [2, 1]
    """
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """The list of unpadded sequences of a padded batch."""
    x = padded_sequences if batch_first else padded_sequences.transpose(0, 1)
    return [x[i, :int(n)] for i, n in enumerate(_lengths("unpad_sequence", lengths))]


def unpack_sequence(packed_sequences):
    """The list of sequences in a PackedSequence, in the original batch order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
