"""In-place ops write into self's memory with no temporary, give the bits of their out-of-place
twin, accept an operand that is self, and refuse partial overlaps, expanded and read-only targets."""
import numpy as np
import pytest

import newch
import newch.net.functional as F

N = 1 << 20      # 1M floats: above the kernels' serial threshold, so the parallel path runs

# name -> (in-place call, out-of-place twin); both take (tensor, operand tensor)
OPS = {
    "add_ scalar": (lambda x, y: x.add_(1.5), lambda x, y: x + 1.5),
    "add_ tensor": (lambda x, y: x.add_(y), lambda x, y: x + y),
    "add_ alpha": (lambda x, y: x.add_(y, alpha=-0.3), lambda x, y: newch.add(x, y, alpha=-0.3)),
    "add_ scalar alpha": (lambda x, y: x.add_(2.0, alpha=3), lambda x, y: x + 6.0),
    "add_ 0-d tensor": (lambda x, y: x.add_(y.sum()), lambda x, y: x + y.sum()),
    "add_ broadcast row": (lambda x, y: x.add_(y[0] if y.ndim else y),
                           lambda x, y: x + (y[0] if y.ndim else y)),
    "sub_ tensor": (lambda x, y: x.sub_(y), lambda x, y: x - y),
    "sub_ alpha": (lambda x, y: x.sub_(y, alpha=0.7), lambda x, y: newch.sub(x, y, alpha=0.7)),
    "mul_ scalar": (lambda x, y: x.mul_(0.9), lambda x, y: x * 0.9),
    "mul_ tensor": (lambda x, y: x.mul_(y), lambda x, y: x * y),
    "div_ tensor": (lambda x, y: x.div_(y), lambda x, y: x / y),
    "div_ int scalar": (lambda x, y: x.div_(3), lambda x, y: x / 3),
    "pow_ scalar": (lambda x, y: x.pow_(2), lambda x, y: x ** 2),
    "remainder_": (lambda x, y: x.remainder_(0.7), lambda x, y: x % 0.7),
    "clamp_": (lambda x, y: x.clamp_(-0.5, 0.5), lambda x, y: x.clamp(-0.5, 0.5)),
    "clamp_ min kw": (lambda x, y: x.clamp_(min=0.1), lambda x, y: x.clamp(min=0.1)),
    "clamp_min_": (lambda x, y: x.clamp_min_(0.0), lambda x, y: x.clamp_min(0.0)),
    "clamp_max_": (lambda x, y: x.clamp_max_(0.2), lambda x, y: x.clamp_max(0.2)),
    "neg_": (lambda x, y: x.neg_(), lambda x, y: -x),
    "abs_": (lambda x, y: x.abs_(), lambda x, y: x.abs()),
    "exp_": (lambda x, y: x.exp_(), lambda x, y: x.exp()),
    "log_": (lambda x, y: x.abs_().log_(), lambda x, y: x.abs().log()),
    "sqrt_": (lambda x, y: x.abs_().sqrt_(), lambda x, y: x.abs().sqrt()),
    "sigmoid_": (lambda x, y: x.sigmoid_(), lambda x, y: x.sigmoid()),
    "tanh_": (lambda x, y: x.tanh_(), lambda x, y: x.tanh()),
    "relu_": (lambda x, y: x.relu_(), lambda x, y: x.relu()),
    "F.relu inplace": (lambda x, y: F.relu(x, inplace=True), lambda x, y: F.relu(x)),
    "floor_": (lambda x, y: x.floor_(), lambda x, y: x.floor()),
    "round_": (lambda x, y: x.round_(), lambda x, y: x.round()),
    "round_ decimals": (lambda x, y: x.round_(decimals=1), lambda x, y: x.round(decimals=1)),
    "addcmul_": (lambda x, y: x.addcmul_(y, y, value=0.5), lambda x, y: x.addcmul(y, y, value=0.5)),
    "lerp_": (lambda x, y: x.lerp_(y, 0.25), lambda x, y: x.lerp(y, 0.25)),
    "lerp_ self": (lambda x, y: x.lerp_(x, 0.25), lambda x, y: x.lerp(x, 0.25)),
    "addcdiv_": (lambda x, y: x.addcdiv_(x, y, value=-0.1), lambda x, y: x.addcdiv(x, y, value=-0.1)),
    "addcmul_ broadcast": (lambda x, y: x.addcmul_(y[0] if y.ndim else y, y, value=3),
                           lambda x, y: x.addcmul(y[0] if y.ndim else y, y, value=3)),
}

