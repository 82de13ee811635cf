"""The ``pi`` subset: the few tests run under emulated Raspberry Pi roots (tools/pi.sh, docs/pi.md).

Compiling under qemu is ~50x slower than natively, so the subset covers each kernel family
once instead of every case: the memory model and its specification blocks, kernel against its
numpy twin and 1-vs-2-thread determinism for elementwise, reduce, indexing, matmul and the
optimizer kernels, the losses, and one short training run. Run it with ``pytest -m pi``.
"""
import pytest

# Node ids (a whole file when ending in "::"; a test name also takes all its parametrizations).
PI_SUBSET = (
    "tests/spec/test_memory_model_spec.py::",
    "tests/memory/test_arena.py::",
    "tests/memory/test_tensor_memory.py::test_stale_temporary_raises_on_every_path",
    "tests/memory/test_tensor_memory.py::test_memory_limit_error_leaves_tensors_and_arena_intact",
    "tests/kernels/test_elementwise.py::test_binary[1000-float32]",
    "tests/kernels/test_elementwise.py::test_deterministic_one_vs_two_threads",
    "tests/kernels/test_reduce.py::test_reduce_3d_matches_ref[200-float32]",
    "tests/kernels/test_reduce.py::test_determinism_one_vs_two_threads",
    "tests/kernels/test_indexing.py::test_index_select_and_gather[float32]",
    "tests/kernels/test_indexing.py::test_determinism_one_vs_two_threads",
    "tests/kernels/test_matmul.py::test_gemm_matches_ref[67-131-29-float32]",
    "tests/kernels/test_matmul.py::test_deterministic_1_vs_2_threads",
    "tests/kernels/test_vecmat.py::test_row_matches_blocked_row_bit_for_bit[rows-float32]",
    "tests/kernels/test_vecmat.py::test_row_matches_blocked_row_bit_for_bit[cols-float32]",
    "tests/kernels/test_vecmat.py::test_row_matches_blocked_row_bit_for_bit[cols-float64]",
    "tests/kernels/test_optim_kernels.py::test_sgd_step_matches_ref_twin_bit_for_bit[0-float32]",
    "tests/kernels/test_optim_kernels.py::test_one_and_two_threads_agree_bit_for_bit",
    "tests/net/test_loss.py::test_loss_values_by_hand",
    "tests/net/test_train.py::test_mlp_fits_sine_with_plain_sgd",
)


def _in_subset(nodeid, entry):
    if entry.endswith("::"):
        return nodeid.startswith(entry)
    return nodeid == entry or (nodeid.startswith(entry + "[") and "[" not in entry)


def pytest_collection_modifyitems(config, items):
    """Mark the subset's tests ``pi``; with ``-m pi`` on a whole collection, a stale entry is an error."""
    matched = set()
    for item in items:
        for entry in PI_SUBSET:
            if _in_subset(item.nodeid, entry):
                item.add_marker(pytest.mark.pi)
                matched.add(entry)
    files = {item.nodeid.split("::")[0] for item in items}
    stale = [e for e in PI_SUBSET if e not in matched and e.split("::")[0] in files]
    if stale and "pi" in (config.option.markexpr or ""):
        raise pytest.UsageError("tests/conftest.py PI_SUBSET names tests that do not exist: "
                                + ", ".join(stale))


# -- NEWCH_SUITE_COMPILE_REPORT=path: what the suite compiled (this process only: not the
# subprocesses tests start), grouped by kernel module and kernel, written at session end
# (``newch.kernels.report.summary``; the raw records go to ``path.json``). docs/kernels.md.
def pytest_sessionfinish(session, exitstatus):
    import json
    import os
    import sys
    path = os.environ.get("NEWCH_SUITE_COMPILE_REPORT")
    report = sys.modules.get("newch.kernels.report")
    if not path:
        return
    worker = getattr(session.config, "workerinput", None)
    if worker is not None:                  # under pytest-xdist: one report per worker
        path = f"{path}.{worker['workerid']}"
    elif getattr(session.config.option, "numprocesses", None):
        return                              # the xdist controller runs no test
    recs = report.records() if report is not None else []
    with open(path, "w") as f:
        f.write((report.summary(recs) if report is not None else "no kernel compiled") + "\n")
    with open(path + ".json", "w") as f:
        json.dump(recs, f)


# -- pytest-xdist (`python -m pytest -n auto`, the README's command): one worker per core, at
# most 4. Each worker compiles the kernels its tests use (all share the on-disk cache, so a
# kernel another worker already saved is loaded), and each peaks at about 1.2 GiB RSS (empty
# cache, 2 workers): more workers would mostly repeat compiles and multiply that memory.
@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config):
    import os
    return max(1, min(4, os.cpu_count() or 1))
