"""Scripts written for PyTorch run unmodified under newch.run and print what PyTorch printed.

The golden outputs in tests/run/golden were recorded under real PyTorch (tools/record_golden.py),
with every number masked.
"""
import os
import subprocess
import sys

import pytest

from .golden_cases import CASES, mask
from .scripts_data import make_corpus, make_mnist_root

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return make_mnist_root(str(tmp_path_factory.mktemp("data")))


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CASES))
def test_script_output_matches_pytorch(name, data, tmp_path):
    golden = os.path.join(HERE, "golden", name + ".txt")
    if not os.path.exists(golden):
        pytest.skip(f"no golden output recorded for {name}")
    corpus = make_corpus(str(tmp_path / "corpus.txt"))
    args = [a.format(data=data, out=str(tmp_path / "out"), corpus=corpus) for a in CASES[name]]
    env = dict(os.environ, PYTHONPATH=ROOT)
    res = subprocess.run([sys.executable, "-m", "newch.run", "--report",
                          os.path.join(HERE, "scripts", name + ".py")] + args,
                         capture_output=True, text=True, cwd=tmp_path, env=env, timeout=900)
    assert res.returncode == 0, res.stderr[-3000:]
    with open(golden) as f:
        expected = "\n".join(l for l in f.read().splitlines() if not l.startswith("# recorded"))
    assert mask(res.stdout) == expected.strip()
