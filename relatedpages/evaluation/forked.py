"""One function run in a forked child process while the caller goes on working: how an
evaluation runs its two block co-citation oracles beside its baselines, on two cores.

Fork, not spawn: the child sees the caller's memory (the index records) as it was at the
fork, without pickling it; only the function's result comes back, pickled through a pipe.
Where fork is missing (Windows) or one core is all there is, the function runs in the
caller when its result is asked for: the same result either way, as the functions handed
over are pure.  An error in the child comes back as :class:`ChildFailed` with its
traceback; a child that dies (killed, out of memory) too; leaving the ``with`` block early
stops the child.

>>> with Forked(lambda: sum(range(10))) as pending:
...     mine = 2 + 2
...     theirs = pending.result()
>>> mine, theirs
(4, 45)
"""
from __future__ import annotations

import multiprocessing
import os
import traceback
from collections.abc import Callable
from multiprocessing.connection import Connection
from types import TracebackType
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class ChildFailed(RuntimeError):
    """The forked child raised or died: the message carries its traceback or its exit code."""


def can_fork() -> bool:
    """Whether a child can be forked and there is a second core for it to run on."""
    return ("fork" in multiprocessing.get_all_start_methods() and (os.cpu_count() or 1) > 1
            and not multiprocessing.current_process().daemon)  # a daemon may not have children


class Forked(Generic[T]):
    """``function()`` in a forked child (``parallel`` and :func:`can_fork`), else in the
    caller at :meth:`result`; a context manager that stops a child still running at exit."""

    def __init__(self, function: Callable[[], T], parallel: bool = True) -> None:
        self._function = function
        self._child: Any = None
        self._reader: Connection | None = None
        self._done = False
        self._value: Any = None
        if parallel and can_fork():
            context = multiprocessing.get_context("fork")
            self._reader, writer = context.Pipe(duplex=False)
            self._child = context.Process(target=_run_and_send, args=(function, writer),
                                          daemon=True)
            self._child.start()
            writer.close()  # the child holds the only writer: its death ends the pipe

    def result(self) -> T:
        """The function's value (waiting for the child); :class:`ChildFailed` if it failed."""
        if not self._done:
            self._value = self._function() if self._child is None else self._receive()
            self._done = True
        return self._value  # type: ignore[no-any-return]

    def _receive(self) -> Any:
        assert self._reader is not None
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
