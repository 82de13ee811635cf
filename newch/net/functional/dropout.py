"""Functional dropout: ``F.dropout``, ``F.dropout1d``, ``F.dropout2d`` (PyTorch's signatures).

Masks come from the context's random generator (``newch.manual_seed``): the
same seed gives the same masks on any thread count. Outside training (or with
``p=0``) the input is returned as it is.
"""
import warnings

from ...ops import dropout as _drop


def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability ``p`` and scale the rest by 1 / (1 - p).

    Example:
        >>> dropout(newch.ones(3), 0.5, training=False).tolist()
        [1.0, 1.0, 1.0]
    """
    return _drop.dropout(input, p, training, inplace)


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of ``input`` (N, C, L) or (C, L) with probability ``p``.

    Example:
        >>> dropout1d(newch.ones(2, 3), 0.0).tolist()
        [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]
    """
    if getattr(input, "ndim", None) not in (2, 3):
        _drop._check_p("dropout1d", p)
        raise RuntimeError(f"dropout1d: expected a 2-D (C, L) or 3-D (N, C, L) input, got "
                           f"shape {tuple(getattr(input, 'shape', ()))}")
    return _drop.feature_dropout("dropout1d", input, p, training, inplace,
                                 1 if input.ndim == 2 else 2)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of ``input`` (N, C, H, W) with probability ``p``.

    A 3-D input is taken as (N, C, L), with PyTorch's warning.

    Example:
        >>> dropout2d(newch.ones(1, 2, 2, 2), 0.5, training=False).shape
        newch.Size([1, 2, 2, 2])
    """
    ndim = getattr(input, "ndim", None)
    if ndim == 3:
        warnings.warn("dropout2d: received a 3-D input; it is taken as (N, C, L) and whole "
                      "channels of it are dropped (dropout1d's behaviour). Use dropout1d for that, "
                      "or add the batch dim for one (C, H, W) sample", UserWarning, stacklevel=2)
    elif ndim is not None and ndim != 4:
        warnings.warn(f"dropout2d: received a {ndim}-D input; dropout2d expects (N, C, H, W) "
                      f"(3-D or 4-D); channels (dim 1) are dropped", UserWarning, stacklevel=2)
    return _drop.feature_dropout("dropout2d", input, p, training, inplace, 2)