LAYOUTS = {
    "contiguous": lambda t: t,
    "row slice": lambda t: t[:, :700],       # rows contiguous, outer stride larger
    "transposed": lambda t: t.T,             # not row-contiguous: computed through the twin
    "0-d": lambda t: t[3, 5],
}


def _pair(dtype=newch.float32):
    rng = np.random.default_rng(7)
    a = rng.standard_normal((1024, 1024)).astype(dtype.np) + 0.01
    b = rng.standard_normal((1024, 1024)).astype(dtype.np) + 2.0
    return a, b


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("name", sorted(OPS))
def test_in_place_gives_the_bits_of_the_out_of_place_op(name, layout):
    a, b = _pair()
    inplace, twin = OPS[name]
    view = LAYOUTS[layout]
    x, y = newch.tensor(a), newch.tensor(b)
    want = twin(view(newch.tensor(a)), view(y)).numpy()
    xv = view(x)
    out = inplace(xv, view(y))
    assert out is xv
    np.testing.assert_array_equal(xv.numpy(), want)
    # the rest of x is untouched
    mask = np.ones(a.shape, bool)
    mask[(slice(None), slice(0, 700)) if layout == "row slice" else
         (3, 5) if layout == "0-d" else ...] = False
    np.testing.assert_array_equal(x.numpy()[mask], a[mask])


@pytest.mark.parametrize("dtype", [newch.float64, newch.int64, newch.int32])
@pytest.mark.parametrize("name", ["add_ tensor", "add_ scalar alpha", "mul_ scalar", "neg_", "abs_",
                                  "relu_", "clamp_", "sub_ tensor", "floor_", "round_",
                                  "mul_ tensor", "add_ 0-d tensor", "add_ broadcast row"])
def test_other_dtypes_match_the_out_of_place_op(name, dtype):
    a, b = _pair(dtype if dtype.is_floating_point else newch.float64)
    a, b = (a * 10).astype(dtype.np), (b * 10).astype(dtype.np)
    inplace, twin = OPS[name]
    if name == "clamp_" and not dtype.is_floating_point:
        inplace, twin = (lambda x, y: x.clamp_(-5, 5)), (lambda x, y: x.clamp(-5, 5))
    if name == "mul_ scalar" and not dtype.is_floating_point:
        inplace, twin = (lambda x, y: x.mul_(3)), (lambda x, y: x * 3)
    if name == "add_ scalar alpha" and not dtype.is_floating_point:
        inplace, twin = (lambda x, y: x.add_(2, alpha=3)), (lambda x, y: x + 6)
    x = newch.tensor(a)
    want = twin(newch.tensor(a), newch.tensor(b)).numpy()
    inplace(x, newch.tensor(b))
    np.testing.assert_array_equal(x.numpy(), want)


def test_integer_in_place_wraps_like_the_twin_and_refuses_what_it_refuses():
    x = newch.tensor([250, 3], dtype=newch.uint8)
    x.add_(10)
    assert x.tolist() == [4, 13]
    x.sub_(-1)                                   # -1 wraps to 255 in uint8, as in PyTorch
    assert x.tolist() == (newch.tensor([4, 13], dtype=newch.uint8) - (-1)).tolist()
    y = newch.tensor([1, 2], dtype=newch.int64)
    for bad in (lambda: y.add_(0.5), lambda: y.add_(1, alpha=0.5), lambda: y.div_(2),
                lambda: y.exp_(), lambda: y.add_(newch.ones(2))):
        with pytest.raises((TypeError, RuntimeError)):
            bad()
    assert y.tolist() == [1, 2]


