"""2-D convolution and its transpose: forward, input gradient, weight gradient.

Each is a matrix product per sample through the blocked ``bgemm`` kernel on
columns unfolded by ``im2col``: out[s] (C_out, OH*OW) = W (C_out, C*kh*kw) @
col[s]. Only a chunk of samples is unfolded at a time, into arena scratch of
about ``COL_BYTES``, so no whole-batch column buffer exists (batch 64 of the
MNIST Net's second convolution would need 42 MiB). Groups run as a batch of
per-group products.

The weight gradient is a sum over the batch: each sample's product lands in a
partial, and the partials are added in sample order (``fold_sum``), so the bits
depend on the shapes only, not on the chunking or the thread count.

What the graph keeps: the input (for the weight gradient) and the weight (for
the input gradient), each only when the other needs a gradient.
"""
import numpy as np

from .. import dtypes as D
from ..tensor import Tensor
from ..kernels import codes as KC
from .alloc import data, empty, kernels
from .launch import launch_binary
from .record import needs_grad, pack, record

# Target size of one chunk of unfolded columns (the matrix kernel packs a copy of the same
# size). Forward can take more (fewer kernel launches): the backward of a layer also holds the
# output gradient and the input gradient, so its chunks are smaller.
COL_BYTES = 1 << 21
COL_BYTES_FORWARD = 1 << 22


