"""newch operations: validate input, allocate the output, call a kernel, record the backward.

Every public op is importable from here (``__all__`` gathers each module's own
``__all__``); the ones PyTorch also spells as Tensor methods are listed in each
module's ``TENSOR_METHODS`` and bound by ``methods.py``.

Where each op lives (one family per file; the file is named for what it holds):

- ``alloc.py``: allocating outputs, reading inputs (the stale check), dims and shapes.
- ``record.py``: attaching a backward to the graph (``record``, ``pack``, ``sum_to``).
- ``launch.py``: the elementwise launcher (dtype promotion, broadcasting, casts).
- ``layout.py``: strides, contiguity, dimension merging, views without copies.
- ``methods.py``: which op each Tensor method and operator calls.
- ``creation.py``: tensor, zeros, ones, full, arange, linspace, eye, ..._like.
- ``random.py``: randn, rand, randint, randperm, bernoulli, normal_, uniform_.
- ``arith.py``: + - * / // % pow, comparisons, logical and bitwise ops, maximum, minimum.
- ``unary.py``: exp, log, sqrt, sin, tanh, sigmoid, abs, floor, round, ...
- ``activation.py``: relu, silu, gelu, elu, leaky_relu, softmax, log_softmax
  (``relu_mask.py``: relu's bit-mask backward).
- ``conditional.py``: where, clamp/clip, masked_fill, lerp, addcmul, isnan/isinf/isfinite.
- ``compare.py``: isclose, allclose, equal.
- ``reduce.py``: sum, mean, var, std, prod, nansum, var_mean, std_mean, logsumexp, all, any.
- ``extrema.py``: max, min, amax, amin, argmax, argmin.
- ``norms.py``: norm, vector / matrix norms (``newch.linalg``).
- ``matrix.py``: matmul, mm, bmm; ``products.py``: addmm, outer; ``contraction.py``: einsum, baddbmm.
- ``shape.py``: reshape, view, permute, transpose, squeeze, unsqueeze, flatten, expand.
- ``convert.py``: to, clone, detach, contiguous, type_as, ``.float()``-style casts.
- ``join.py``: cat, stack, split, chunk, unbind, narrow.
- ``indexing.py``: ``x[i]``, ``x[i] = v``, select, gather, index_select, scatter_add, masked_select.
- ``rearrange.py``: flip, roll, repeat, tile, tril, triu; ``diagonal.py``: diag.
- ``ordering.py``: sort, argsort, topk; ``sets.py``: unique; ``cumulative.py``: cumsum, cumprod.
- ``sampling.py``: multinomial; ``new_like.py``: ``x.new_zeros(...)`` and friends.
- ``inplace.py``: the ``op_`` forms (add_, mul_, clamp_, fill_, copy_, ...).
- ``conv.py``, ``pool.py``, ``pad.py``: convolution, pooling, padding (``nn.functional``).
- ``normalization.py``: batch / layer / group norm; ``dropout.py``; ``loss.py``: nll.

No module shares its name with an op, so ``newch.ops.<module>`` is always the module.
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