def test_clamp_argument_errors_are_the_twins():
    x = newch.zeros(3)
    with pytest.raises(TypeError):
        x.clamp_(0.0, min=1.0)
    with pytest.raises(ValueError):
        x.clamp_()
    with pytest.raises(TypeError):
        x.clamp_min_(0.0, 1.0)


@pytest.mark.parametrize("op", ["add_", "sub_", "mul_", "div_"])
def test_operand_that_is_self_is_exact_aliasing_and_allowed(op):
    a, _ = _pair()
    x = newch.tensor(a)
    want = getattr(np, {"add_": "add", "sub_": "subtract", "mul_": "multiply",
                        "div_": "divide"}[op])(a, a)
    getattr(x, op)(x)
    np.testing.assert_array_equal(x.numpy(), want)
    y = newch.tensor(a)
    getattr(y[:, :10], op)(y[:, :10])       # the same strided view, seen through two tensors
    np.testing.assert_array_equal(y.numpy()[:, :10], want[:, :10])


PARTIAL = {
    "shifted": lambda x: x[1:].add_(x[:-1]),
    "shifted back": lambda x: x[:-1].mul_(x[1:]),
    "transpose": lambda x: x.reshape(1024, 1024).add_(x.reshape(1024, 1024).T),
    "broadcast row of self": lambda x: x.reshape(1024, 1024).add_(x.reshape(1024, 1024)[0]),
    "clamp bound": lambda x: x[1:].clamp_(min=x[:-1]),
    "addcmul operand": lambda x: x[1:].addcmul_(x[:-1], x[1:]),
    "lerp end": lambda x: x[1:].lerp_(x[:-1], 0.5),
    "unary through alpha add": lambda x: x[2:].sub_(x[:-2], alpha=2.0),
    "sub_": lambda x: x[1:].sub_(x[:-1]),
    "div_": lambda x: x[1:].div_(x[:-1]),
    "pow_": lambda x: x[1:].pow_(x[:-1]),
    "clamp_ both bounds": lambda x: x[1:].clamp_(x[:-1], x[:-1] + 1),
    "clamp_max_ bound": lambda x: x[1:].clamp_max_(x[:-1]),
    "addcdiv_ operand": lambda x: x[1:].addcdiv_(x[1:], x[:-1]),
    "operator +=": lambda x: x[1:].__iadd__(x[:-1]),
    "operator *=": lambda x: x[1:].__imul__(x[:-1]),
    "copy_ shifted": lambda x: x[1:].copy_(x[:-1]),
    "copy_ transpose": lambda x: x.reshape(1024, 1024).copy_(x.reshape(1024, 1024).T),
    "copy_ broadcast row of self": lambda x: x.reshape(1024, 1024).copy_(x.reshape(1024, 1024)[0]),
    "setitem shifted": lambda x: x.__setitem__(slice(1, None), x[:-1]),
    "setitem transpose": lambda x: x.reshape(1024, 1024).__setitem__(
        slice(None), x.reshape(1024, 1024).T),
    "setitem by index": lambda x: x.__setitem__((x[:3] * 0 + 5).long(), x[:3]),
    "setitem by mask": lambda x: x.__setitem__(x < 3, x[:3]),
    "scatter_add_ source": lambda x: x[1:].scatter_add_(0, (x[:2] * 0).long(), x[:2]),
}


@pytest.mark.parametrize("case", sorted(PARTIAL))
def test_partial_overlap_raises_and_leaves_self_intact(case):
    a = np.arange(N, dtype=np.float32)
    x = newch.tensor(a)
    with pytest.raises(RuntimeError, match="some elements of the input tensor and the written-to "
                                           "tensor refer to a single memory location"):
        PARTIAL[case](x)
    np.testing.assert_array_equal(x.numpy(), a)


