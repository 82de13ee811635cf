"""Imports point down the layers; the few that point up are function-local and say why.

Layers, bottom to top (docs/contributing.md, "Where things live"):
leaves (errors, dtypes, device...) < memory < kernels < context < graph < tensor < generator
< ops < autograd < net / optim / data < serialization < train / vision < the ``newch`` namespace.
"""
from . import imports_scan as S

LAYERS = [
    ("newch.errors", 0), ("newch.dtypes", 0), ("newch.device", 0), ("newch._cache", 0),
    ("newch._aliases", 0), ("newch.accelerator", 0), ("newch.backends", 0), ("newch.cuda", 0),
    ("newch.onnx", 0), ("newch.format", 0),
    ("newch.memory", 10), ("newch.kernels", 20), ("newch.context", 30), ("newch.runtime", 30),
    ("newch.graph", 40), ("newch.tensor", 41), ("newch.generator", 42), ("newch.ops", 43),
    ("newch.linalg", 44),
    ("newch.autograd", 50),
    ("newch.net", 60), ("newch.optim", 60), ("newch.data", 60),
    ("newch.serialization", 65),
    ("newch.train", 70), ("newch.vision", 70),
    ("newch.run", 90), ("newch.torch_hook", 90), ("newch.demo", 90), ("newch.tour", 90),
    ("newch", 90),
]


def layer(module):
    """The layer of a module: its longest listed prefix."""
    best = None
    for prefix, rank in LAYERS:
        if module == prefix or module.startswith(prefix + "."):
            if best is None or len(prefix) > len(best[0]):
                best = (prefix, rank)
    return best


def _has_note(path, line):
    lines = path.read_text().splitlines()
    return "NOTE" in lines[line - 1] or (line >= 2 and "NOTE" in lines[line - 2])


def upward_imports():
    """(file, line, from module, to module, is_local, has a NOTE) for every import that points up."""
    out = []
    for path in S.files():
        mod = S.module_name(path)
        here = layer(mod)
        assert here is not None, f"{mod} has no layer: add it to LAYERS in {__file__}"
        for target, line, local, _ in S.imports(path):
            there = layer(target)
            if there is None:
                continue
            if there[1] > here[1]:
                out.append((path, line, mod, target, local, _has_note(path, line)))
    return out


def test_every_module_has_a_layer():
    missing = [S.module_name(p) for p in S.files() if layer(S.module_name(p)) is None]
    assert not missing, f"modules without a layer: {missing}"


def test_no_module_level_import_points_up():
    bad = [f"{p.relative_to(S.ROOT.parent)}:{line}: {m} -> {t}"
           for p, line, m, t, local, _ in upward_imports() if not local]
    assert not bad, "module-level imports that point up a layer:\n" + "\n".join(bad)


def test_upward_function_local_imports_carry_a_note():
    bad = [f"{p.relative_to(S.ROOT.parent)}:{line}: {m} -> {t}"
           for p, line, m, t, local, note in upward_imports() if local and not note]
    assert not bad, ("function-local imports that point up without a `# NOTE:` saying why:\n"
                     + "\n".join(bad))


def test_the_allowed_upward_imports_are_few():
    """Only Module.fit / evaluate / predict (net -> train, the documented exception) reach up;
    tensor.py calls the ops and the engine through ``tensor.UPPER``, which those layers fill."""
    pairs = {(m, t.split(".")[1]) for _, _, m, t, _, _ in upward_imports()}
    allowed = {("newch.net.module", "train")}
    assert pairs <= allowed, f"new upward imports: {sorted(pairs - allowed)}"


def test_core_and_autograd_form_no_circle():
    """ops / tensor / graph never import autograd (the engine sits above and imports down)."""
    bad = [f"{m} -> {t}" for p in S.files() for m in [S.module_name(p)]
           if layer(m)[1] in (40, 43) for t, _, _, _ in S.imports(p)
           if t == "newch.autograd" or t.startswith("newch.autograd.")]
    assert not bad, bad


def test_scanner_sees_a_known_import():
    """The scanner itself works: ops/arith.py imports ops/launch.py at module level."""
    got = [(t, local) for p in S.files() if S.module_name(p) == "newch.ops.arith"
           for t, _, local, _ in S.imports(p)]
    assert ("newch.ops.launch", False) in got
    assert layer("newch.ops.arith") == ("newch.ops", 43)


def test_tensor_imports_nothing_above_it():
    """tensor.py imports no ops, graph or autograd module, at module level or in a function."""
    got = [t for p in S.files() if S.module_name(p) == "newch.tensor" for t, _, _, _ in S.imports(p)
           if t.startswith(("newch.ops", "newch.autograd", "newch.graph", "newch.net"))]
    assert not got, got


def test_every_upper_entry_is_filled_once_newch_is_imported():
    import sys
    import newch   # noqa: F401  (fills the table)
    T = sys.modules["newch.tensor"]     # NOTE: the attribute newch.tensor is the op, not the module
    missing = [k for k in vars(type(T.UPPER)) if not k.startswith("_") and vars(T.UPPER).get(k) is None]
    assert not missing, missing
