"""``newch.net.utils`` (also ``newch.nn.utils``): gradient clipping and parameter vectors.

Example:
    >>> loss.backward()
    >>> total = newch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    >>> opt.step()
"""
from .clip_grad import clip_grad_norm_, clip_grad_value_, get_total_norm
from .convert_parameters import parameters_to_vector, vector_to_parameters
from . import rnn

__all__ = ["clip_grad_norm_", "clip_grad_value_", "get_total_norm", "parameters_to_vector",
           "vector_to_parameters", "rnn"]
