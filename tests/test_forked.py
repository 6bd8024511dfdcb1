"""relatedpages.evaluation.forked: a function in a forked child gives what it gives in the
caller; its errors and its death come back as ChildFailed; leaving early stops it."""
from __future__ import annotations

import os
import time

import pytest

from relatedpages.evaluation.forked import ChildFailed, Forked, can_fork

needs_fork = pytest.mark.skipif(not can_fork(), reason="needs fork and a second core")


@needs_fork
def test_the_child_computes_while_the_caller_works_and_sees_the_caller_s_memory():
    big = list(range(200_000))  # seen by the child without pickling
    with Forked(lambda: (os.getpid(), sum(big), {"nested": [1.5, "x"]})) as pending:
        mine = sum(big)
        pid, theirs, payload = pending.result()
    assert pending.forked and pid != os.getpid() and theirs == mine
    assert payload == {"nested": [1.5, "x"]}


def test_without_parallel_the_function_runs_in_the_caller_once():
    calls = []
    with Forked(lambda: calls.append(os.getpid()) or len(calls), parallel=False) as pending:
        assert calls == [] and not pending.forked  # not before its result is asked for
        assert pending.result() == 1 and pending.result() == 1
    assert calls == [os.getpid()]


def _raise() -> None:
    raise ValueError("a bad parameter")


@needs_fork
def test_an_error_in_the_child_comes_back_with_its_traceback_every_time_it_is_asked():
    with Forked(_raise) as pending:
        for _ in range(2):
            with pytest.raises(ChildFailed) as failed:
                pending.result()
            assert "ValueError: a bad parameter" in str(failed.value)
            assert "_raise" in str(failed.value)


def test_in_the_caller_an_error_is_itself_every_time_it_is_asked():
    with Forked(_raise, parallel=False) as pending:
        for _ in range(2):
            with pytest.raises(ValueError, match="a bad parameter"):
                pending.result()


def test_a_fork_that_fails_runs_the_function_in_the_caller(monkeypatch):
    import multiprocessing.process

    def no_fork(self):
        raise OSError(12, "Cannot allocate memory")

    monkeypatch.setattr(multiprocessing.process.BaseProcess, "start", no_fork)
    with Forked(os.getpid) as pending:
        assert not pending.forked and pending.result() == os.getpid()


@needs_fork
def test_a_child_that_dies_or_returns_what_cannot_be_sent_is_a_clear_error():
    with Forked(lambda: os._exit(3)) as pending, pytest.raises(ChildFailed, match="exit code 3"):
        pending.result()
    with Forked(lambda: lambda: None) as pending, pytest.raises(ChildFailed, match="pickle"):
        pending.result()


@needs_fork
def test_leaving_early_stops_the_child():
    with pytest.raises(KeyError):
        with Forked(lambda: time.sleep(60)) as pending:
            child = pending._child
            raise KeyError("the caller failed first")
    assert not child.is_alive() and child.exitcode is not None
