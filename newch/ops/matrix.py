"""Matrix products: matmul / @, mm, bmm (float32 and float64, through the blocked gemm kernel)."""
import numpy as np

from .. import dtypes as D
from ..graph import is_grad_enabled
from ..tensor import Tensor
from .alloc import data, empty, kernels, scratch, view_of
from .layout import broadcast_shapes, reshape_view
from .record import fresh_grad, needs_grad, pack, record, sum_to
from .launch import copy_into, launch_binary
from .reduce import _NO_CENTER_2D
from ..kernels import codes as C

__all__ = ["bmm", "matmul", "mm"]
TENSOR_METHODS = ["bmm", "matmul", "mm"]   # also bound as Tensor methods (ops/methods.py)


def _check(op, a, b):
    for name, t in (("input", a), ("other", b)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}: {name} must be a Tensor, got {type(t).__name__}")
    if a.dtype is not b.dtype:
        raise TypeError(f"{op}: expected both tensors to have the same dtype, got {a.dtype} and {b.dtype}")
    if a.dtype not in (D.float32, D.float64):
        raise TypeError(f"{op}: only float32 and float64 are supported, got {a.dtype}")


def _gemm(A, B, dtype):
    """A new (M, N) tensor A @ B for 2-D arrays A, B of any strides."""
    out = empty((A.shape[0], B.shape[1]), dtype)
    _gemm_into(A, B, out._a)
    return out


def _gemm_into(A, B, out):
    """out[:] = A @ B for 2-D arrays A, B of any strides, ``out`` C-contiguous."""
    m, k = A.shape
    n = B.shape[1]
    K = kernels()
    size = K.gemm_scratch(m, n, k)
    # NOTE: only for a kernel that packs its right operand (asks for scratch): the numpy
    # twins (no scratch) keep numpy's own order for each layout
    if size and _transpose_pays(A, B, m, n, k):
        _gemm_transposed(K, A, B, out)
        return
    if not size:        # NOTE: one-row products, the numpy twins: no arena round trip
        K.gemm(A, B, out, _no_scratch(out.dtype))
        return
    s, keep = scratch(size, out.dtype)
    K.gemm(A, B, out, s)
    del keep        # NOTE: the scratch's bytes go back to the arena after the kernel


_NO_SCRATCH = {}


def _no_scratch(np_dtype):
    """An empty scratch array of ``np_dtype`` (one per dtype, never written)."""
    s = _NO_SCRATCH.get(np_dtype.char)
    if s is None:
        s = _NO_SCRATCH[np_dtype.char] = np.empty(0, np_dtype)
    return s


def _transpose_pays(A, B, m, n, k):
    """True when ``A @ B`` is cheaper as ``(B.T @ A.T).T``: ``x @ w.T`` with few rows in x.

    The kernel reads its left operand in place when k is that operand's contiguous axis and
    packs the right one (k x n elements) into scratch. For ``x @ w.T`` (x and w C-contiguous,
    a linear layer's forward) ``w.T`` is the big operand to pack; ``w @ x.T`` reads w in place
    and packs ``x.T`` (k x m), writing its (n, m) product transposed into ``out``. Shapes and
    strides only; the bits are the same (every element is the same FMA chain over k, in order).
    """
    if k * n < _TRANSPOSE_MIN or m < 2 or k * n < 2 * (k * m + m * n):
        return False
    size = A.itemsize
    return (A.strides[1] == size and B.strides[0] == size and B.strides[1] % size == 0
            and A.strides[0] % size == 0)


_TRANSPOSE_MIN = 1 << 15    # packed elements saved below which the other route is not worth it


def _gemm_transposed(K, A, B, out):
    """out[:] = (B.T @ A.T).T: the kernel writes the (n, m) product through ``out.T``."""
    m, k = A.shape
    n = B.shape[1]
    s, keep = scratch(K.gemm_scratch(n, m, k), out.dtype)
    K.gemm(B.T, A.T, out.T, s)
    del keep        # NOTE: the scratch's bytes go back to the arena after the kernel


def _bgemm(A, B, batch, dtype):
    """A new (*batch, M, N) tensor for 3-D-viewable A (bs, M, K) and B (bs, K, N)."""
    bs, m, k = A.shape
    n = B.shape[2]
    out = empty((bs, m, n), dtype)
    K = kernels()
    scratch = empty((K.bgemm_scratch(bs, m, n, k),), dtype)
    K.bgemm(A, B, out._a, scratch._a)
    return out.reshape(tuple(batch) + (m, n))


def mm(input, mat2):
    """Product of two matrices: (n, m) @ (m, p) -> (n, p)."""
    _check("mm", input, mat2)
    if input.ndim != 2 or mat2.ndim != 2:
        raise ValueError(f"mm: expected 2-D tensors, got shapes {tuple(input.shape)} and "
                         f"{tuple(mat2.shape)}")
    return matmul(input, mat2, _op="mm")


