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
    "word_lm": ["--data", "{corpus}", "--epochs", "1"],
}

_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


def mask(text):
    """The output with every number replaced by '#' and runs of blanks made one space
    (a number's width moves the padding around it)."""
    return "\n".join(re.sub(r"[ \t]+", " ", _NUMBER.sub("#", line)).strip()
                     for line in text.strip().splitlines())
