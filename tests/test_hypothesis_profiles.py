"""Tests for tests/hypothesis_profiles.py: the profile per run and the fuzz run's scaling."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests import hypothesis_profiles as profiles
from tests.prerequisites import guard

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    ("environ", "profile"),
    [
        ({}, "dev"),
        ({"CI": "true"}, "ci"),
        ({"CI": "TRUE"}, "ci"),
        ({"CI": "false"}, "dev"),
        ({"CI": "true", "HYPOTHESIS_PROFILE": "fuzz"}, "fuzz"),
        ({"HYPOTHESIS_PROFILE": "ci"}, "ci"),
    ],
)
def test_chosen_profile(environ: dict[str, str], profile: str) -> None:
    assert profiles.chosen_profile(environ) == profile


def test_unknown_profile_and_bad_scale_are_usage_errors() -> None:
    with pytest.raises(pytest.UsageError, match="HYPOTHESIS_PROFILE"):
        profiles.chosen_profile({"HYPOTHESIS_PROFILE": "nightly"})
    with pytest.raises(pytest.UsageError, match="integer"):
        profiles.fuzz_scale({profiles.FUZZ_SCALE_ENV: "many"})
    with pytest.raises(pytest.UsageError, match="at least 1"):
        profiles.fuzz_scale({profiles.FUZZ_SCALE_ENV: "0"})
    assert profiles.fuzz_scale({}) == 20


def test_ci_profile_is_derandomised_without_database() -> None:
    ci = settings.get_profile(profiles.CI_PROFILE)
    assert ci.derandomize and ci.database is None and ci.deadline is None and ci.print_blob


def test_this_run_uses_the_profile_its_environment_asks_for() -> None:
    assert settings.default == settings.get_profile(profiles.chosen_profile())


class _Item:
    def __init__(self, function: object) -> None:
        self.obj = function
        self.nodeid = getattr(function, "__name__", "item")
        self.markers: list[str] = []

    def add_marker(self, marker: str) -> None:
        self.markers.append(marker)


def test_mark_and_scale_multiplies_each_tests_own_count(monkeypatch: pytest.MonkeyPatch) -> None:
    @settings(max_examples=7, deadline=None)
    @given(st.integers())
    def prop(x: int) -> None:
        pass

    def plain() -> None:
        pass

    monkeypatch.setenv(profiles.FUZZ_SCALE_ENV, "3")
    items = [_Item(prop), _Item(prop), _Item(plain)]  # a parametrised test shares its function
    profiles.mark_and_scale(items, profiles.FUZZ_PROFILE)  # type: ignore[arg-type]
    assert [item.markers for item in items] == [["property"], ["property"], []]
    assert prop._hypothesis_internal_use_settings.max_examples == 21  # type: ignore[attr-defined]


def test_fuzz_budget_skips_once_spent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(profiles.FUZZ_BUDGET_ENV, "0.000001")
    budget = profiles.FuzzBudget.from_environment()
    with pytest.raises(pytest.skip.Exception):
        budget.check(_Item(len))  # type: ignore[arg-type]
    assert budget.not_run == ["len"]
    monkeypatch.setenv(profiles.FUZZ_BUDGET_ENV, "-1")
    with pytest.raises(pytest.UsageError):
        profiles.FuzzBudget.from_environment()


@pytest.mark.parametrize("args", [["--scale", "0"], ["--scale", "x"], ["--time-limit", "soon"]])
def test_fuzz_script_refuses_bad_options(args: list[str]) -> None:
    done = subprocess.run([str(ROOT / "scripts" / "fuzz"), *args], capture_output=True,
                          text=True, timeout=guard(60))
    assert done.returncode == 2
    assert done.stderr.startswith("fuzz: ") and "Traceback" not in done.stderr