def bmm(input, mat2):
    """Batched product: (b, n, m) @ (b, m, p) -> (b, n, p)."""
    _check("bmm", input, mat2)
    if input.ndim != 3 or mat2.ndim != 3 or input.shape[0] != mat2.shape[0]:
        raise ValueError(f"bmm: expected 3-D tensors with equal batch size, got shapes "
                         f"{tuple(input.shape)} and {tuple(mat2.shape)}")
    return matmul(input, mat2, _op="bmm")


def matmul(input, other, *, _op="matmul"):
    """Matrix product with numpy/PyTorch rules: 1-D operands are promoted, batch dims broadcast."""
    _check(_op, input, other)
    a, b = data(input, _op), data(other, _op)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(f"{_op}: both arguments need at least 1 dim, got shapes "
                         f"{tuple(a.shape)} and {tuple(b.shape)}")
    A = a.reshape(1, -1) if a.ndim == 1 else a
    B = b.reshape(-1, 1) if b.ndim == 1 else b
    if A.shape[-1] != B.shape[-2]:
        raise ValueError(f"{_op}: shapes {tuple(a.shape)} and {tuple(b.shape)} cannot be "
                         f"multiplied ({A.shape[-1]} != {B.shape[-2]})")
    if A.ndim == 2 and B.ndim == 2:
        out = _gemm(A, B, input.dtype)
    else:
        batch = broadcast_shapes(_op, A.shape[:-2], B.shape[:-2])
        A3, keep_a = _batch_view(A, batch)
        B3, keep_b = _batch_view(B, batch)
        out = _bgemm(A3, B3, batch, input.dtype)
        del keep_a, keep_b
    shape = tuple(out.shape)
    if a.ndim == 1:
        shape = shape[:-2] + shape[-1:]
    if b.ndim == 1:
        shape = shape[:-1]
    if shape != tuple(out.shape):
        out = out.reshape(shape)
    if needs_grad(input, other):
        _record_matmul(out, input, other)
    return out


def _batch_view(X, batch):
    """(X broadcast to ``batch`` leading dims viewed as (prod(batch), r, c), keep-alive).

    The keep-alive is the arena tensor holding a copy when strides forbid a view: the
    array must not outlive it (its memory goes back to the arena when it is dropped).
    """
    import numpy as np
    full = np.broadcast_to(X, tuple(batch) + X.shape[-2:])
    bs = int(np.prod(batch)) if batch else 1
    v = reshape_view(full, (bs,) + X.shape[-2:])
    if v is not None:
        return v, None
    tmp = empty(full.shape, D.from_numpy_dtype(X.dtype))
    copy_into(full, tmp._a)
    return tmp._a.reshape((bs,) + X.shape[-2:]), tmp


def _transposed(t):
    """True when 2-D ``t`` is the transpose of a C-contiguous matrix (``w.t()``, ``w.T``)."""
    a = t._a
    if a.ndim != 2 or a.shape[0] < 2 or a.shape[1] < 2:
        return False
    return a.strides[0] == a.itemsize and a.strides[1] == a.shape[0] * a.itemsize


def _record_matmul(out, input, other):
    sa, sb = input.shape, other.shape
    ga, gb = input._rg, other._rg
    # NOTE: a gradient takes the layout of its operand, as in PyTorch: for ``x @ w.t()`` the
    # gemm writes w's gradient as a C-contiguous (out, in) matrix and passes its transpose
    # view, so the gradient reaching ``w`` is contiguous (no transposing copy into .grad).
    # The gemm folds each element over k in order whatever the operands' layout: the
    # bits are the same either way.
    ta = ga and len(sa) == 2 and len(sb) == 2 and _transposed(input)
    tb = gb and len(sa) == 2 and len(sb) == 2 and _transposed(other)
    saved, restore = pack(input if gb else None, other if ga else None)

    mm = len(sa) == 2 and len(sb) == 2

    def backward(g, *s):
        a, b = restore(*s)     # NOTE: each only when the other side needs its gradient
        if mm and not is_grad_enabled():
            return _mm_grads(g, a, b, ta, tb)
        gg = g
        if len(sb) == 1:       # NOTE: this one first: for 1-D @ 1-D, g is 0-d
            gg = gg.unsqueeze(-1)
        if len(sa) == 1:
            gg = gg.unsqueeze(-2)
        da = db = None
        if ta:
            da = matmul(b, gg.t()).t()
        elif ga:
            b = b.unsqueeze(-1) if len(sb) == 1 else b
            da = sum_to(matmul(gg, b.transpose(-1, -2)), (1,) + tuple(sa) if len(sa) == 1 else sa)
            da = da.reshape(sa)
        if tb:
            db = matmul(gg.t(), a).t()
        elif gb:
            a = a.unsqueeze(0) if len(sa) == 1 else a
            db = sum_to(matmul(a.transpose(-1, -2), gg), tuple(sb) + (1,) if len(sb) == 1 else sb)
            db = db.reshape(sb)
        return da, db
    record(out, "MmBackward0" if input.ndim == 2 and other.ndim == 2 else "MatmulBackward0",
           (input, other), backward, saved)