class Geometry:
    """Kernel size, stride, padding, dilation and groups of one convolution (all ints)."""
    __slots__ = ("kh", "kw", "sh", "sw", "ph", "pw", "dh", "dw", "groups")

    def __init__(self, kernel, stride, padding, dilation, groups):
        self.kh, self.kw = kernel
        self.sh, self.sw = stride
        self.ph, self.pw = padding
        self.dh, self.dw = dilation
        self.groups = groups

    def out_size(self, H, W):
        """(OH, OW) of the convolution of an H x W image."""
        return ((H + 2 * self.ph - self.dh * (self.kh - 1) - 1) // self.sh + 1,
                (W + 2 * self.pw - self.dw * (self.kw - 1) - 1) // self.sw + 1)

    def args(self):
        return (self.kh, self.kw, self.sh, self.sw, self.ph, self.pw, self.dh, self.dw)


def _contiguous(a):
    return a if a.flags.c_contiguous else np.ascontiguousarray(a)


def _chunk(N, C, OH, OW, geo, itemsize, budget=COL_BYTES):
    """Samples unfolded at once: as many as fit in ``budget`` bytes, at least one."""
    per = C * geo.kh * geo.kw * OH * OW * itemsize
    return max(1, min(N, budget // max(per, 1)))


class _Products:
    """The per-chunk matrix products with one scratch buffer sized for the largest."""

    def __init__(self, dtype, shapes):
        self.K = kernels()
        n = max([self.K.bgemm_scratch(*s) for s in shapes] + [0])
        self.scratch = empty((n,), dtype)

    def __call__(self, a, b, out):
        self.K.bgemm(a, b, out, self.scratch._a)


def _per_group(a, G):
    """(S, G*r, c) array -> list of S arrays (G, r, c): one batched product per sample."""
    return [a[s].reshape(G, a.shape[1] // G, a.shape[2]) for s in range(a.shape[0])]


def forward_arrays(x, w, geo, out):
    """out (N, C_out, OH, OW) = convolution of x (N, C, H, W) with w (C_out, C/G, kh, kw)."""
    N, C, H, W = x.shape
    Co, G = w.shape[0], geo.groups
    OH, OW = out.shape[2], out.shape[3]
    L, Kg = OH * OW, w.shape[1] * geo.kh * geo.kw
    S = _chunk(N, C, OH, OW, geo, x.itemsize, COL_BYTES_FORWARD)
    K = kernels()
    col = empty((S, C * geo.kh * geo.kw, L), D.from_numpy_dtype(x.dtype))
    w3 = w.reshape(G, Co // G, Kg)
    gemm = _Products(col.dtype, [(S, Co, L, Kg)] if G == 1 else [(G, Co // G, L, Kg)])
    o3 = out.reshape(N, Co, L)
    for n0 in range(0, N, S):
        s = min(S, N - n0)
        c = col._a[:s]
        K.im2col(x[n0:n0 + s], c, *geo.args(), OH)
        if G == 1:
            gemm(np.broadcast_to(w3, (s, Co, Kg)), c, o3[n0:n0 + s])
        else:
            for ci, oi in zip(_per_group(c, G), _per_group(o3[n0:n0 + s], G)):
                gemm(w3, ci, oi)
    del col


def backward_arrays(x, w, g, geo, dx, dw):
    """Input gradient into dx and/or weight gradient into dw (either may be None).

    x (N, C, H, W) is needed for dw, w for dx; g (N, C_out, OH, OW) C-contiguous.
    """
    N, Co, OH, OW = g.shape
    C, H, W = dx.shape[1:] if dx is not None else x.shape[1:]
    G = geo.groups
    L, Kg, Cg = OH * OW, (C // G) * geo.kh * geo.kw, Co // G
    S = _chunk(N, C, OH, OW, geo, g.itemsize)
    K = kernels()
    dt = D.from_numpy_dtype(g.dtype)
    col = empty((S, C * geo.kh * geo.kw, L), dt)
    parts = empty((S, Co * Kg), dt) if dw is not None else None
    shapes = [(S, Co, Kg, L), (S, G * Kg, L, Cg)] if G == 1 else [(G, Cg, Kg, L), (G, Kg, L, Cg)]
    gemm = _Products(dt, shapes)
    g3 = g.reshape(N, Co, L)
    wt = w.reshape(G, Cg, Kg).transpose(0, 2, 1) if dx is not None else None
    for n0 in range(0, N, S):
        s = min(S, N - n0)
        c, gs = col._a[:s], g3[n0:n0 + s]
        if dw is not None:
            K.im2col(x[n0:n0 + s], c, *geo.args(), OH)
            p = parts._a[:s]
            if G == 1:
                gemm(gs, c.transpose(0, 2, 1), p.reshape(s, Co, Kg))
            else:
                for i in range(s):
                    gemm(gs[i].reshape(G, Cg, L), c[i].reshape(G, Kg, L).transpose(0, 2, 1),
                         p[i].reshape(G, Cg, Kg))
            K.fold_sum(p, dw.reshape(-1), n0 > 0)
        if dx is not None:
            if G == 1:
                gemm(np.broadcast_to(wt[0], (s, Kg, Co)), gs, c)
            else:
                for i in range(s):
                    gemm(wt, gs[i].reshape(G, Cg, L), c[i].reshape(G, Kg, L))
            K.col2im(c, dx[n0:n0 + s], *geo.args(), OH)
    del col, parts


def conv2d_core(op, input, weight, bias, geo):
    """Validated 4-D convolution with autograd: the engine behind conv1d/conv2d."""
    x, w = data(input, op), data(weight, op)
    N, C, H, W = x.shape
    OH, OW = geo.out_size(H, W)
    if OH <= 0 or OW <= 0:
        raise ValueError(f"{op}: input of spatial size ({H}, {W}) (padded by ({geo.ph}, {geo.pw})) is "
                         f"smaller than the dilated kernel ({geo.dh * (geo.kh - 1) + 1}, "
                         f"{geo.dw * (geo.kw - 1) + 1})")
    out = empty((N, w.shape[0], OH, OW), input.dtype)
    if out._a.size:
        if C * geo.kh * geo.kw == 0 or N == 0:
            out._a[...] = 0
        else:
            forward_arrays(_contiguous(x), _contiguous(w), geo, out._a)
    if bias is not None:
        launch_binary(KC.ADD, out._a, data(bias, op).reshape(1, -1, 1, 1), out._a)
    if needs_grad(input, weight, bias):
        _record_conv(out, input, weight, bias, geo)
    return out


def refuse_create_graph(name, g):
    """The gradient kernels record no graph: refuse create_graph=True rather than return zeros."""
    if needs_grad(g):
        raise RuntimeError(f"{name}: double backward (create_graph=True through convolution or "
                           f"pooling) is not supported by newch")


def bias_grad(g, name):
    """Sum of g (N, C, H, W) over all but the channel dim, in a fixed order (float64 sums)."""
    ga = _contiguous(data(g, name))
    out = empty((ga.shape[1],), g.dtype)
    if ga.size == 0:
        out._a[...] = 0
        return out
    kernels().channel_sum(ga.reshape(ga.shape[0], ga.shape[1], -1), out._a)
    return out


def _kept(input, weight, bias):
    """(input if the weight needs its gradient, weight if the input does, shapes, dtype, bias flag).

    Backward closures hold only these: an input the weight gradient does not need dies at once.
    """
    gx, gw = input._rg, weight._rg
    return (input if gw else None, weight if gx else None, tuple(input.shape), tuple(weight.shape),
            input.dtype, isinstance(bias, Tensor) and bias._rg)


def _record_conv(out, input, weight, bias, geo):
    name = "ConvolutionBackward0"
    xk, wk, xshape, wshape, dt, gb = _kept(input, weight, bias)
    saved, restore = pack(xk, wk)
    del xk, wk      # NOTE: the closure must not hold them: they come back checked, as arguments

    def backward(g, *s):
        xk, wk = restore(*s)
        refuse_create_graph(name, g)
        ga = _contiguous(data(g, name))
        dx = empty(xshape, dt) if wk is not None else None
        dw = empty(wshape, dt) if xk is not None else None
        if ga.size == 0 or (dx is not None and dx._a.size == 0):
            for t in (dx, dw):
                if t is not None:
                    t._a[...] = 0
        elif dx is not None or dw is not None:
            backward_arrays(_contiguous(data(xk, name)) if dw is not None else None,
                            _contiguous(data(wk, name)) if dx is not None else None, ga, geo,
                            dx._a if dx is not None else None, dw._a if dw is not None else None)
        return dx, dw, (bias_grad(g, name) if gb else None)
    record(out, name, (input, weight, bias), backward, saved)


def conv_transpose2d_core(op, input, weight, bias, geo, out_hw):
    """Transposed convolution (the input gradient of conv2d) with autograd.

    input (N, C_in, H, W), weight (C_in, C_out/G, kh, kw); out (N, C_out, *out_hw).
    """
    x, w = data(input, op), data(weight, op)
    N = x.shape[0]
    G = geo.groups
    Co = w.shape[1] * G
    out = empty((N, Co) + tuple(out_hw), input.dtype)
    if out._a.size:
        if x.size == 0:
            out._a[...] = 0
        else:
            backward_arrays(None, _contiguous(w), _contiguous(x), geo, out._a, None)
    if bias is not None:
        launch_binary(KC.ADD, out._a, data(bias, op).reshape(1, -1, 1, 1), out._a)
    if needs_grad(input, weight, bias):
        _record_transpose(out, input, weight, bias, geo)
    return out


def _record_transpose(out, input, weight, bias, geo):
    name = "ConvolutionBackward0"
    xk, wk, xshape, wshape, dt, gb = _kept(input, weight, bias)
    saved, restore = pack(xk, wk)
    del xk, wk      # NOTE: the closure must not hold them: they come back checked, as arguments

    def backward(g, *s):
        xk, wk = restore(*s)
        refuse_create_graph(name, g)
        ga = _contiguous(data(g, name))
        dx = dw = None
        if wk is not None:
            dx = empty(xshape, dt)
            if dx._a.size:
                forward_arrays(ga, _contiguous(data(wk, name)), geo, dx._a)
        if xk is not None:
            dw = empty(wshape, dt)
            if ga.size and dw._a.size and xk.numel():
                # NOTE: for y = conv^T(x, w), dL/dw is conv's weight gradient with g as the
                # conv input and x as its output gradient.
                backward_arrays(ga, None, _contiguous(data(xk, name)), geo, None, dw._a)
            else:
                dw._a[...] = 0
        return dx, dw, (bias_grad(g, name) if gb else None)
    record(out, name, (input, weight, bias), backward, saved)