@pytest.mark.parametrize("case", sorted(PARTIAL))
def test_partial_overlap_raises_in_pytorch_too(case, torch):
    x = torch.arange(N, dtype=torch.float32)
    with pytest.raises(RuntimeError, match="single memory location"):
        PARTIAL[case](x)


def test_interleaved_views_that_share_no_element_are_allowed(torch):
    a = np.arange(12, dtype=np.float32)
    x, t = newch.tensor(a), torch.tensor(a)
    x[::2].add_(x[1::2])
    t[::2].add_(t[1::2])
    np.testing.assert_array_equal(x.numpy(), t.numpy())


WRITES = {
    "add_": lambda t: t.add_(1.0),
    "relu_": lambda t: t.relu_(),
    "mul_ tensor": lambda t: t.mul_(newch.ones(4)),
    "fill_": lambda t: t.fill_(2.0),
    "zero_": lambda t: t.zero_(),
    "copy_": lambda t: t.copy_(newch.ones(4)),
    "setitem": lambda t: t.__setitem__(0, 1.0),
    "masked_fill_": lambda t: t.masked_fill_(newch.ones(4, dtype=newch.bool), 1.0),
    "normal_": lambda t: t.normal_(),
    "uniform_": lambda t: t.uniform_(),
    "bernoulli_": lambda t: t.bernoulli_(),
    "clamp_": lambda t: t.clamp_(0.0, 1.0),
}


@pytest.mark.parametrize("op", sorted(WRITES))
def test_in_place_on_an_expanded_tensor_raises_a_clear_error(op):
    base = newch.arange(4.0)
    e = base.expand(3, 4)
    with pytest.raises(RuntimeError, match=rf"{op.split()[0].replace('setitem', 'setitem')}.*"
                                           r"more than one element of the written-to tensor"):
        WRITES[op](e)
    np.testing.assert_array_equal(base.numpy(), [0, 1, 2, 3])


@pytest.mark.parametrize("op", sorted(WRITES))
def test_in_place_on_a_read_only_tensor_raises_a_clear_error(op):
    a = np.arange(4.0, dtype=np.float32)
    a.flags.writeable = False
    t = newch.from_numpy(a)
    with pytest.raises(RuntimeError, match="read-only"):
        WRITES[op](t)
    np.testing.assert_array_equal(a, [0, 1, 2, 3])


def test_expanded_in_place_raises_in_pytorch_too(torch):
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        torch.arange(4.0).expand(3, 4).add_(1.0)


PEAK_OPS = {
    "add_ 1": lambda x, y: x.add_(1),
    "add_ tensor": lambda x, y: x.add_(y),
    "add_ alpha": lambda x, y: x.add_(y, alpha=-0.1),
    "sub_ tensor": lambda x, y: x.sub_(y),
    "mul_ tensor": lambda x, y: x.mul_(y),
    "div_ scalar": lambda x, y: x.div_(2.0),
    "mul_ self": lambda x, y: x.mul_(x),
    "relu_": lambda x, y: x.relu_(),
    "F.relu inplace": lambda x, y: F.relu(x, inplace=True),
    "exp_": lambda x, y: x.exp_(),
    "clamp_": lambda x, y: x.clamp_(-1.0, 1.0),
    "sigmoid_": lambda x, y: x.sigmoid_(),
}


@pytest.mark.parametrize("name", sorted(PEAK_OPS))
def test_in_place_op_on_1m_floats_takes_no_arena_memory(name):
    ctx = newch.default_context()
    x, y = newch.randn(N), newch.randn(N)
    before = ctx.mem_stats()["arena_bytes_in_use"]
    ctx.reset_peak()
    with newch.no_grad():
        PEAK_OPS[name](x, y)
    assert ctx.mem_stats()["arena_peak_bytes"] - before == 0


