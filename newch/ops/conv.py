"""2-D convolution and its transpose: forward, input gradient, weight gradient.

Each pass is one kernel launch over the whole batch (``kernels/conv.py``):
the batch is cut into a few runs of samples (a number fixed by the shapes),
each run unfolds one sample at a time into its own arena scratch slot and
multiplies it with the serial blocked GEMM, out[n] (C_out, OH*OW) = W
(C_out, C*kh*kw) @ col[n]. No whole-batch column buffer exists (batch 64 of
the MNIST Net's second convolution would need 42 MiB). Groups run as a batch
of per-group products; depthwise convolutions (one input channel per group)
take a direct loop over the taps instead. The bias is added in the forward
kernel.

The weight gradient is a sum over the batch: each run adds its per-sample
products in sample order, then the runs' sums are added in run order, so the
bits depend on the shapes only, not on the thread count.

What the graph keeps: the input (for the weight gradient) and the weight (for
the input gradient), each only when the other needs a gradient.
"""

from .. import dtypes as D
from ..tensor import Tensor
from ..kernels import codes as KC
from .alloc import data, empty, kernels
from .launch import contiguous_array, launch_binary
from .record import needs_grad, pack, record

DEPTHWISE_PAR = 1 << 18    # multiply-adds of a depthwise pass at or above which it runs in parallel


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


def _geo_args(geo):
    return (geo.kh, geo.kw, geo.sh, geo.sw, geo.ph, geo.pw, geo.dh, geo.dw)


def forward_arrays(x, w, geo, out, bias=None):
    """out (N, C_out, OH, OW) = convolution of x (N, C, H, W) with w (C_out, C/G, kh, kw), plus
    bias (C_out,) when given: one kernel launch over the whole batch."""
    N, C = x.shape[:2]
    Co, G = w.shape[0], geo.groups
    OH, OW = out.shape[2], out.shape[3]
    K = kernels()
    if w.shape[1] == 1 and G == C > 1:     # depthwise: a direct loop, one launch over N x C_out planes
        b = bias if bias is not None else out.reshape(-1)[:1]
        K.depthwise_forward(x, w.reshape(Co, -1), b, out, _geo_args(geo), bias is not None,
                            out.size * geo.kh * geo.kw >= DEPTHWISE_PAR)
        return
    nslot, lay, colsz, total, par = K.conv_forward_plan(x.shape, w.shape, G, OH, OW, x.itemsize)
    dt = D.from_numpy_dtype(x.dtype)
    scratch = empty((total,), dt)
    b = bias if bias is not None else out.reshape(-1)[:1]
    K.conv_forward(x, w.reshape(G, Co // G, -1), b, out.reshape(N, Co, OH * OW), scratch._a,
                   _geo_args(geo), OH, nslot, lay, colsz, bias is not None, par)
    del scratch


def backward_arrays(x, w, g, geo, dx, dw):
    """Input gradient into dx and/or weight gradient into dw (either may be None): one kernel
    launch over the whole batch.

    x (N, C, H, W) is needed for dw, w for dx; g (N, C_out, OH, OW) C-contiguous.
    """
    N, Co, OH, OW = g.shape
    xs = dx.shape if dx is not None else x.shape
    ws = dw.shape if dw is not None else w.shape
    G = geo.groups
    K = kernels()
    if ws[1] == 1 and G == xs[1] > 1:
        par = g.size * geo.kh * geo.kw >= DEPTHWISE_PAR
        if dx is not None:
            K.depthwise_input_grad(w.reshape(Co, -1), g, dx, _geo_args(geo), par)
        if dw is not None:
            K.depthwise_weight_grad(x, g, dw.reshape(Co, -1), _geo_args(geo), par)
        return
    nslot, lw, lx, colsz, wsz, total, par = K.conv_backward_plan(xs, ws, G, OH, OW, g.itemsize)
    dt = D.from_numpy_dtype(g.dtype)
    scratch = empty((total,), dt)
    Kg = ws[1] * ws[2] * ws[3]
    if dx is not None:
        wt = empty((G, Kg, Co // G), dt)
        wt._a[...] = w.reshape(G, Co // G, Kg).transpose(0, 2, 1)
        wta = wt._a
    else:
        wt, wta = None, scratch._a[:0].reshape(G, 0, 0)   # NOTE: the kernel reads G from it
    empty4 = g.reshape(-1)[:0].reshape(0, 1, 1, 1)
    K.conv_backward(x if dw is not None else empty4, wta, g.reshape(N, Co, OH * OW),
                    dx if dx is not None else empty4,
                    dw.reshape(-1) if dw is not None else g.reshape(-1)[:0], scratch._a,
                    _geo_args(geo), OH, nslot, lw, lx, colsz, wsz, par)
    del scratch, wt


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
    fused = out._a.size and C * geo.kh * geo.kw and N     # the bias is added by the kernel
    if not fused:
        out._a[...] = 0
    else:
        keep = []
        forward_arrays(contiguous_array(x, keep), contiguous_array(w, keep), geo, out._a,
                       contiguous_array(data(bias, op), keep) if bias is not None else None)
        del keep
    if bias is not None and not fused:
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
    keep = []
    ga = contiguous_array(data(g, name), keep)
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
        keep = []
        ga = contiguous_array(data(g, name), keep)
        dx = empty(xshape, dt) if wk is not None else None
        dw = empty(wshape, dt) if xk is not None else None
        if ga.size == 0 or (dx is not None and dx._a.size == 0):
            for t in (dx, dw):
                if t is not None:
                    t._a[...] = 0
        elif dx is not None or dw is not None:
            backward_arrays(contiguous_array(data(xk, name), keep) if dw is not None else None,
                            contiguous_array(data(wk, name), keep) if dx is not None else None, ga, geo,
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
            keep = []
            backward_arrays(None, contiguous_array(w, keep), contiguous_array(x, keep), geo, out._a, None)
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
        keep = []
        ga = contiguous_array(data(g, name), keep)
        dx = dw = None
        if wk is not None:
            dx = empty(xshape, dt)
            if dx._a.size:
                forward_arrays(ga, contiguous_array(data(wk, name), keep), geo, dx._a)
        if xk is not None:
            dw = empty(wshape, dt)
            if ga.size and dw._a.size and xk.numel():
                # NOTE: for y = conv^T(x, w), dL/dw is conv's weight gradient with g as the
                # conv input and x as its output gradient.
                backward_arrays(ga, None, contiguous_array(data(xk, name), keep), geo, None, dw._a)
            else:
                dw._a[...] = 0
        return dx, dw, (bias_grad(g, name) if gb else None)
    record(out, name, (input, weight, bias), backward, saved)
