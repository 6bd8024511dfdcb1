"""One function run in a forked child process while the caller goes on working: how an
evaluation runs its two block co-citation oracles beside its baselines, on two cores.

Fork, not spawn: the child sees the caller's memory (the index records) as it was at the
fork, without pickling it; only the function's result comes back, pickled through a pipe.
Memory: the pages the child reads are shared until Python's reference counts touch them, so
at worst the child copies what it reads (the garbage collector's own walks are kept off the
shared objects with ``gc.freeze``).  Where fork is missing (Windows), one core is all there
is, or the fork fails, the function runs in the caller when its result is asked for: the
same value either way, as the functions handed over are pure.  Errors differ by where the
function ran: in the child, an error (or the child's death: killed, out of memory) comes back
as :class:`ChildFailed` with its traceback; in the caller, the error itself is raised.
Leaving the ``with`` block early stops the child.

>>> with Forked(lambda: sum(range(10))) as pending:
...     mine = 2 + 2
...     theirs = pending.result()
>>> mine, theirs
(4, 45)
"""
from __future__ import annotations

import gc
import multiprocessing
import os
import traceback
from collections.abc import Callable
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from types import TracebackType
from typing import Any, Generic, TypeVar, cast

T = TypeVar("T")


class ChildFailed(RuntimeError):
    """The forked child raised or died: the message carries its traceback or its exit code."""


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity where the system has one)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def can_fork() -> bool:
    """Whether a child can be forked and there is a second core for it to run on."""
    return ("fork" in multiprocessing.get_all_start_methods() and usable_cores() > 1
            and not multiprocessing.current_process().daemon)  # a daemon may not have children


class Forked(Generic[T]):
    """``function()`` in a forked child (``parallel`` and :func:`can_fork`), else in the
    caller at :meth:`result`; a context manager that stops a child still running at exit."""

    def __init__(self, function: Callable[[], T], parallel: bool = True) -> None:
        self._function = function
        self._child: BaseProcess | None = None
        self._reader: Connection | None = None
        self._outcome: tuple[bool, Any] | None = None  # (ok, value or the error raised)
        if parallel and can_fork():
            self._start()

    def _start(self) -> None:
        context = multiprocessing.get_context("fork")
        reader, writer = context.Pipe(duplex=False)
        child = context.Process(target=_run_and_send, args=(self._function, writer), daemon=True)
        gc.freeze()  # the child's collector leaves the shared objects alone (fewer copies)
        try:
            child.start()
        except OSError:  # no memory or processes left for a fork: run in the caller instead
            reader.close()
            return
        finally:
            gc.unfreeze()
            writer.close()  # the child holds the only writer: its death ends the pipe
        self._child, self._reader = child, reader

    @property
    def forked(self) -> bool:
        """Whether the function runs in a forked child."""
        return self._child is not None

    def result(self) -> T:
        """The function's value (waiting for the child); :class:`ChildFailed` if it failed
        in the child, its own error if it ran in the caller (raised again when asked again)."""
        if self._outcome is None:
            try:
                self._outcome = (True, self._function() if self._child is None
                                 else self._receive())
            except Exception as error:
                self._outcome = (False, error)
        ok, outcome = self._outcome
        if not ok:
            raise outcome
        return cast(T, outcome)

    def _receive(self) -> Any:
        assert self._reader is not None and self._child is not None
        try:
            ok, payload = self._reader.recv()
        except EOFError:
            self._child.join()
            raise ChildFailed(f"the forked child died (exit code {self._child.exitcode}) "
                              "before sending its result") from None
        finally:
            self._reader.close()
        self._child.join()
        if not ok:
            raise ChildFailed(f"the forked child failed:\n{payload}")
        return payload

    def __enter__(self) -> Forked[T]:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        if self._child is not None and self._child.is_alive():
            self._child.terminate()
            self._child.join()
        if self._reader is not None and not self._reader.closed:
            self._reader.close()


def _run_and_send(function: Callable[[], Any], writer: Connection) -> None:
    try:
        message: tuple[bool, Any] = (True, function())
    except BaseException:  # noqa: BLE001 -- everything goes back to the parent
        message = (False, traceback.format_exc())
    try:
        writer.send(message)
    except Exception:  # noqa: BLE001 -- an unpicklable value: say so instead
        writer.send((False, traceback.format_exc()))
    finally:
        writer.close()
