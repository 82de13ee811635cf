"""Threads: a shared context stays correct; each thread can have its own current context."""
import sys
import threading
import time

import numpy as np
import pytest

import newch
from newch.context import track
from newch.errors import NcError
from newch.memory import Arena
from newch.ops.alloc import data


def _run(*fns):
    errors = []

    def guarded(fn):
        def run():
            try:
                fn()
            except BaseException as e:      # noqa: BLE001  (re-raised in the main thread)
                errors.append(e)
        return run
    ts = [threading.Thread(target=guarded(f)) for f in fns]
    for t in ts:
        t.start()
    for t in ts:
        t.join(60)
    if errors:
        raise errors[0]


@pytest.fixture
def fast_switching():
    """Switch threads every microsecond so races show up within a second."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(old)


def test_shared_arena_never_hands_a_live_storage_reused_bytes(fast_switching):
    # NOTE: the reported race: alloc read the scope's generation after bumping, so a
    # step_end() in between gave a live storage bytes the next step handed out again.
    a = Arena(block_bytes=1 << 16)
    stop = time.monotonic() + 1.5
    bad = []

    def allocate(k):
        def run():
            i = 0
            while time.monotonic() < stop:
                i = (i + 1) % 50
                v = k * 50 + i
                st = a.alloc(256)
                buf = st.buf        # NOTE: cut from the block on each read: read it once
                buf[:] = v
                if st.gen.alive and not (buf == v).all():
                    bad.append(v)
        return run

    def end_steps():
        while time.monotonic() < stop:
            a.step_end()
    _run(allocate(0), allocate(1), allocate(2), end_steps)
    assert not bad
    assert a.in_use >= 0


def test_shared_context_tensors_are_right_or_stale_never_wrong(fast_switching):
    c = newch.Context(backend="ref", block_bytes=1 << 16)
    stop = time.monotonic() + 1.0
    bad = []

    def compute(k):
        def run():
            with c:
                while time.monotonic() < stop:
                    try:
                        x = newch.full((64,), float(k))
                        y = x * 2 + 1
                        v = y.tolist()
                    except NcError:
                        continue                        # freed by the other thread: allowed
                    if v != [2.0 * k + 1] * 64:
                        bad.append(v[:3])
        return run

    def end_steps():
        while time.monotonic() < stop:
            c.step_end()
            time.sleep(0.0005)
    _run(compute(3), compute(5), end_steps)
    assert not bad


def test_step_end_on_another_thread_waits_for_an_op_in_flight():
    c = newch.Context(backend="ref")
    with c:
        x = newch.full((1000,), 7.0)
    started, seen = threading.Event(), []

    @track
    def slow_op(t):
        a = data(t, "slow_op")
        started.set()
        time.sleep(0.3)                                 # as a long nogil kernel would
        seen.append(float(a.sum()))

    def op():
        with c:
            slow_op(x)

    def end():
        started.wait(5)
        t0 = time.monotonic()
        c.step_end()
        waited.append(time.monotonic() - t0)
    waited = []
    _run(op, end)
    assert seen == [7000.0]
    assert waited[0] > 0.2
    assert not x.is_alive


def test_release_on_another_thread_waits_for_an_op_in_flight():
    c = newch.Context(backend="ref")
    with c:
        x = newch.full((100,), 2.0)
    started, seen = threading.Event(), []

    @track
    def slow_op(t):
        a = data(t, "slow_op")
        started.set()
        time.sleep(0.2)
        seen.append(float(a.sum()))

    def op():
        with c:
            slow_op(x)

    def rel():
        started.wait(5)
        newch.release(x)
    _run(op, rel)
    assert seen == [200.0] and not x.is_alive


def test_ops_started_during_step_end_see_the_new_step():
    c = newch.Context(backend="ref")
    with c:
        x = newch.ones(10)
        c.step_end()
        with pytest.raises(NcError):
            x + 1


def test_with_context_is_per_thread_and_nests():
    outer, inner = newch.Context(backend="ref"), newch.Context(backend="ref")
    base = newch.default_context()
    seen = {}

    def other():
        seen["other"] = newch.default_context()
    with outer:
        assert newch.default_context() is outer
        with inner:
            assert newch.default_context() is inner
            _run(other)
        assert newch.default_context() is outer
    assert newch.default_context() is base
    assert seen["other"] is base


def test_tensors_are_allocated_in_the_current_context():
    c = newch.Context(backend="ref")
    with c:
        x = newch.zeros(1000)
        assert c.mem_stats()["arena_bytes_in_use"] >= 4000
    newch.step_end()                                    # the default context's step
    assert x.is_alive
    c.step_end()
    assert not x.is_alive


def test_persistent_depth_is_per_thread():
    c = newch.Context(backend="ref")
    inside, made = threading.Event(), threading.Event()
    kinds = {}

    def keeper():
        with c, c.persistent():
            inside.set()
            made.wait(5)
            kinds["keeper"] = newch.zeros(3).is_persistent

    def other():
        inside.wait(5)
        with c:
            kinds["other"] = newch.zeros(3).is_persistent
        made.set()
    _run(keeper, other)
    assert kinds == {"keeper": True, "other": False}


def _train(seed, steps=15):
    """A small regression trained with step_end() every step; returns losses and weights."""
    import newch.nn as nn
    import newch.nn.functional as F
    newch.default_context().manual_seed(seed)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
    opt = newch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    losses = []
    for _ in range(steps):
        x = newch.randn(32, 8)
        y = x.sum(1, keepdim=True)
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
        newch.step_end()
    return losses, [p.detach().numpy().copy() for p in model.parameters()]


def test_two_threads_train_side_by_side_bit_for_bit_as_alone():
    alone = {}
    for seed in (1, 2):
        with newch.Context(backend="ref"):
            alone[seed] = _train(seed)
    together = {}

    def trainer(seed):
        def run():
            with newch.Context(backend="ref"):
                together[seed] = _train(seed)
        return run
    _run(trainer(1), trainer(2))
    for seed in (1, 2):
        assert together[seed][0] == alone[seed][0]
        for p, q in zip(together[seed][1], alone[seed][1]):
            assert np.array_equal(p, q)
    assert alone[1][0] != alone[2][0]


def test_op_that_must_wait_for_another_threads_step_end_raises_instead_of_reading_on():
    c = newch.Context(backend="ref")
    started, result = threading.Event(), {}

    @track
    def op_releasing_scratch():
        scratch = newch.zeros(10)
        started.set()
        deadline = time.monotonic() + 5
        while not c.guard.draining and time.monotonic() < deadline:
            time.sleep(0.001)                       # the other thread's step_end() now waits
        newch.release(scratch)                      # needs the exclusive section it holds

    def op():
        with c:
            try:
                op_releasing_scratch()
                result["op"] = "returned"
            except NcError as e:
                result["op"] = str(e)

    def end():
        started.wait(5)
        c.step_end()
        result["step_end"] = "done"
    _run(op, end)
    assert result["step_end"] == "done"
    assert "step_end() ran on another thread" in result["op"]


def test_public_entry_points_are_tracked():
    import newch.nn.functional as F
    for fn in (newch.add, newch.Tensor.__add__, newch.Tensor.item, newch.Tensor.numpy,
               newch.Tensor.backward, F.relu, F.linear, newch.optim.SGD.step,
               newch.autograd.backward, newch.matmul):
        assert getattr(fn, "newch_tracked", False), fn
