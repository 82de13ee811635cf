"""Bad input: the right exception type, a message naming the op (and what was given/expected),
and a failed op leaves its inputs and the arena's bytes in use unchanged."""
import gc
import re

import numpy as np
import pytest

import newch


def inputs():
    a = newch.arange(12.0).reshape(3, 4)
    b = newch.arange(6.0).reshape(2, 3)
    i = newch.tensor([1, 2, 3])
    m = newch.tensor([[True, False, True, False]] * 3)
    return a, b, i, m


CASES = [
    # (id, exception, op name the message must contain, call(a, b, i, m), extra text expected)
    ("add-broadcast", ValueError, "add", lambda a, b, i, m: a + b, r"\(3, 4\)"),
    ("mul-broadcast", ValueError, "mul", lambda a, b, i, m: a * b, r"\(2, 3\)"),
    ("sub-bool", TypeError, "sub", lambda a, b, i, m: m - m, "bool"),
    ("eq-broadcast", ValueError, "eq", lambda a, b, i, m: a == b, "broadcast"),
    ("add-operand-type", TypeError, "add", lambda a, b, i, m: a + "x", "str"),
    ("bitwise-float", TypeError, "bitwise_and", lambda a, b, i, m: a & a, "float32"),
    ("where-broadcast", ValueError, "where", lambda a, b, i, m: newch.where(m, a, b), "broadcast"),
    ("clamp-no-bounds", ValueError, "clamp", lambda a, b, i, m: a.clamp(), "min"),
    ("add_-float-into-int", TypeError, "add_", lambda a, b, i, m: i.add_(0.5), "int64"),
    ("div_-int", TypeError, "div_", lambda a, b, i, m: i.div_(2), "float32"),
    ("mul_-broadcast-self", ValueError, "mul_",
     lambda a, b, i, m: i.mul_(newch.ones(2, 3, dtype=newch.int64)), r"\(3,\)"),
    ("copy_-shape", ValueError, "copy_", lambda a, b, i, m: a.copy_(b), r"\(2, 3\)"),
    ("copy_-not-tensor", TypeError, "copy_", lambda a, b, i, m: a.copy_([1.0]), "list"),
    ("fill_-not-number", TypeError, "fill_", lambda a, b, i, m: a.fill_("x"), "str"),
    ("fill_-tensor", ValueError, "fill_", lambda a, b, i, m: a.fill_(b), r"\(2, 3\)"),
    ("masked_fill-mask-dtype", TypeError, "masked_fill_", lambda a, b, i, m: a.masked_fill_(a, 0.0),
     "bool"),
    ("sum-dim-range", IndexError, "sum", lambda a, b, i, m: a.sum(2), r"-2 to 1"),
    ("mean-dim-range", IndexError, "mean", lambda a, b, i, m: a.mean(-3), "range"),
    ("mean-int", TypeError, "mean", lambda a, b, i, m: i.mean(), "int64"),
    ("var-int", TypeError, "var", lambda a, b, i, m: i.var(), "int64"),
    ("sum-dim-repeat", ValueError, "sum", lambda a, b, i, m: a.sum((0, 0)), "more than once"),
    ("max-dim-range", IndexError, "max", lambda a, b, i, m: a.max(5), "range"),
    ("argmax-dim-range", IndexError, "argmax", lambda a, b, i, m: a.argmax(-3), "range"),
    ("amax-empty", IndexError, "amax", lambda a, b, i, m: newch.zeros(0, 2).amax(0), "empty"),
    ("max-empty", IndexError, "max", lambda a, b, i, m: newch.zeros(0).max(), "empty"),
    ("logsumexp-dim", IndexError, "logsumexp", lambda a, b, i, m: a.logsumexp(3), "range"),
    ("prod-tuple", TypeError, "prod", lambda a, b, i, m: a.prod((0, 1)), "int"),
    ("matmul-shapes", ValueError, "matmul", lambda a, b, i, m: a @ b, r"4 != 2"),
    ("matmul-dtype", TypeError, "matmul", lambda a, b, i, m: a @ a.double().T, "float64"),
    ("matmul-int", TypeError, "matmul", lambda a, b, i, m: i @ i, "int64"),
    ("matmul-0dim", ValueError, "matmul", lambda a, b, i, m: newch.tensor(1.0) @ a, "1 dim"),
    ("matmul-batch", ValueError, "matmul",
     lambda a, b, i, m: newch.ones(2, 3, 4) @ newch.ones(3, 4, 5), "broadcast"),
    ("mm-3d", ValueError, "mm", lambda a, b, i, m: newch.mm(newch.ones(2, 2, 2), a), "2-D"),
    ("bmm-2d", ValueError, "bmm", lambda a, b, i, m: newch.bmm(a, a.T), "3-D"),
    ("bmm-batch", ValueError, "bmm", lambda a, b, i, m: newch.bmm(newch.ones(2, 3, 4),
                                                                 newch.ones(3, 4, 5)), "batch"),
    ("reshape-size", ValueError, "reshape", lambda a, b, i, m: a.reshape(5, -1), "12"),
    ("reshape-two-minus-one", ValueError, "reshape", lambda a, b, i, m: a.reshape(-1, -1), "-1"),
    ("view-strides", ValueError, "view", lambda a, b, i, m: a.T.view(-1), "reshape"),
    ("view-size", ValueError, "view", lambda a, b, i, m: a.view(7), "12"),
    ("permute-count", ValueError, "permute", lambda a, b, i, m: a.permute(0), r"2"),
    ("permute-repeat", ValueError, "permute", lambda a, b, i, m: a.permute(0, 0), "repeated"),
    ("transpose-range", IndexError, "transpose", lambda a, b, i, m: a.transpose(0, 2), "range"),
    ("squeeze-range", IndexError, "squeeze", lambda a, b, i, m: a.squeeze(2), "range"),
    ("unsqueeze-range", IndexError, "unsqueeze", lambda a, b, i, m: a.unsqueeze(4), "range"),
    ("flatten-order", ValueError, "flatten", lambda a, b, i, m: a.flatten(1, 0), "end_dim"),
    ("expand-size", ValueError, "expand", lambda a, b, i, m: a.expand(3, 5), r"\(3, 4\)"),
    ("expand-fewer", ValueError, "expand", lambda a, b, i, m: a.expand(4), "number of sizes"),
    ("t-3d", ValueError, "t", lambda a, b, i, m: newch.ones(2, 2, 2).t(), "3"),
    ("getitem-range", IndexError, "getitem", lambda a, b, i, m: a[3], r"\(3, 4\)"),
    ("getitem-too-many", IndexError, "getitem", lambda a, b, i, m: a[0, 0, 0], "index"),
    ("getitem-float-index", IndexError, "getitem", lambda a, b, i, m: a[newch.tensor([0.5])],
     "float32"),
    ("getitem-list-range", IndexError, "getitem", lambda a, b, i, m: a[[0, 5]], "5"),
    ("getitem-type", IndexError, "getitem", lambda a, b, i, m: a["x"], "str"),
    ("setitem-shape", ValueError, "setitem",
     lambda a, b, i, m: a.__setitem__(0, newch.ones(5)), r"\(5,\)"),
    ("setitem-range", IndexError, "setitem", lambda a, b, i, m: a.__setitem__(7, 1.0), "7"),
    ("index_select-dtype", TypeError, "index_select",
     lambda a, b, i, m: a.index_select(0, newch.tensor([0.0])), "float32"),
    ("index_select-range", IndexError, "index_select",
     lambda a, b, i, m: a.index_select(1, newch.tensor([4])), "4"),
    ("index_select-dim", IndexError, "index_select",
     lambda a, b, i, m: a.index_select(2, newch.tensor([0])), "range"),
    ("index_select-2d", ValueError, "index_select",
     lambda a, b, i, m: a.index_select(0, newch.tensor([[0]])), "1-D"),
    ("gather-range", IndexError, "gather", lambda a, b, i, m: a.gather(1, newch.tensor([[4]])), "4"),
    ("gather-dtype", TypeError, "gather", lambda a, b, i, m: a.gather(1, newch.tensor([[0.0]])),
     "float32"),
    ("gather-ndim", ValueError, "gather", lambda a, b, i, m: a.gather(1, newch.tensor([0])), "dim"),
    ("cat-shapes", ValueError, "cat", lambda a, b, i, m: newch.cat([a, b]), r"\(2, 3\)"),
    ("cat-empty-list", ValueError, "cat", lambda a, b, i, m: newch.cat([]), "empty"),
    ("cat-not-tensor", TypeError, "cat", lambda a, b, i, m: newch.cat([a, 1]), "int"),
    ("cat-0dim", ValueError, "cat", lambda a, b, i, m: newch.cat([newch.tensor(1.0)]), "0-dim"),
    ("cat-dim", IndexError, "cat", lambda a, b, i, m: newch.cat([a, a], 2), "range"),
    ("stack-shapes", ValueError, "stack", lambda a, b, i, m: newch.stack([a, b]), r"\(2, 3\)"),
    ("split-sizes", ValueError, "split", lambda a, b, i, m: a.split([1, 1]), "3"),
    ("chunk-count", ValueError, "chunk", lambda a, b, i, m: a.chunk(0), "0"),
    ("narrow-range", IndexError, "narrow", lambda a, b, i, m: a.narrow(0, 2, 5), "size 3"),
    ("zeros-negative", ValueError, "zeros", lambda a, b, i, m: newch.zeros(2, -1), "-1"),
    ("ones-float-size", TypeError, "ones", lambda a, b, i, m: newch.ones(2.5), "float"),
    ("full-value", TypeError, "full", lambda a, b, i, m: newch.full((2,), "x"), "str"),
    ("arange-step", ValueError, "arange", lambda a, b, i, m: newch.arange(0, 5, 0), "step"),
    ("arange-sign", ValueError, "arange", lambda a, b, i, m: newch.arange(5, 0, 1), "step"),
    ("linspace-steps", ValueError, "linspace", lambda a, b, i, m: newch.linspace(0, 1, -2), "-2"),
    ("eye-size", ValueError, "eye", lambda a, b, i, m: newch.eye(-1), "-1"),
    ("randint-bounds", ValueError, "randint", lambda a, b, i, m: newch.randint(5, 5, (2,)), "low"),
    ("randn-int", TypeError, "randn", lambda a, b, i, m: newch.randn(2, dtype=newch.int64), "int64"),
    ("randperm-negative", ValueError, "randperm", lambda a, b, i, m: newch.randperm(-1), "-1"),
    ("tensor-ragged", ValueError, "tensor", lambda a, b, i, m: newch.tensor([[1, 2], [3]]), "sequence"),
    ("tensor-strings", TypeError, "tensor", lambda a, b, i, m: newch.tensor(["a"]), "U1"),
    ("tensor-dtype", TypeError, "dtype", lambda a, b, i, m: newch.tensor([1], dtype="complex64"),
     "complex64"),
    ("tensor-float16", TypeError, "tensor", lambda a, b, i, m: newch.tensor(np.zeros(2, np.float16)),
     "float16"),
    ("from_numpy-complex", TypeError, "from_numpy",
     lambda a, b, i, m: newch.from_numpy(np.zeros(2, np.complex64)), "complex64"),
    ("tensor-device", ValueError, "tensor", lambda a, b, i, m: newch.tensor([1], device="cuda"), "cuda"),
    ("to-device", ValueError, "to", lambda a, b, i, m: a.to("cuda"), "cuda"),
    ("size-dim", IndexError, "size", lambda a, b, i, m: a.size(2), "range"),
    ("item-many", (ValueError, RuntimeError), "item", lambda a, b, i, m: a.item(), "12"),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_bad_input_raises_naming_the_op(case):
    _, exc, op, call, detail = case
    a, b, i, m = inputs()
    before = [t.numpy().copy() for t in (a, b, i, m)]
    gc.collect(0)
    in_use = newch.mem_stats()["arena_bytes_in_use"]
    with pytest.raises(exc) as info:
        call(a, b, i, m)
    msg = str(info.value)
    assert op in msg, msg
    assert re.search(detail, msg), (detail, msg)
    del info
    gc.collect(0)
    assert newch.mem_stats()["arena_bytes_in_use"] == in_use
    for t, was in zip((a, b, i, m), before):
        np.testing.assert_array_equal(t.numpy(), was)


def test_messages_say_what_was_given_and_expected():
    with pytest.raises(ValueError) as e:
        newch.ones(2, 3) @ newch.ones(4, 5)
    msg = str(e.value)
    assert "matmul" in msg and "(2, 3)" in msg and "(4, 5)" in msg
    with pytest.raises(IndexError) as e:
        newch.ones(2, 3).sum(3)
    msg = str(e.value)
    assert "sum" in msg and "3" in msg and "-2 to 1" in msg


def test_stale_temporary_raises_ncerror_naming_the_op():
    x = newch.ones(3)
    newch.step_end()
    for call, op in [(lambda: x + 1, "add"), (lambda: x.sum(), "sum"), (lambda: x.item(), "item"),
                     (lambda: x.numpy(), "numpy"), (lambda: x[0], "getitem"),
                     (lambda: x.reshape(3, 1), "reshape"), (lambda: newch.exp(x), "exp"),
                     (lambda: x.add_(1), "add_"), (lambda: x.tolist(), "tolist")]:
        with pytest.raises(newch.NcError, match=op):
            call()
