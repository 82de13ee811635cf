"""Record the golden outputs of tests/run/scripts under real PyTorch (+ torchvision).

    python tools/record_golden.py PYTHON_WITH_TORCH

Runs each case of tests/run/golden_cases.py with that interpreter (which must import the real
``torch`` and ``torchvision``) on the small MNIST root the tests use, masks the numbers, and
writes tests/run/golden/<name>.txt with the torch version in its first line.
"""
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "run"))

from golden_cases import CASES, mask  # noqa: E402
from scripts_data import make_corpus, make_mnist_root  # noqa: E402


def main(python):
    version = subprocess.run([python, "-c", "import torch, torchvision; print(torch.__version__, "
                              "torchvision.__version__)"], capture_output=True, text=True,
                             check=True).stdout.strip()
    with tempfile.TemporaryDirectory() as tmp:
        data = make_mnist_root(os.path.join(tmp, "data"))
        for name, args in CASES.items():
            corpus = make_corpus(os.path.join(tmp, "corpus.txt"))
            args = [a.format(data=data, out=os.path.join(tmp, "out"), corpus=corpus) for a in args]
            res = subprocess.run([python, os.path.join(ROOT, "tests", "run", "scripts", name + ".py")]
                                 + args, capture_output=True, text=True, cwd=tmp, timeout=600)
            if res.returncode:
                raise SystemExit(f"{name} failed under torch:\n{res.stderr[-2000:]}")
            path = os.path.join(ROOT, "tests", "run", "golden", name + ".txt")
            with open(path, "w") as f:
                f.write(f"# recorded under torch/torchvision {version}\n" + mask(res.stdout) + "\n")
            print("wrote", path)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else sys.executable)
