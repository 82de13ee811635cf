"""tests/ is a package tree, so two test files may share a basename (tests/ops/test_reduce.py and
tests/kernels/test_reduce.py) and pytest still imports each under its own name.

Every directory pytest collects from (it holds a ``test_*.py`` or a ``conftest.py``) is a package
all the way up to ``tests/``; the other directories hold data or scripts run as programs
(``run/scripts``, ``spec/blocks``), whose ``.py`` basenames must then be unique across tests/.
"""
import collections
import pathlib

TESTS = pathlib.Path(__file__).resolve().parents[1]


def collected_dirs(tests=TESTS):
    """Directories under ``tests`` holding a test module or a conftest.py."""
    dirs = [d for d in [tests, *tests.rglob("*")]
            if d.is_dir() and d.name != "__pycache__" and not d.name.startswith(".")]
    return sorted(d for d in dirs if any(d.glob("test_*.py")) or (d / "conftest.py").exists())


def missing_inits(tests=TESTS):
    """Directories from a collected directory up to ``tests`` that lack ``__init__.py``."""
    missing = set()
    for d in collected_dirs(tests):
        while True:
            if not (d / "__init__.py").exists():
                missing.add(d.relative_to(tests.parent).as_posix())
            if d == tests:
                break
            d = d.parent
    return sorted(missing)


def module_names(tests=TESTS):
    """The name pytest imports each .py file under ``tests`` as (basename outside packages)."""
    names = collections.defaultdict(list)
    for path in sorted(tests.rglob("*.py")):
        parts, d = [path.stem], path.parent
        while (d / "__init__.py").exists():
            parts.insert(0, d.name)
            d = d.parent
        names[".".join(parts)].append(path.relative_to(tests.parent).as_posix())
    return names


def test_every_collected_directory_is_a_package_up_to_tests():
    assert len(collected_dirs()) > 10
    assert missing_inits() == [], ("add an empty __init__.py to these test directories, so "
                                   "pytest imports their files by package: " + ", ".join(missing_inits()))


def test_no_two_files_under_tests_import_under_the_same_name():
    clashes = {name: paths for name, paths in module_names().items()
               if len(paths) > 1 and not name.endswith("__init__")}
    assert clashes == {}, f"these files would import under one module name: {clashes}"


def test_the_checks_catch_a_directory_without_init_and_a_clash(tmp_path):
    tests = tmp_path / "tests"
    for d in ("ops", "kernels", "net", "run/scripts"):
        (tests / d).mkdir(parents=True)
        (tests / d / ("gan.py" if d == "run/scripts" else "test_reduce.py")).write_text("")
    for d in ("", "ops"):
        (tests / d / "__init__.py").write_text("")
    assert missing_inits(tests) == ["tests/kernels", "tests/net"]
    names = module_names(tests)
    assert names["tests.ops.test_reduce"] == ["tests/ops/test_reduce.py"]
    # NOTE: kernels/ and net/ are no packages: both files would import as plain test_reduce
    assert names["test_reduce"] == ["tests/kernels/test_reduce.py", "tests/net/test_reduce.py"]
    assert names["gan"] == ["tests/run/scripts/gan.py"]      # a script directory needs no init
