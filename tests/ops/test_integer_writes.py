"""Writing a Python number an integer tensor cannot hold (nan, inf, out of range) raises RuntimeError,
as PyTorch does, for tensor / full / fill_ / masked_fill_ / x[i] = v; tensor casts never raise."""
import math

import numpy as np
import pytest

import newch


def _setitem(mod, dt, v, idx=0):
    x = mod.zeros(3, dtype=dt)
    x[idx] = v
    return x


# (name, function of (module, dtype name)); each either raises in both libraries or gives the same values
WRITES = {
    "tensor nan": lambda m, d: m.tensor([1.0, math.nan], dtype=getattr(m, d)),
    "tensor inf": lambda m, d: m.tensor([-math.inf], dtype=getattr(m, d)),
    "tensor 1e20": lambda m, d: m.tensor([1e20], dtype=getattr(m, d)),
    "tensor 0-d nan": lambda m, d: m.tensor(math.nan, dtype=getattr(m, d)),
    "tensor 300": lambda m, d: m.tensor([300], dtype=getattr(m, d)),
    "tensor 2**40": lambda m, d: m.tensor([2 ** 40], dtype=getattr(m, d)),
    "tensor -1": lambda m, d: m.tensor([-1], dtype=getattr(m, d)),
    "tensor -1.0": lambda m, d: m.tensor([-1.0], dtype=getattr(m, d)),
    "tensor 3.7": lambda m, d: m.tensor([3.7], dtype=getattr(m, d)),
    "full nan": lambda m, d: m.full((2,), math.nan, dtype=getattr(m, d)),
    "full inf": lambda m, d: m.full((2,), math.inf, dtype=getattr(m, d)),
    "full 2**63": lambda m, d: m.full((2,), 2 ** 63, dtype=getattr(m, d)),
    "full 300": lambda m, d: m.full((2,), 300, dtype=getattr(m, d)),
    "full -129": lambda m, d: m.full((2,), -129, dtype=getattr(m, d)),
    "full 3.5": lambda m, d: m.full((2,), 3.5, dtype=getattr(m, d)),
    "fill_ nan": lambda m, d: m.zeros(2, dtype=getattr(m, d)).fill_(math.nan),
    "fill_ inf": lambda m, d: m.zeros(2, dtype=getattr(m, d)).fill_(math.inf),
    "fill_ 1e20": lambda m, d: m.zeros(2, dtype=getattr(m, d)).fill_(1e20),
    "fill_ 9.3e18": lambda m, d: m.zeros(2, dtype=getattr(m, d)).fill_(9.3e18),
    "fill_ 9.2e18": lambda m, d: m.zeros(2, dtype=getattr(m, d)).fill_(9.2e18),
    "fill_ 2**63": lambda m, d: m.zeros(2, dtype=getattr(m, d)).fill_(2 ** 63),
    "fill_ -2**63": lambda m, d: m.zeros(2, dtype=getattr(m, d)).fill_(-2 ** 63),
    "fill_ 2**31": lambda m, d: m.zeros(2, dtype=getattr(m, d)).fill_(2 ** 31),
    "fill_ 300": lambda m, d: m.zeros(2, dtype=getattr(m, d)).fill_(300),
    "fill_ 255.9": lambda m, d: m.zeros(2, dtype=getattr(m, d)).fill_(255.9),
    "fill_ 256.0": lambda m, d: m.zeros(2, dtype=getattr(m, d)).fill_(256.0),
    "fill_ -1": lambda m, d: m.zeros(2, dtype=getattr(m, d)).fill_(-1),
    "fill_ -129": lambda m, d: m.zeros(2, dtype=getattr(m, d)).fill_(-129),
    "fill_ -1.0": lambda m, d: m.zeros(2, dtype=getattr(m, d)).fill_(-1.0),
    "fill_ 2.5": lambda m, d: m.zeros(2, dtype=getattr(m, d)).fill_(2.5),
    "fill_ True": lambda m, d: m.zeros(2, dtype=getattr(m, d)).fill_(True),
    "setitem nan": lambda m, d: _setitem(m, getattr(m, d), math.nan),
    "setitem inf": lambda m, d: _setitem(m, getattr(m, d), math.inf),
    "setitem 1e20": lambda m, d: _setitem(m, getattr(m, d), 1e20),
    "setitem 300": lambda m, d: _setitem(m, getattr(m, d), 300),
    "setitem 2**40": lambda m, d: _setitem(m, getattr(m, d), 2 ** 40),
    "setitem -1": lambda m, d: _setitem(m, getattr(m, d), -1),
    "setitem 2.7": lambda m, d: _setitem(m, getattr(m, d), 2.7),
    "setitem slice nan": lambda m, d: _setitem(m, getattr(m, d), math.nan, slice(None)),
    "setitem index tensor nan": lambda m, d: _setitem(m, getattr(m, d), math.nan, m.tensor([0, 1])),
    "setitem mask 1e20": lambda m, d: _setitem(m, getattr(m, d), 1e20, m.tensor([True, False, True])),
    "masked_fill_ nan": lambda m, d: m.zeros(2, dtype=getattr(m, d)).masked_fill_(
        m.tensor([True, False]), math.nan),
    "masked_fill_ 1e20": lambda m, d: m.zeros(2, dtype=getattr(m, d)).masked_fill_(
        m.tensor([True, False]), 1e20),
    "masked_fill_ 0-d tensor nan": lambda m, d: m.zeros(2, dtype=getattr(m, d)).masked_fill_(
        m.tensor([True, False]), m.tensor(math.nan)),
}

