"""Read the imports of every file under newch/ (ast, nothing is imported) for the structure tests."""
import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2] / "newch"


def module_name(path):
    """``newch/ops/arith.py`` -> ``newch.ops.arith``; a package's ``__init__`` -> the package."""
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _resolve(mod, path, node):
    """The absolute module an ImportFrom names (relative levels resolved)."""
    if node.level == 0:
        return node.module or ""
    base = mod.split(".")
    if path.name != "__init__.py":
        base = base[:-1]
    base = base[:len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def imports(path):
    """Yield (target module, line, is_local, line text) for every newch import in ``path``.

    ``from . import x`` yields ``package.x``; ``is_local`` is True inside a function or class body.
    """
    src = path.read_text()
    lines = src.splitlines()
    tree = ast.parse(src)
    mod = module_name(path)
    top = set(map(id, tree.body))

    def walk(node, local):
        for child in ast.iter_child_nodes(node):
            inner = local or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda))
            if isinstance(child, ast.ImportFrom):
                target = _resolve(mod, path, child)
                names = [a.name for a in child.names]
                for n in names if target in ("newch",) or not child.module else [None]:
                    full = target if n is None else target + "." + n
                    yield full, child.lineno, local, lines[child.lineno - 1]
            elif isinstance(child, ast.Import):
                for a in child.names:
                    yield a.name, child.lineno, local, lines[child.lineno - 1]
            yield from walk(child, inner)

    for target, line, local, text in walk(tree, False):
        if target.startswith("newch"):
            yield target, line, local, text


def files():
    return sorted(p for p in ROOT.rglob("*.py"))
