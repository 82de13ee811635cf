"""Inside persistent() every result is persistent: views and no-op results of a temporary are
persistent copies that survive step_end(); ``.data =`` keeps a persistent tensor persistent."""
import numpy as np
import pytest

import newch
from newch import NcError


# Every op that can return a view of its input, or the input itself.
VIEWS = {
    "reshape": lambda x: x.reshape(2, 3),
    "reshape same shape": lambda x: x.reshape(6),
    "view": lambda x: x.view(3, 2),
    "view_as": lambda x: x.view_as(newch.zeros(2, 3)),
    "reshape_as": lambda x: x.reshape_as(newch.zeros(3, 2)),
    "getitem int": lambda x: x[0],
    "getitem slice": lambda x: x[1:4],
    "getitem none": lambda x: x[None],
    "getitem ellipsis": lambda x: x[...],
    "T": lambda x: x.T,
    "T of 2-d": lambda x: x.reshape(2, 3).T,
    "mT": lambda x: x.reshape(2, 3).mT,
    "t": lambda x: x.t(),
    "permute": lambda x: x.reshape(2, 3).permute(1, 0),
    "transpose": lambda x: x.reshape(2, 3).transpose(0, 1),
    "movedim": lambda x: x.reshape(2, 3).movedim(0, 1),
    "detach": lambda x: x.detach(),
    "data": lambda x: x.data,
    "float": lambda x: x.float(),
    "to same dtype": lambda x: x.to(newch.float32),
    "to no dtype": lambda x: x.to("cpu"),
    "type_as": lambda x: x.type_as(newch.zeros(1)),
    "contiguous": lambda x: x.contiguous(),
    "cpu": lambda x: x.cpu(),
    "pos": lambda x: +x,
    "as_tensor": lambda x: newch.as_tensor(x),
    "as_tensor same dtype": lambda x: newch.as_tensor(x, dtype=newch.float32),
    "expand": lambda x: x.expand(2, 6),
    "expand_as": lambda x: x.expand_as(newch.zeros(3, 6)),
    "squeeze": lambda x: x.unsqueeze(0).squeeze(),
    "squeeze nothing": lambda x: x.squeeze(),
    "unsqueeze": lambda x: x.unsqueeze(1),
    "flatten": lambda x: x.reshape(2, 3).flatten(),
    "flatten 1-d": lambda x: x.flatten(),
    "unflatten": lambda x: x.unflatten(0, (2, 3)),
    "narrow": lambda x: x.narrow(0, 1, 3),
    "select": lambda x: x.reshape(2, 3).select(0, 1),
    "split": lambda x: x.split(2)[1],
    "chunk": lambda x: x.chunk(3)[2],
    "unbind": lambda x: x.reshape(2, 3).unbind(0)[1],
    "swapaxes": lambda x: x.reshape(2, 3).swapaxes(0, 1),
}


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_view_of_a_temporary_made_inside_persistent_survives_step_end(ctx, name):
    x = newch.arange(6.0)
    expected = VIEWS[name](x).numpy().copy()
    with newch.persistent():
        y = VIEWS[name](x)
    assert y.is_persistent
    newch.step_end()
    assert not x.is_alive
    np.testing.assert_array_equal(y.numpy(), expected)


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_view_of_a_persistent_tensor_still_shares_memory(ctx, name):
    with newch.persistent():
        x = newch.arange(6.0)
        y = VIEWS[name](x)
    if name in ("expand", "expand_as"):
        assert y._s is x._s
        return
    x.add_(100.0)     # shared memory: the view sees the write
    assert y.is_persistent and (y.numpy() >= 100).all()


def test_every_tensor_method_returning_a_view_is_covered(ctx):
    # Sweep: any Tensor method that, called with no args on a temporary inside persistent(),
    # returns a tensor must return a persistent one.
    x = newch.arange(6.0)
    checked = []
    for name in dir(x):
        if name.startswith("_") or name.endswith("_") or name in ("data", "grad", "grad_fn",
                                                                   "backward", "retain_grad"):
            continue
        fn = getattr(type(x), name, None)
        if not callable(fn) and not isinstance(fn, property):
            continue
        with newch.persistent():
            try:
                out = getattr(x, name)
                out = out() if callable(out) else out
            except Exception:     # needs arguments, or is not defined for this input
                continue
        if isinstance(out, newch.Tensor):
            checked.append(name)
            assert out.is_persistent, name
        elif isinstance(out, tuple) and out and isinstance(out[0], newch.Tensor):
            checked.append(name)
            assert all(o.is_persistent for o in out), name
    assert {"T", "contiguous", "detach", "float", "squeeze", "cpu", "clone"} <= set(checked)


