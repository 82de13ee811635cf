"""The example scripts run under the runner and their arguments; how outputs are masked for comparison.

``tools/record_golden.py`` runs the same cases under real PyTorch and writes
``tests/run/golden/<name>.txt``; ``test_scripts.py`` runs them under
``python -m newch.run`` and compares the masked outputs.
"""
import re

CASES = {
    "regression": ["--max-batches", "300"],
    "mnist_cnn": ["--dry-run", "--epochs", "1", "--test-batch-size", "64", "--data", "{data}"],
    "vae": ["--max-batches", "2", "--batch-size", "32", "--data", "{data}", "--out", "{out}"],
    "gan": ["--dry-run"],
}

_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


def mask(text):
    """The output with every number replaced by '#', trailing spaces dropped."""
    return "\n".join(_NUMBER.sub("#", line).rstrip() for line in text.strip().splitlines())
