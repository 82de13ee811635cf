"""Code above ops/ reaches a Tensor's insides only through its small internal API.

A Tensor's slots (``_a``, ``_s``, ``_rg``, ``_grad``, ``_node``...) are read and written by
``tensor.py`` and the core below autograd (``ops/``, ``graph.py``, ``format.py``). Everything above
goes through ``t._data(op)``, ``t._bump_version()``, ``t._storage``, ``t._alias()`` and the public
properties (docs/contributing.md, "The Tensor's internal API"), so the Tensor's insides can change.
The check parses the files (ast, nothing imported): ``x._a`` or ``getattr(x, "_a")`` on anything
but ``self`` fails.
"""
import ast
import pathlib

from newch.tensor import Tensor

ROOT = pathlib.Path(__file__).resolve().parents[2] / "newch"

# The packages and modules above ops/ (tests/structure/test_import_layers.py has the layers).
UPPER = ("autograd", "net", "optim", "data", "serialization", "train", "vision", "warmup",
         "run.py", "torch_hook.py", "demo.py", "tour.py", "__init__.py")


SLOTS = frozenset(s for s in Tensor.__slots__ if s != "__weakref__")


def upper_files():
    for name in UPPER:
        p = ROOT / name
        yield from (sorted(p.rglob("*.py")) if p.is_dir() else [p])


def slot_reads(src):
    """(line, expression text) of every slot name read or written on something other than self."""
    found = []
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, ast.Attribute) and node.attr in SLOTS:
            if not (isinstance(node.value, ast.Name) and node.value.id == "self"):
                found.append((node.lineno, ast.unparse(node)))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id in ("getattr", "setattr", "hasattr") and len(node.args) >= 2
              and isinstance(node.args[1], ast.Constant) and node.args[1].value in SLOTS):
            found.append((node.lineno, ast.unparse(node)))
    return sorted(found)


def test_the_scan_sees_every_way_of_reaching_a_slot():
    src = ("def f(t, self):\n    t._a[0] = 1\n    x = t._grad._node\n    self._s = 2\n"
           "    getattr(t, '_rg')\n    t.grad = t._data('f')\n")
    assert [line for line, _ in slot_reads(src)] == [2, 3, 3, 5]
    assert slot_reads("def f(t):\n    return t._data('f'), t._storage, t._alias()\n") == []


def test_the_slots_the_scan_guards_are_the_tensors():
    assert {"_a", "_s", "_rg", "_grad", "_node"} <= SLOTS


def test_code_above_ops_reads_no_private_tensor_slot():
    files = list(upper_files())
    assert len(files) > 40          # NOTE: the walk found the packages (a moved ROOT finds none)
    bad = []
    for path in files:
        rel = path.relative_to(ROOT).as_posix()
        bad += [f"newch/{rel}:{line}: {text}" for line, text in slot_reads(path.read_text())]
    assert not bad, ("these read Tensor slots directly; use t._data(op), t._bump_version(), "
                     "t._storage, t._alias() or a public property (docs/contributing.md):\n"
                     + "\n".join(bad))

