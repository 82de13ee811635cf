"""THE table is complete: every public op of newch has a row (or a stated reason not to).

Runs without torch. Public ops are: the callables in ``newch.__all__``, the
Tensor methods, properties and operators, ``newch.nn.functional``,
``newch.nn`` layers, ``newch.nn.init`` and ``newch.optim``. A new public op
without a row in ``optable.py`` fails here until one is added.
"""
import newch

from .optable import NOT_OPS, TABLE

# Tensor attributes that are not operations on values (bookkeeping, Python protocol plumbing).
TENSOR_NOT_OPS = {
    "is_alive": "memory model (newch only)", "is_persistent": "memory model (newch only)",
    "__init__": "refuses direct construction", "__repr__": "printing", "__str__": "printing",
    "__format__": "printing", "__array__": "numpy protocol (copies, see Tensor.numpy)",
    "__iter__": "iteration (covered by unbind)", "__hash__": "identity hash",
    "cuda": "always DeviceUnavailable: newch has no CUDA (tests/run/test_runner.py)",
    "__reduce__": "pickle protocol (tests/memory/test_pickle.py)",
    "__deepcopy__": "copy protocol (tests/memory/test_pickle.py)",
    "__copy__": "copy protocol (tests/memory/test_pickle.py)",
}


def covered():
    return {label for row in TABLE for label in row.calls}


def public_functions():
    out = []
    for name in newch.__all__:
        obj = getattr(newch, name)
        if name in NOT_OPS or isinstance(obj, newch.dtype):
            continue
        if callable(obj):
            out.append(name)
    return out


def tensor_members():
    names = []
    for name, obj in vars(newch.Tensor).items():
        if name in TENSOR_NOT_OPS or (name.startswith("_") and not name.startswith("__")):
            continue
        if name.startswith("__") and not (callable(obj) or isinstance(obj, property)):
            continue
        if name in ("__module__", "__doc__", "__slots__", "__weakref__", "__qualname__",
                    "__firstlineno__", "__static_attributes__", "__dict__"):
            continue
        names.append(name)
    return names


def test_every_function_has_a_row():
    have = covered()
    missing = [n for n in public_functions() if f"torch.{n}" not in have and f"newch.{n}" not in have]
    assert not missing, f"public newch functions without a conformance row: {missing}"


def test_every_tensor_method_has_a_row():
    have = covered()
    missing = [n for n in tensor_members() if f"Tensor.{n}" not in have]
    assert not missing, f"Tensor members without a conformance row: {missing}"


def test_every_nn_and_optim_name_has_a_row():
    have = covered()
    wanted = [f"F.{n}" for n in newch.nn.functional.__all__]
    wanted += [f"nn.{n}" for n in newch.nn.__all__
               if not isinstance(getattr(newch.nn, n), type(newch.nn))]    # submodules have rows
    wanted += [f"nn.init.{n}" for n in newch.nn.init.__all__]
    wanted += [f"optim.{n}" for n in newch.optim.__all__ if n != "required"]
    missing = [n for n in wanted if n not in have]
    assert not missing, f"nn / optim names without a conformance row: {missing}"


def test_row_ids_are_unique():
    ids = [f"{row.name}|{label}" for row in TABLE for label in row.calls]
    assert len(ids) == len(set(ids))