# Casts of tensors never raise (the values of nan/out-of-range casts are platform-defined, so
# only "no error" and the in-range values are compared).
CASTS = {
    "long": lambda m: m.tensor([math.nan, 1e20, -2.5, 7.9]).long(),
    "to int64": lambda m: m.tensor([math.inf, 1e20, -2.5, 7.9]).to(m.int64),
    "to int32": lambda m: m.tensor([math.nan, 1e12, -2.5, 7.9]).to(m.int32),
    "to uint8": lambda m: m.tensor([300.0, 1e12, 2.5, 7.9]).to(m.uint8),
    "fill_ with a 0-d tensor": lambda m: m.zeros(4, dtype=m.int64).fill_(m.tensor(math.nan)),
    "setitem with a 0-d tensor": lambda m: _setitem(m, m.int64, m.tensor(1e20)),
}


def _outcome(fn):
    try:
        return "ok", np.asarray(fn().tolist())
    except (RuntimeError, ValueError, OverflowError) as e:
        return type(e), None


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8", "bool"])
@pytest.mark.parametrize("case", sorted(WRITES))
def test_integer_writes_follow_pytorch(case, dtype, torch):
    got, vals = _outcome(lambda: WRITES[case](newch, dtype))
    want, tvals = _outcome(lambda: WRITES[case](torch, dtype))
    if want == "ok":
        assert got == "ok", f"{case} {dtype}: newch raised {got}, PyTorch did not"
        np.testing.assert_array_equal(vals, tvals)
    else:
        # NOTE: PyTorch raises ValueError for 2**63 in tensor() and setitem (an argument parser
        # limit) and OverflowError in full/fill_; newch's error is a RuntimeError that is also both.
        assert issubclass(got, RuntimeError) and issubclass(got, want), \
            f"{case} {dtype}: PyTorch raised {want}, newch gave {got}"


IN_PLACE = {
    "fill_": lambda x, v: x.fill_(v),
    "setitem": lambda x, v: x.__setitem__(slice(None), v),
    "setitem index": lambda x, v: x.__setitem__(newch.tensor([0, 2]), v),
    "masked_fill_": lambda x, v: x.masked_fill_(newch.tensor([True, False, True]), v),
}


@pytest.mark.parametrize("value", [math.nan, -math.inf, 1e20, 2 ** 63, -2 ** 63 - 1])
@pytest.mark.parametrize("op", sorted(IN_PLACE))
def test_refused_writes_leave_the_tensor_unchanged(op, value):
    x = newch.arange(3, dtype=newch.int64)
    version = x._s.version
    with pytest.raises(RuntimeError, match=r"(fill_|setitem|masked_fill_): value .* int64 "
                                           r"without overflow"):
        IN_PLACE[op](x, value)
    np.testing.assert_array_equal(x.numpy(), [0, 1, 2])
    assert x._s.version == version


def test_refused_write_names_the_op_and_value():
    x = newch.zeros(3, dtype=newch.int32)
    with pytest.raises(RuntimeError, match=r"fill_: value nan cannot be converted to type "
                                           r"int32 without overflow"):
        x.fill_(math.nan)
    with pytest.raises(RuntimeError, match=r"setitem: value 1099511627776"):
        x[1] = 2 ** 40
    np.testing.assert_array_equal(x.numpy(), [0, 0, 0])


@pytest.mark.parametrize("case", sorted(CASTS))
def test_tensor_casts_never_raise(case, torch):
    out = CASTS[case](newch)
    ref = CASTS[case](torch)
    assert tuple(out.shape) == tuple(ref.shape) and out.dtype.name == str(ref.dtype)[6:]
    if case in ("long", "to int64", "to int32"):
        np.testing.assert_array_equal(out.numpy()[2:], ref.numpy()[2:])   # -2.5 -> -2, 7.9 -> 7


_TOO_BIG = [
    ("tensor", lambda t: t.tensor([2 ** 70])),
    ("tensor negative", lambda t: t.tensor([[1, -2 ** 64]])),
    ("full", lambda t: t.full((2,), 2 ** 70, dtype=t.int64)),
    ("fill_", lambda t: t.zeros(2, dtype=t.int64).fill_(2 ** 70)),
    ("tensor nan as int64", lambda t: t.tensor([float("nan")], dtype=t.int64)),
]


@pytest.mark.parametrize("name,make", _TOO_BIG, ids=[c[0] for c in _TOO_BIG])
def test_an_integer_too_big_raises_what_pytorch_raises_and_runtime_error(name, make):
    """The error is a RuntimeError (the issue's contract) and also whatever PyTorch raises there
    (ValueError for tensor(), OverflowError for full/fill_), so a ported except clause catches it."""
    with pytest.raises(RuntimeError, match="without overflow"):
        make(newch)
    torch = pytest.importorskip("torch")
    with pytest.raises(Exception) as theirs:
        make(torch)
    with pytest.raises(type(theirs.value)):
        make(newch)
