"""Adam-family and RMS-family optimizer kernels: JIT against the numpy twin bit for bit, by hand,
and on 1, 2, 3, 4 threads."""
import itertools

import numpy as np
import pytest

from .thread_check import outputs_on_1_and_2_threads, run_1_3_4_threads

numba = pytest.importorskip("numba", reason="JIT kernel tests need numba (not installed: the ref backend is tested elsewhere)")
from newch.kernels import optim as K0
from newch.kernels import optim_adam as KA, optim_rms as KR
from newch.kernels.ref import optim_adam as RA, optim_rms as RR

SIZES = (0, 1, 7, 1000, K0.SERIAL_MAX + 1, 3 * K0.CHUNK + 5)


def arrays(n, dtype, k, seed=0):
    rng = np.random.default_rng(seed)
    out = [rng.standard_normal(n).astype(dtype) for _ in range(2)]
    # state arrays: second moments must be >= 0
    out += [np.abs(rng.standard_normal(n)).astype(dtype) for _ in range(k)]
    return out


# name, number of state arrays, argument builder (state arrays, options) -> full argument tuple
CASES = {
    "adam": (3, lambda s, o: (*s, o[0], o[1], 0.9, 0.999, 1e-8, 0.01, 0.3, o[2], o[3]),
             list(itertools.product((0.0, 0.1), (1.0, 0.99), (False, True), (False, True)))),
    "adamax": (2, lambda s, o: (*s, o[0], 0.9, 0.999, 1e-8, 0.02, o[1]),
               list(itertools.product((0.0, 0.1), (False, True)))),
    "nadam": (2, lambda s, o: (*s, o[0], o[1], 0.9, 0.999, 1e-8, 0.01, -0.1, -0.2, o[2]),
              list(itertools.product((0.0, 0.1), (1.0, 0.99), (False, True)))),
    "radam": (2, lambda s, o: (*s, o[0], o[1], 0.9, 0.999, 1e-8, 0.3, 1e-3, 0.1, o[2], o[3]),
              list(itertools.product((0.0, 0.1), (1.0, 0.99), (0.0, 0.7), (False, True)))),
    "rmsprop": (3, lambda s, o: (*s, 0.01, 0.99, 1e-8, o[0], o[1], o[2], o[3]),
                list(itertools.product((0.0, 0.1), (0.0, 0.9), (False, True), (False, True)))),
    "adagrad": (1, lambda s, o: (*s, o[0], 1e-10, 0.01, o[1]),
                list(itertools.product((0.0, 0.1), (False, True)))),
    "adadelta": (2, lambda s, o: (*s, 1.0, 0.9, 1e-6, o[0], o[1]),
                 list(itertools.product((0.0, 0.1), (False, True)))),
}


def kernel_pair(name):
    mod_k, mod_r = (KA, RA) if hasattr(KA, name + "_step") else (KR, RR)
    return getattr(mod_k, name + "_step"), getattr(mod_r, name + "_step")


def test_both_backends_export_the_same_names():
    assert KA.__all__ == RA.__all__ and KR.__all__ == RR.__all__
    for name in CASES:
        # NOTE: each public kernel is a Python launcher over one serial task function, which
        # numba's threads run in chunks for big parameters (kernels/tasks.py).
        mod = KA if hasattr(KA, name + "_step") else KR
        span = getattr(mod, f"_{name}_span")
        assert span.newch_kernel and not span.newch_parallel


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.filterwarnings("ignore:invalid value")
def test_kernel_matches_ref_twin_bit_for_bit(name, n, dtype):
    k, r = kernel_pair(name)
    nstate, build, options = CASES[name]
    for opts in options:
        p1, g, *s1 = arrays(n, dtype, nstate)
        p2, s2 = p1.copy(), [a.copy() for a in s1]
        g0 = g.copy()
        k(p1, g, *build(s1, opts))
        r(p2, g, *build(s2, opts))
        assert np.array_equal(p1, p2, equal_nan=True), (name, opts)
        for a, b in zip(s1, s2):
            assert np.array_equal(a, b, equal_nan=True), (name, opts)
        assert np.array_equal(g, g0)


def test_adam_first_step_by_hand():
    # step 1: m = 0.1 g, v = 0.001 g^2, bias corrections 0.1 and 0.001:
    # p -= lr * (m / 0.1) / (sqrt(v) / sqrt(0.001) + eps) = lr * g / (|g| + eps)
    p = np.array([1.0, -2.0])
    g = np.array([0.5, -4.0])
    m, v = np.zeros(2), np.zeros(2)
    lr = 0.01
    KA.adam_step(p, g, m, v, m[:0], 0.0, 1.0, 0.9, 0.999, 1e-8, lr / 0.1, 0.001 ** 0.5,
                 False, False)
    np.testing.assert_allclose(p, [1.0 - lr * 0.5 / (0.5 + 1e-8), -2.0 + lr * 4 / (4 + 1e-8)],
                               rtol=1e-14)
    np.testing.assert_allclose(m, 0.1 * g, rtol=1e-15)
    np.testing.assert_allclose(v, 0.001 * g * g, rtol=1e-15)


def test_adagrad_two_steps_by_hand():
    p = np.array([3.0])
    s = np.array([0.0])
    KR.adagrad_step(p, np.array([2.0]), s, 0.0, 0.0, 0.5, False)      # s = 4, p -= 0.5 * 2 / 2
    assert s.tolist() == [4.0] and p.tolist() == [2.5]
    KR.adagrad_step(p, np.array([3.0]), s, 0.0, 0.0, 0.5, False)      # s = 13, p -= 1.5 / sqrt(13)
    np.testing.assert_allclose(p, [2.5 - 1.5 / 13 ** 0.5], rtol=1e-15)


def test_length_mismatch_is_an_error_not_a_write_past_the_end():
    p, g = np.ones(4), np.ones(4)
    with pytest.raises(ValueError, match="adam_step"):
        KA.adam_step(p, g, np.zeros(3), np.zeros(4), p[:0], 0.0, 1.0, 0.9, 0.999, 1e-8, 0.1, 0.1,
                     False, False)
    with pytest.raises(ValueError, match="rmsprop_step"):
        KR.rmsprop_step(p, g, np.zeros(4), p[:0], p[:0], 0.1, 0.9, 1e-8, 0.0, 0.0, True, False)


def det_outputs():
    """Three steps of every kernel (last option set) on a parameter big enough for the
    parallel path, as bytes."""
    res = []
    for name in sorted(CASES):
        k, _ = kernel_pair(name)
        nstate, build, options = CASES[name]
        p, g, *s = arrays(5 * K0.CHUNK + 77, np.float32, nstate, seed=5)
        for _ in range(3):
            k(p, g, *build(s, options[-1]))
        res.append(b"".join(a.tobytes() for a in [p, *s]))
    return res


def test_one_and_two_threads_agree_bit_for_bit():
    one, two = outputs_on_1_and_2_threads(det_outputs)
    assert one == two


@pytest.mark.slow
def test_one_three_and_four_threads_agree_in_a_subprocess():
    res = run_1_3_4_threads("test_optim_family_kernels")
    assert res.returncode == 0, res.stderr[-3000:]
    assert res.stdout.strip().endswith("SAME"), res.stdout