def test_views_outside_persistent_stay_views_of_temporaries(ctx):
    x = newch.arange(6.0)
    v = x.reshape(2, 3)
    assert v._s is x._s and not v.is_persistent


def test_view_of_a_temporary_inside_persistent_keeps_autograd(ctx):
    w = newch.ones(4, requires_grad=True)
    x = w * 3
    with newch.persistent():
        y = x.reshape(2, 2)
        z = x.contiguous()
    (y.sum() + (z * z).sum()).backward()
    np.testing.assert_allclose(w.grad.numpy(), 3 + 2 * 3 * 3 * np.ones(4))


def test_view_of_a_stale_temporary_inside_persistent_raises(ctx):
    x = newch.arange(6.0)
    newch.step_end()
    with newch.persistent():
        for f in (lambda: x.detach(), lambda: x.data, lambda: x.contiguous(), lambda: x[0]):
            with pytest.raises(NcError):
                f()


# -- Tensor.data = ---------------------------------------------------------------------

def test_data_assignment_leaves_the_old_storage_view_set(ctx):
    with newch.persistent():
        w = newch.zeros(3)
        alias = w[:]
    w.data = newch.ones(3)
    newch.release(alias)            # frees w's old storage only
    assert w.is_alive
    np.testing.assert_array_equal(w.numpy(), [1, 1, 1])
    w.add_(1.0)
    np.testing.assert_array_equal(w.numpy(), [2, 2, 2])


def test_manual_update_keeps_a_persistent_tensor_alive_across_step_end(ctx):
    with newch.persistent():
        w = newch.ones(3, requires_grad=True)
    for _ in range(3):
        (w * w).sum().backward()
        w.data = w.data - 0.25 * w.grad
        w.grad = None
        newch.step_end()
    assert w.is_persistent and w.requires_grad
    np.testing.assert_allclose(w.detach().numpy(), 0.125 * np.ones(3))   # w *= 0.5 per step


def test_data_assignment_to_persistent_copies_a_temporary_and_loses_sharing(ctx):
    with newch.persistent():
        w = newch.zeros(2)
    t = newch.ones(2)
    w.data = t
    t.fill_(7.0)
    np.testing.assert_array_equal(w.numpy(), [1, 1])
    newch.step_end()
    np.testing.assert_array_equal(w.numpy(), [1, 1])


def test_data_assignment_may_change_shape_and_dtype(ctx):
    with newch.persistent():
        w = newch.zeros(3)
    w.data = newch.ones(2, 2, dtype=newch.float64)
    assert tuple(w.shape) == (2, 2) and w.dtype is newch.float64 and w.is_persistent
    newch.step_end()
    assert w.sum().item() == 4


def test_data_assignment_shares_a_persistent_right_hand_side(ctx):
    with newch.persistent():
        w, u = newch.zeros(2), newch.ones(2)
    w.data = u
    u.fill_(3.0)
    np.testing.assert_array_equal(w.numpy(), [3, 3])


def test_data_assignment_of_a_temporary_target_shares(ctx):
    x, t = newch.zeros(2), newch.ones(2)
    x.data = t
    t.fill_(5.0)
    np.testing.assert_array_equal(x.numpy(), [5, 5])


def test_data_assignment_of_a_stale_or_non_tensor_raises_and_keeps_the_target(ctx):
    with newch.persistent():
        w = newch.zeros(2)
    t = newch.ones(2)
    newch.step_end()
    with pytest.raises(NcError):
        w.data = t
    with pytest.raises(TypeError, match="data"):
        w.data = [1.0, 2.0]
    np.testing.assert_array_equal(w.numpy(), [0, 0])


def test_parameter_data_assignment_leaves_the_old_storage_view_set(ctx):
    p = newch.nn.Parameter(newch.zeros(3))
    alias = p.data
    p.data = newch.ones(3)
    newch.release(alias)
    np.testing.assert_array_equal(p.detach().numpy(), [1, 1, 1])
