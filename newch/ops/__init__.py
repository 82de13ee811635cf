"""newch operations: validate input, allocate the output, call a kernel, record the backward.

Every public op is importable from here; ``bind_methods`` makes the ones that
PyTorch also spells as Tensor methods (``x.sum()``, ``x + y``) methods.

Where each op lives (one family per file):

- ``alloc.py``: allocating outputs, reading inputs (the stale check), dims and shapes.
- ``record.py``: attaching a backward to the graph (``record``, ``pack``, ``sum_to``).
- ``pointwise.py``: the elementwise *launcher* (dtype promotion, broadcasting, casts).
- ``layout.py``: strides, contiguity, dimension merging, views without copies.
- ``creation.py``: tensor, zeros, ones, full, arange, linspace, eye, ..._like.
- ``random.py``: randn, rand, randint, randperm, bernoulli, normal_, uniform_.
- ``arith.py``: + - * / // % pow, comparisons, logical and bitwise ops, maximum.
- ``unary.py``: exp, log, sqrt, sin, tanh, sigmoid, abs, floor, ... (``relu.py``: relu).
- ``activation.py``: softmax, log_softmax, gelu, elu, leaky_relu.
- ``select.py``: where, clamp/clip, masked_fill, lerp, addcmul, isnan/isinf/isfinite.
- ``compare.py``: isclose, allclose, equal.
- ``reduce.py``: sum, mean, var, std, prod, nansum, var_mean, std_mean.
- ``extrema.py``: max, min, amax, amin, argmax, argmin, all, any, logsumexp.
- ``norm.py``: norm, vector / matrix norms (``newch.linalg``).
- ``matmul.py``: matmul, mm, bmm; ``products.py``: addmm, outer.
- ``shape.py``: reshape, view, permute, transpose, squeeze, expand, clone, detach, to.
- ``join.py``: cat, stack, split, chunk, unbind, narrow, select.
- ``indexing.py``: ``x[i]``, ``x[i] = v``, gather, index_select, scatter_add, masked_select.
- ``diagonal.py``: diag; ``unique.py``: unique.
- ``inplace.py``: the ``op_`` forms (add_, mul_, clamp_, fill_, copy_, ...).
- ``conv.py``, ``pool.py``, ``pad.py``: convolution, pooling, padding (``nn.functional``).
- ``normalization.py``: batch / layer / group norm; ``dropout.py``; ``loss.py``: nll.
"""
from ..tensor import Tensor as _Tensor
from .activation import *     # noqa: F401,F403  (each module's __all__ lists its public ops)
from .arith import *          # noqa: F401,F403
from .compare import *        # noqa: F401,F403
from .conditional import *    # noqa: F401,F403
from .contraction import *    # noqa: F401,F403
from .convert import *        # noqa: F401,F403
from .creation import *       # noqa: F401,F403
from .cumulative import *     # noqa: F401,F403
from .diagonal import *       # noqa: F401,F403
from .extrema import *        # noqa: F401,F403
from .indexing import *       # noqa: F401,F403
from .inplace import *        # noqa: F401,F403
from .join import *           # noqa: F401,F403
from .matrix import *         # noqa: F401,F403
from .norms import *          # noqa: F401,F403
from .ordering import *       # noqa: F401,F403
from .products import *       # noqa: F401,F403
from .random import *         # noqa: F401,F403
from .rearrange import *      # noqa: F401,F403
from .reduce import *         # noqa: F401,F403
from .sampling import *       # noqa: F401,F403
from .sets import *           # noqa: F401,F403
from .shape import *          # noqa: F401,F403
from .unary import *          # noqa: F401,F403
from . import methods as _methods

__all__ = []
for _family in _methods.FAMILIES:
    __all__ += _family.__all__
del _family

_methods.bind(_Tensor)
