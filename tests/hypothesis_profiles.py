"""Hypothesis profiles: deterministic in CI, exploring locally, scaled up for the fuzz run.

Chosen once per pytest run by :func:`load_profile` (called from ``tests/conftest.py``):

- ``ci`` when ``CI=true``: derandomised (the same examples on every run and every clone, so
  a change that never touched a module cannot fail its properties), no example database,
  no deadline (timing is not a property), failing examples printed with their
  ``@reproduce_failure`` blob so they can be replayed;
- ``dev`` otherwise: fresh random examples on every run, remembered in ``.hypothesis/``
  (ignored by git), failures printed the same way;
- ``fuzz`` for ``scripts/fuzz``: like ``dev``, and every property test's own
  ``max_examples`` multiplied by ``RELATEDPAGES_FUZZ_SCALE``.

``HYPOTHESIS_PROFILE`` picks one of them explicitly.
"""
from __future__ import annotations

import os
import time
from collections.abc import Iterable

import pytest
from hypothesis import HealthCheck, Phase, settings

CI_PROFILE, DEV_PROFILE, FUZZ_PROFILE = "ci", "dev", "fuzz"
#: Environment: the factor applied to each property test's max_examples under ``fuzz``.
FUZZ_SCALE_ENV = "RELATEDPAGES_FUZZ_SCALE"
#: Environment: seconds after which the fuzz run starts no further test (they are skipped
#: and counted as not run; the run then fails, since it did not cover everything).
FUZZ_BUDGET_ENV = "RELATEDPAGES_FUZZ_SECONDS"
#: The marker every Hypothesis test gets, so ``pytest -m property`` selects them.
PROPERTY_MARKER = "property"
# The settings attribute Hypothesis keeps on a @given test (stable since Hypothesis 3; the
# fuzz run refuses to start without it instead of silently running the usual counts).
_SETTINGS_ATTRIBUTE = "_hypothesis_internal_use_settings"

settings.register_profile(
    CI_PROFILE,
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(DEV_PROFILE, print_blob=True)
settings.register_profile(
    FUZZ_PROFILE,
    deadline=None,
    print_blob=True,
    phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


def chosen_profile(environ: dict[str, str] | os._Environ[str] = os.environ) -> str:
    """The profile for this run: ``HYPOTHESIS_PROFILE``, else ``ci`` under ``CI=true``."""
    explicit = environ.get("HYPOTHESIS_PROFILE", "").strip()
    if explicit:
        if explicit not in (CI_PROFILE, DEV_PROFILE, FUZZ_PROFILE):
            raise pytest.UsageError(
                f"HYPOTHESIS_PROFILE={explicit!r}: use {CI_PROFILE}, {DEV_PROFILE} or {FUZZ_PROFILE}"
            )
        return explicit
    return CI_PROFILE if environ.get("CI", "").lower() == "true" else DEV_PROFILE


def fuzz_scale(environ: dict[str, str] | os._Environ[str] = os.environ) -> int:
    """``RELATEDPAGES_FUZZ_SCALE`` as a positive int (default 20)."""
    raw = environ.get(FUZZ_SCALE_ENV, "20")
    try:
        scale = int(raw)
    except ValueError:
        raise pytest.UsageError(f"{FUZZ_SCALE_ENV}={raw!r} is not an integer") from None
    if scale < 1:
        raise pytest.UsageError(f"{FUZZ_SCALE_ENV}={raw!r} must be at least 1")
    return scale


def load_profile() -> str:
    profile = chosen_profile()
    settings.load_profile(profile)
    return profile


def mark_and_scale(items: Iterable[pytest.Item], profile: str) -> None:
    """Mark every Hypothesis test ``property``; under ``fuzz`` scale its max_examples."""
    scale = fuzz_scale() if profile == FUZZ_PROFILE else 1
    for item in items:
        function = getattr(item, "obj", None)
        if not getattr(function, "is_hypothesis_test", False):
            continue
        item.add_marker(PROPERTY_MARKER)
        if scale == 1:
            continue
        own = getattr(function, _SETTINGS_ATTRIBUTE, None)
        if not isinstance(own, settings):
            raise pytest.UsageError(
                f"cannot scale {item.nodeid}: this Hypothesis keeps no {_SETTINGS_ATTRIBUTE}"
            )
        if getattr(function, "_relatedpages_scaled", False):
            continue  # a parametrised test shares one function: scale it once
        setattr(function, _SETTINGS_ATTRIBUTE,
                settings(own, max_examples=own.max_examples * scale))
        function._relatedpages_scaled = True


class FuzzBudget:
    """Skip tests not yet started once ``RELATEDPAGES_FUZZ_SECONDS`` have passed."""

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds
        self.started = time.monotonic()
        self.not_run: list[str] = []

    @classmethod
    def from_environment(cls) -> FuzzBudget:
        raw = os.environ.get(FUZZ_BUDGET_ENV, "").strip()
        if not raw:
            return cls(None)
        try:
            seconds = float(raw)
        except ValueError:
            raise pytest.UsageError(f"{FUZZ_BUDGET_ENV}={raw!r} is not a number") from None
        if seconds <= 0:
            raise pytest.UsageError(f"{FUZZ_BUDGET_ENV}={raw!r} must be positive")
        return cls(seconds)

    def check(self, item: pytest.Item) -> None:
        if self.seconds is not None and time.monotonic() - self.started > self.seconds:
            self.not_run.append(item.nodeid)
            pytest.skip(f"fuzz time budget of {self.seconds:g} s spent")
