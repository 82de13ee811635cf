"""Execute notebooks top to bottom in a real Jupyter kernel; fail on the first error.

    python tools/run_notebook.py notebooks/quickstart.ipynb [...]

Used by .ci/run's notebook stage (needs the `notebook` extra: nbclient, ipykernel, matplotlib).
"""
import sys
import time

import nbformat
from nbclient import NotebookClient


def run(path):
    nb = nbformat.read(path, as_version=4)
    t0 = time.perf_counter()
    NotebookClient(nb, timeout=600, kernel_name="python3", allow_errors=False).execute()
    print(f"{path}: {len(nb.cells)} cells ran in {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    for p in sys.argv[1:] or ["notebooks/quickstart.ipynb"]:
        run(p)