def test_in_place_op_under_autograd_still_gives_the_right_gradient(torch):
    a = np.random.default_rng(2).standard_normal(50).astype(np.float32)
    grads = []
    for lib in (newch, torch):
        w = lib.tensor(a, requires_grad=True)
        y = w * 2
        y.add_(1.0)
        y.clamp_(-1.0, 2.0)
        y.relu_()
        (y * y).sum().backward()
        grads.append(w.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-6)


@pytest.mark.parametrize("op", ["add_", "mul_", "neg_", "abs_", "relu_", "floor_"])
def test_integer_in_place_on_1m_ints_takes_no_arena_memory(op):
    ctx = newch.default_context()
    x = newch.arange(N, dtype=newch.int64)
    before = ctx.mem_stats()["arena_bytes_in_use"]
    ctx.reset_peak()
    getattr(x, op)(*((3,) if op in ("add_", "mul_") else ()))
    assert ctx.mem_stats()["arena_peak_bytes"] - before == 0


@pytest.mark.parametrize("op", ["addcmul_", "addcdiv_", "lerp_"])
def test_fused_in_place_ops_take_one_temporary(op):
    ctx = newch.default_context()
    x, y, z = newch.randn(N), newch.randn(N), newch.rand(N) + 1
    before = ctx.mem_stats()["arena_bytes_in_use"]
    ctx.reset_peak()
    if op == "lerp_":
        x.lerp_(y, 0.3)
    else:
        getattr(x, op)(y, z, value=0.5)
    assert ctx.mem_stats()["arena_peak_bytes"] - before == 4 * N      # the product, then nothing


def _in_place_chain(threads):
    ctx = newch.Context(seed=3, threads=threads)
    prev = newch.set_default_context(ctx)
    try:
        x, y = newch.randn(N), newch.rand(N) + 0.5
        x.add_(y, alpha=0.3).mul_(y).div_(1.7).sigmoid_().addcmul_(y, y, value=-0.2)
        x.lerp_(y, 0.1).clamp_(0.1, 0.9).sqrt_().sub_(x.mean())
        return x.numpy()
    finally:
        newch.set_default_context(prev)


def test_in_place_results_do_not_depend_on_the_thread_count():
    np.testing.assert_array_equal(_in_place_chain(1), _in_place_chain(2))


@pytest.mark.parametrize("call", [lambda x: x.mul_(3.0, alpha=2), lambda x: x.pow_(2, alpha=1),
                                  lambda x: x.add_(1.0, rounding_mode="floor"),
                                  lambda x: x.relu_(1), lambda x: x.div_(2.0, foo=1)])
def test_unexpected_arguments_raise_as_in_the_twin(call):
    x = newch.ones(4)
    with pytest.raises(TypeError):
        call(x)
    np.testing.assert_array_equal(x.numpy(), np.ones(4))


def test_div_rounding_mode_in_place_matches_the_twin():
    a = np.array([-3.5, 2.5, 7.0, -0.5], np.float32)
    for mode in ("floor", "trunc"):
        x = newch.tensor(a)
        x.div_(2.0, rounding_mode=mode)
        np.testing.assert_array_equal(x.numpy(), newch.tensor(a).div(2.0, rounding_mode=mode).numpy())


@pytest.mark.parametrize("lib_name", ["newch", "torch"])
def test_exact_overlap_and_broadcast_setitem_are_allowed_as_in_pytorch(lib_name):
    lib = newch if lib_name == "newch" else pytest.importorskip("torch")
    x = lib.arange(8.0).reshape(2, 4)
    x.copy_(x)
    x[1:].copy_(x[1:])
    x[:] = x
    x[1] = x[1]
    x[1:] = x[0]              # a broadcast value: PyTorch expands it first, and allows it
    assert x.tolist() == [[0.0, 1.0, 2.0, 3.0]] * 2
    x[:] = x[0, 3]
    assert x.tolist() == [[3.0] * 4] * 2
