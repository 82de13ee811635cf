"""newch.nn.utils: clip_grad_norm_, clip_grad_value_, get_total_norm, parameters_to_vector and
vector_to_parameters, by hand and against torch.nn.utils."""
import math

import numpy as np
import pytest

import newch
import newch.nn.utils as U


def params_with_grads(grads, dtype=np.float32):
    ps = []
    for g in grads:
        with newch.persistent():
            p = newch.zeros(*np.shape(g), dtype=newch.float32 if dtype == np.float32
                            else newch.float64, requires_grad=True)
            if g is not None:
                p.grad = newch.tensor(np.asarray(g, dtype))
        ps.append(p)
    return ps


def test_nn_utils_resolves_like_torch():
    import newch.nn.utils as a
    from newch.nn.utils import clip_grad_norm_
    assert a is newch.net.utils and clip_grad_norm_ is U.clip_grad_norm_


def test_clip_grad_norm_by_hand():
    ps = params_with_grads([[3.0, 0.0], [[4.0]]])
    total = U.clip_grad_norm_(ps, max_norm=1.0)
    assert total.item() == pytest.approx(5.0)
    coef = 1.0 / (5.0 + 1e-6)
    np.testing.assert_allclose(ps[0].grad.numpy(), [3 * coef, 0.0], rtol=1e-6)
    np.testing.assert_allclose(ps[1].grad.numpy(), [[4 * coef]], rtol=1e-6)
    assert ps[0].grad.is_persistent


def test_small_gradients_are_left_alone_and_inf_norm_is_the_largest_entry():
    ps = params_with_grads([[0.1, -0.2]], np.float64)
    assert U.clip_grad_norm_(ps, max_norm=10.0).item() == pytest.approx(math.sqrt(0.05))
    np.testing.assert_array_equal(ps[0].grad.numpy(), [0.1, -0.2])
    ps = params_with_grads([[1.0, -7.0], [2.0]], np.float64)
    assert U.clip_grad_norm_(ps, 3.5, norm_type=float("inf")).item() == 7.0
    np.testing.assert_allclose(ps[0].grad.numpy(), np.array([1.0, -7.0]) * 3.5 / (7 + 1e-6))
    assert U.clip_grad_norm_(params_with_grads([[1.0, -7.0]]), 1.0, norm_type="inf").item() == 7


def test_no_gradients_give_zero_and_nonfinite_norm_can_raise():
    with newch.persistent():
        p = newch.zeros(2, requires_grad=True)
    assert U.clip_grad_norm_([p], 1.0).item() == 0.0
    ps = params_with_grads([[np.inf, 1.0]])
    with pytest.raises(RuntimeError, match="non-finite"):
        U.clip_grad_norm_(ps, 1.0, error_if_nonfinite=True)
    assert ps[0].grad.numpy()[1] == 1.0              # left untouched when it raises
    U.clip_grad_norm_(ps, 1.0, foreach=True)         # accepted; scales by 1 / inf
    assert ps[0].grad.numpy()[1] == 0.0


def test_clip_grad_value_clamps_in_place():
    ps = params_with_grads([[-3.0, 0.2, 5.0]])
    assert U.clip_grad_value_(ps, 1.0) is None
    np.testing.assert_array_equal(ps[0].grad.numpy(), np.float32([-1.0, 0.2, 1.0]))
    with pytest.raises(TypeError, match="clip_value"):
        U.clip_grad_value_(ps, "big")


def test_parameters_to_vector_and_back():
    with newch.persistent():
        a = newch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        b = newch.tensor([5.0], requires_grad=True)
    vec = U.parameters_to_vector([a, b])
    assert vec.tolist() == [1, 2, 3, 4, 5] and vec.requires_grad
    (vec * newch.arange(5.0)).sum().backward()
    assert a.grad.tolist() == [[0, 1], [2, 3]] and b.grad.tolist() == [4]
    U.vector_to_parameters(newch.arange(10.0, 15.0), [a, b])
    assert a.tolist() == [[10, 11], [12, 13]] and b.tolist() == [14]
    newch.step_end()
    assert a.is_persistent and a.tolist() == [[10, 11], [12, 13]]      # copied, not a view
    with pytest.raises(ValueError, match="5"):
        U.vector_to_parameters(newch.zeros(4), [a, b])
    with pytest.raises(TypeError, match="expected torch.Tensor"):
        U.vector_to_parameters([1.0] * 5, [a, b])


def test_inf_norm_of_an_empty_gradient_is_an_error_as_in_torch():
    with pytest.raises(RuntimeError, match="empty"):
        U.clip_grad_norm_(params_with_grads([np.zeros((2, 0))]), 1.0, norm_type=float("inf"))


def test_a_freed_gradient_is_a_clear_error_naming_the_function():
    p = newch.zeros(2, requires_grad=True)          # a temporary parameter: its grad dies too
    (p * 2).sum().backward()
    newch.step_end()
    with pytest.raises(newch.NcError, match="clip_grad_norm_"):
        U.clip_grad_norm_([p], 1.0)
    with pytest.raises(newch.NcError, match="clip_grad_value_"):
        U.clip_grad_value_([p], 1.0)


def test_clipping_is_not_recorded_by_autograd():
    ps = params_with_grads([[3.0, 4.0]])
    total = U.clip_grad_norm_(ps, 1.0)
    assert not total.requires_grad and not ps[0].grad.requires_grad


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, float("inf"), 0.5])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_clip_grad_norm_matches_torch(norm_type, dtype):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    shapes = [(3, 4), (5,), ()] + ([(2, 0)] if norm_type != float("inf") else [])
    grads = [rng.standard_normal(s).astype(dtype) for s in shapes]
    ours = params_with_grads(grads, dtype)
    theirs = [torch.zeros(g.shape, dtype=torch.from_numpy(g).dtype, requires_grad=True)
              for g in grads]
    for q, g in zip(theirs, grads):
        q.grad = torch.from_numpy(g.copy())
    for max_norm in (0.5, 100.0):
        t1 = U.clip_grad_norm_(ours, max_norm, norm_type)
        t2 = torch.nn.utils.clip_grad_norm_(theirs, max_norm, norm_type)
        tol = 1e-6 if dtype == np.float32 else 1e-13
        assert t1.item() == pytest.approx(t2.item(), rel=tol)
        for p, q in zip(ours, theirs):
            np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=tol, atol=1e-30)
    U.clip_grad_value_(ours, 0.01)
    torch.nn.utils.clip_grad_value_(theirs, 0.01)
    for p, q in zip(ours, theirs):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=tol, atol=1e-30)
        assert np.abs(p.grad.numpy()).max(initial=0) <= 0.01
