"""Settings for the conformance suite: a registered hypothesis profile and a clean step per test.

The profile ``newch-conformance`` keeps example counts small, has no deadline
(the first call of a kernel compiles it) and no example database. Each row
runs with its own fixed seed (derived from its id), so a run is reproducible;
``NEWCH_CONFORMANCE_RANDOM=1`` draws fresh examples instead, and
``NEWCH_CONFORMANCE_EXAMPLES=N`` scales every row's example count to about N.
"""
import os

import pytest
from hypothesis import HealthCheck, settings

import newch

settings.register_profile(
    "newch-conformance", deadline=None, database=None, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                           HealthCheck.filter_too_much, HealthCheck.differing_executors])

RANDOM = os.environ.get("NEWCH_CONFORMANCE_RANDOM", "") not in ("", "0")
EXAMPLES = int(os.environ.get("NEWCH_CONFORMANCE_EXAMPLES", "0") or 0)


@pytest.fixture(autouse=True)
def _clean_state():
    """Grad mode on, float32 default, seed 0; the test's temporaries are freed when it ends."""
    newch.set_grad_enabled(True)
    newch.manual_seed(0)
    yield
    newch.set_grad_enabled(True)
    newch.set_default_dtype(newch.float32)
    newch.step_end()
