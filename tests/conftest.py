"""Hypothesis profiles for the property tests (tests/test_properties.py).

* `ci`   — fixed and derandomized, so CI runs the same examples every time, within a budget that
           keeps the whole property file under two minutes on a small machine.
* `dev`  — the local default: randomized, a moderate number of examples.
* `soak` — thousands of programs, for a long local run before a release or after a rule change:
           `HYPOTHESIS_PROFILE=soak pytest tests/test_properties.py`.

The profile is chosen by the `HYPOTHESIS_PROFILE` environment variable; without it, `ci` when the
`CI` variable is set and `dev` otherwise.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    derandomize=True,
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
)
settings.register_profile(
    "dev", max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.register_profile(
    "soak", max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))
