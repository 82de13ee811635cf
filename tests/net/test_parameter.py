"""Parameter: always persistent, shares persistent memory, copies temporaries."""
import copy

import numpy as np
import pytest

import newch
import newch.nn as nn


def test_temporary_data_is_copied_into_persistent_memory():
    t = newch.tensor([1.0, 2.0, 3.0])
    assert not t.is_persistent
    p = nn.Parameter(t)
    assert isinstance(p, nn.Parameter) and isinstance(p, newch.Tensor)
    assert p.is_persistent and p.requires_grad and p.is_leaf
    t.fill_(0.0)                      # a copy: the parameter does not see later writes
    assert p.tolist() == [1.0, 2.0, 3.0]


def test_persistent_data_is_shared_not_copied():
    with newch.persistent():
        t = newch.zeros(4)
    before = newch.mem_stats()["persistent_bytes"]
    p = nn.Parameter(t)
    assert newch.mem_stats()["persistent_bytes"] == before
    t.fill_(5.0)
    assert p.tolist() == [5.0] * 4


def test_parameter_is_persistent_whatever_the_callers_context():
    with newch.persistent():
        a = nn.Parameter(newch.ones(2))
    b = nn.Parameter(newch.ones(2))
    assert a.is_persistent and b.is_persistent


def test_parameter_survives_step_end():
    p = nn.Parameter(newch.tensor([1.5, -2.0]))
    newch.step_end()
    assert p.tolist() == [1.5, -2.0]
    assert (p * 2).sum().item() == -1.0


def test_requires_grad_false_and_none_data():
    p = nn.Parameter(newch.ones(2), requires_grad=False)
    assert not p.requires_grad
    empty = nn.Parameter()
    assert empty.shape == (0,) and empty.is_persistent


def test_parameter_rejects_non_tensor():
    with pytest.raises(TypeError, match="Parameter"):
        nn.Parameter([1.0, 2.0])


def test_repr():
    p = nn.Parameter(newch.tensor([1.0, 2.0]))
    assert repr(p) == "Parameter containing:\ntensor([1., 2.], requires_grad=True)"
    assert str(p) == repr(p)


def test_repr_matches_torch(torch):
    p = nn.Parameter(newch.tensor([[1.5, 2.0], [3.0, 4.25]]))
    tp = torch.nn.Parameter(torch.tensor([[1.5, 2.0], [3.0, 4.25]]))
    assert repr(p) == repr(tp)


def test_grad_of_parameter_is_persistent_after_backward():
    p = nn.Parameter(newch.tensor([1.0, 2.0]))
    (p * p).sum().backward()
    assert p.grad.is_persistent
    newch.step_end()
    assert p.grad.tolist() == [2.0, 4.0]


def test_data_setter_keeps_parameter_persistent():
    p = nn.Parameter(newch.zeros(3))
    p.data = newch.tensor([1.0, 2.0, 3.0])       # a temporary
    assert p.is_persistent
    newch.step_end()
    assert p.tolist() == [1.0, 2.0, 3.0]
    assert type(p.data) is newch.Tensor and p.data.is_persistent


def test_deepcopy_gives_independent_persistent_parameter():
    p = nn.Parameter(newch.tensor([1.0, 2.0]))
    (p * 3).sum().backward()
    q = copy.deepcopy(p)
    assert isinstance(q, nn.Parameter) and q is not p and q.is_persistent
    assert q.tolist() == [1.0, 2.0] and q.grad.tolist() == [3.0, 3.0]
    with newch.no_grad():
        q.fill_(7.0)
    assert p.tolist() == [1.0, 2.0]


def test_ops_on_parameters_give_plain_tensors():
    p = nn.Parameter(newch.ones(2, 2))
    y = p @ p
    assert type(y) is newch.Tensor and not y.is_persistent
    np.testing.assert_array_equal(y.detach().numpy(), np.full((2, 2), 2.0))
