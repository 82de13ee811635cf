"""Names every docstring example may use: ``newch`` and ``np`` (run with --doctest-modules newch)."""
import numpy as np
import pytest


@pytest.fixture(autouse=True)
def _doctest_names(doctest_namespace):
    import newch
    doctest_namespace["newch"] = newch
    doctest_namespace["np"] = np