def _mm_grads(g, a, b, ta, tb):
    """The gradients of a 2-D ``a @ b`` for ``g`` without recording a graph (no create_graph):
    gemms straight on the arrays, transposes as numpy views (no transpose op, no node).

    ``a`` / ``b`` are None when the other side needs no gradient; ``ta`` / ``tb`` ask for
    that gradient in transposed layout (see ``_record_matmul``).
    """
    G = data(g, "MmBackward0")
    da = db = None
    if b is not None:
        B = data(b, "MmBackward0")
        if ta:
            t = _gemm(B, G.T, g.dtype)
            da = view_of(t, t._a.T)
        else:
            da = _gemm(G, B.T, g.dtype)
    if a is not None:
        A = data(a, "MmBackward0")
        if tb:
            t = _gemm(G.T, A, g.dtype)
            db = view_of(t, t._a.T)
        else:
            db = _gemm(A.T, G, g.dtype)
    return da, db


def linear_2d(input, weight, bias=None):
    """``input @ weight.T + bias`` for a 2-D input and weight, recorded as one graph node.

    What ``F.linear`` computes for a batch of vectors, without the transpose, matmul and add
    nodes of the composed form: the gemm reads ``weight`` through its strides, the bias is
    added in place into the product (the kernel ``add`` uses: the same bits), and backward
    is two gemms and a column sum. The caller checked shapes and dtypes; ``bias`` is None or
    a 1-D tensor of ``weight.shape[0]`` elements.

    Example:
        >>> linear_2d(newch.ones(2, 3), newch.ones(4, 3), newch.zeros(4)).tolist()[0]
        [3.0, 3.0, 3.0, 3.0]
    """
    _check("linear", input, weight)
    x, w = data(input, "linear"), data(weight, "linear")
    out = _gemm(x, w.T, input.dtype)
    if bias is not None:
        _add_bias(out._a, data(bias, "linear"))
    if needs_grad(input, weight, bias):
        _record_linear(out, input, weight, bias)
    return out


def _add_bias(o, b):
    """o += b on every row of the fresh C-contiguous (m, n) product ``o``: the row-broadcast
    add ``launch_binary`` makes of it (the same kernel, the same bits), without working out
    the broadcast layout for a contiguous bias."""
    m, n = o.shape
    if n < 2 or b.ndim != 1 or b.strides[0] != b.itemsize or b.dtype != o.dtype:
        launch_binary(C.ADD, o, b, o)
        return
    if m == 1:          # NOTE: batch 1: a flat add of two rows (the same element op, bits)
        o1 = o.reshape(n)
        kernels().binary(C.ADD, o1, b, o1)
        return
    o4 = o.reshape(1, 1, m, n)
    kernels().binary_nd(C.ADD, o4, np.ndarray((1, 1, m, n), b.dtype, b, 0, (0, 0, 0, b.itemsize)),
                        o4)


def _record_linear(out, input, weight, bias):
    gx, gw = input._rg, weight._rg
    gb = bias is not None and bias._rg
    n = weight.shape[0]

    def backward(g, *s):
        it = iter(s)            # NOTE: x saved when w needs its gradient, w when x does
        x, w = next(it) if gw else None, next(it) if gx else None
        if is_grad_enabled():        # NOTE: create_graph: differentiable ops
            dx = matmul(g, w) if gx else None
            dw = matmul(g.t(), x) if gw else None
            return dx, dw, (sum_to(g, (n,)) if gb else None)
        G = data(g, "AddmmBackward0")
        dx = _gemm(G, data(w, "AddmmBackward0"), g.dtype) if gx else None
        dw = _weight_grad(G, data(x, "AddmmBackward0"), weight, g.dtype) if gw else None
        return dx, dw, (_bias_grad(G, bias, g.dtype) if gb else None)
    saved = ([input] if gw else []) + ([weight] if gx else [])
    record(out, "AddmmBackward0" if bias is not None else "MmBackward0",
           (input, weight, bias), backward, saved)


def _weight_grad(G, X, weight, dtype):
    """``G.T @ X``, the weight's gradient: written straight into a new ``.grad`` when the
    engine allows (``fresh_grad``; None is returned then), else a new temporary."""
    into = fresh_grad(weight)
    if into is None:
        return _gemm(G.T, X, dtype)
    _gemm_into(G.T, X, into._a)
    weight.grad = into
    return None


def _bias_grad(G, bias, dtype):
    """The bias's gradient, ``G`` summed over the batch (the kernel and order of
    ``reduce(SUM, g, (0,))``, as ``sum_to`` uses): into a new ``.grad`` as ``_weight_grad``."""
    into = fresh_grad(bias)
    out = into if into is not None else empty((G.shape[1],), dtype)
    kernels().reduce_3d(C.SUM, G[None], _NO_CENTER_2D, out._a[None])
    if into is None:
        return out
    bias.grad = into
    return None
