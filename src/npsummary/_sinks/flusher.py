"""The one background thread that writes pending records, and what runs inside npsummary.

Code can run *inside* npsummary on the same thread, between two of its lines: a signal handler
(on the main thread), and anything the garbage collector triggers on the thread that happens to
allocate (``__del__`` methods, ``weakref`` callbacks, the cleanup of a writer dropped without
``close()``), the flusher thread included. If that code logs, flushes or closes while its thread
holds one of our locks, taking the lock again would deadlock. So:

* Every section that holds a lock of an event file first marks its thread busy
  (:data:`busy`, a per-thread depth) and unmarks it after releasing. A call that finds its own
  thread busy never waits for a lock: it queues its record lock-free for the flusher, asks the
  flusher to flush, or hands its file to the flusher to close (see ``FileSink``).
* The cleanup of a collected ``FileSink`` only puts its file on a ``SimpleQueue`` (lock-free and
  safe in finalizers and signal handlers); the flusher closes it.
* Every wake-up of the flusher goes through that queue too, so no ``threading.Event`` (which
  takes a lock) is set from those places.

Process hooks: pending records are written at interpreter exit (``atexit``), when a
multiprocessing fork/forkserver worker leaves through ``os._exit()`` (``threading``'s exit hooks
run first), and on ``SIGTERM`` — which is how ``multiprocessing.Pool.terminate()`` (and ``with
Pool()``) ends its workers. The ``SIGTERM`` handler is installed with the first event file a
process opens on its main thread; it writes what is pending, then does what was there before: a
Python handler is called, the default action terminates the process by ``SIGTERM`` as before;
``SIG_IGN`` (or a handler not set from Python) is left alone. A ``SIGTERM`` that interrupts the
main thread inside npsummary is handled when that call leaves npsummary; in multiprocessing's
children, a thread sends a SIGTERM again whose handler did not run (``_watch_for_lost_sigterms``).
After ``fork()`` the child starts with fresh locks, an empty queue and no flusher thread.
"""

from __future__ import annotations

import _signal  # type: ignore[import-not-found]  # built in: no file to read (signal.py wraps it)
import atexit
import contextlib
import os
import sys
import threading
import time
from _queue import Empty, SimpleQueue
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

__all__ = ["FLUSHER", "Busy", "Flusher", "busy", "install_exit_hooks", "run_deferred_signal"]


class Busy(threading.local):
    """Per-thread state: how deep this thread is in sections that hold event-file locks, and a
    ``SIGTERM`` that arrived meanwhile (handled when the depth returns to 0)."""

    depth = 0
    deferred_signal: tuple[int, Any] | None = None


busy = Busy()


if TYPE_CHECKING:  # for annotations only: building a Protocol class costs import time
    from typing import Protocol

    class _File(Protocol):
        """What the flusher needs of an event file (``_eventfile.EventFile``)."""

        wake_sent: bool
        deadline: float
        deferred: Any

        def drain(self, *, fsync: bool) -> None: ...

        def close(self) -> None: ...

        def note_failure(self, exc: BaseException) -> None: ...

        def reset_after_fork(self) -> None: ...


class Flusher:
    """One daemon thread that writes pending records for every registered sink state.

    Local files share :data:`FLUSHER`; remote sinks have their own, so a slow or unreachable
    server never delays a local file. The thread exits once nothing is registered and is
    started again by the next registration.
    """

    def __init__(self, name: str = "npsummary-flusher") -> None:
        self._name = name
        self._states: set[_File] = set()  # changed only by single (atomic) set operations
        self._inbox: SimpleQueue[_File | None] = SimpleQueue()  # wake-ups and files to close
        # Guards only the start and the exit of the thread. Re-entrant: a registration from a
        # signal handler or finalizer that interrupted this very section passes (see register).
        self._lock = threading.RLock()
        self._thread: threading.Thread | None = None

    def register(self, state: _File) -> None:
        self._states.add(state)
        with self._lock:
            if self._thread is None:
                thread = threading.Thread(target=self._run, name=self._name, daemon=True)
                # Checked again: a registration that interrupted this section may have started
                # the thread meanwhile.
                if self._thread is None:
                    self._thread = thread
                    try:
                        thread.start()
                    except BaseException:
                        self._thread = None
                        raise
        if not busy.depth:
            _install_sigterm_handler()

    def unregister(self, state: _File) -> None:
        self._states.discard(state)
        self._inbox.put(None)

    def wake(self) -> None:
        """Make the thread look at every file now. Lock-free: safe anywhere."""
        self._inbox.put(None)

    def retire(self, state: _File) -> None:
        """Have the thread close ``state`` (its sink was collected, or closed re-entrantly).
        Lock-free: safe in finalizers and signal handlers."""
        self._inbox.put(state)

    def _take_inbox(self, wait: float) -> list[_File]:
        retired = []
        try:
            item = self._inbox.get(timeout=max(wait, 0.0)) if wait > 0 else self._inbox.get(False)
            while True:
                if item is not None:
                    retired.append(item)
                item = self._inbox.get(False)
        except Empty:
            pass
        return retired

    def _run(self) -> None:
        _leave_signals_to_other_threads()
        wait = 0.0
        while True:
            for state in self._take_inbox(wait):
                with contextlib.suppress(Exception):  # close() keeps its errors on the file
                    state.close()
            with self._lock:
                if not self._states:
                    self._thread = None
                    return
            now = time.monotonic()
            wait = 3600.0
            for state in list(self._states):
                if state.wake_sent or state.deferred or (state.deadline and state.deadline <= now):
                    try:
                        state.drain(fsync=False)
                    except Exception as exc:  # not an OSError (drain keeps those): keep running
                        state.note_failure(exc)
                if state.deadline:
                    wait = min(wait, state.deadline - now)

    def drain_all(self) -> None:
        """Write what is pending in every open file (at exit, on SIGTERM)."""
        if busy.depth:  # cannot write from inside a write; that call's end will
            return
        for state in list(self._states):
            with contextlib.suppress(Exception):
                state.drain(fsync=False)

    def reset_after_fork(self) -> None:
        # Locks another thread held at fork() stay held forever in the child: replace them all.
        self._lock = threading.RLock()
        self._inbox = SimpleQueue()
        self._thread = None
        busy.depth = 0
        busy.deferred_signal = None
        for state in list(self._states):
            state.reset_after_fork()
        self._states = set()


_FLUSHERS: list[Flusher] = []  # every flusher with exit hooks: SIGTERM drains them all


def install_exit_hooks(flusher: Flusher) -> None:
    """Write what ``flusher`` holds at interpreter exit and on SIGTERM; give forked children a
    clean one."""
    _FLUSHERS.append(flusher)
    atexit.register(flusher.drain_all)
    # multiprocessing's fork and forkserver children leave through os._exit(), which skips
    # atexit but not threading's exit hooks (multiprocessing runs threading._shutdown() first).
    register_thread_exit = getattr(threading, "_register_atexit", None)
    if register_thread_exit is not None:
        register_thread_exit(flusher.drain_all)
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=flusher.reset_after_fork)


FLUSHER = Flusher()
install_exit_hooks(FLUSHER)


# -- SIGTERM ---------------------------------------------------------------------------------------

#: Signals a program (or npsummary) may handle in Python; blocked in the background threads.
_HANDLED_SIGNALS = tuple(
    getattr(_signal, name)
    for name in ("SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGALRM")
    if hasattr(_signal, name)
)


def _leave_signals_to_other_threads() -> None:
    """Block the handled signals in the calling background thread.

    Python runs signal handlers in the main thread only. A signal the kernel hands to another
    thread merely sets a flag, and a main thread asleep in a semaphore wait (a multiprocessing
    pool worker waiting for work) is not woken to run the handler: with npsummary's SIGTERM
    handler installed, ``Pool.terminate()`` could then wait forever for that worker. Blocked
    here, such signals go to a thread that does not block them, which the wait returns for.
    """
    block = getattr(_signal, "pthread_sigmask", None)
    if block is not None and _HANDLED_SIGNALS:
        with contextlib.suppress(OSError, ValueError):
            block(_signal.SIG_BLOCK, _HANDLED_SIGNALS)


_sigterm_pid = 0  # the process whose SIGTERM disposition was looked at (a fork child inherits it)
_previous_sigterm: Callable[[int, Any], Any] | int | None = None
_handler_runs = 0  # calls of _on_sigterm in this process (the watcher compares)
_wakeup_fds: tuple[int, int] | None = None  # this process's wakeup pipe (read end, write end)


def _install_sigterm_handler() -> None:
    global _sigterm_pid, _previous_sigterm
    pid = os.getpid()
    if _sigterm_pid == pid or threading.current_thread() is not threading.main_thread():
        return
    _sigterm_pid = pid
    sigterm = getattr(_signal, "SIGTERM", None)
    if sigterm is None:
        return
    previous = _signal.getsignal(sigterm)
    if previous is None or previous == _signal.SIG_IGN:
        return  # set outside Python, or ignored: leave it
    if previous is not _on_sigterm:  # else ours, inherited across fork with what it chains to
        # Known before the handler can run: a SIGTERM arriving between the two assignments
        # would otherwise find no previous disposition and neither chain nor terminate.
        _previous_sigterm = previous
        try:
            _signal.signal(sigterm, _on_sigterm)
        except (ValueError, OSError):  # not the main interpreter, or no signals here
            return
    _watch_for_lost_sigterms(sigterm)


def _watch_for_lost_sigterms(sigterm: int) -> None:
    """Start the thread that re-sends a SIGTERM the main thread has not handled.

    Python runs the handler when the main thread next executes Python code, or when a blocking
    call it sits in returns early because of the signal. A SIGTERM that arrives just before the
    main thread starts such a wait (between its last check for signals and the system call: a
    multiprocessing pool worker going idle as ``Pool.terminate()`` signals it; measured: one
    ``with Pool(2)`` in 30 hung) only sets Python's flag, and the wait never returns: the
    process lives on. Python writes every signal it catches to the wakeup file descriptor, from
    whichever thread received it; a thread reading it sends SIGTERM to the main thread again
    until the handler has run once per SIGTERM, which interrupts the wait. Only in
    multiprocessing's child processes, where ``terminate()`` meets idle waits, and only where
    no wakeup descriptor is set yet: elsewhere that descriptor is the program's (asyncio's and
    trio's event loops set one).
    """
    global _wakeup_fds
    multiprocessing = sys.modules.get("multiprocessing")
    if multiprocessing is None or multiprocessing.parent_process() is None:
        return  # the wakeup descriptor is the program's (trio warns when it finds one set)
    kill_thread = getattr(_signal, "pthread_kill", None)
    set_wakeup_fd = getattr(_signal, "set_wakeup_fd", None)
    if kill_thread is None or set_wakeup_fd is None:
        return
    read_fd, write_fd = os.pipe()
    try:
        os.set_blocking(write_fd, False)
        previous = set_wakeup_fd(write_fd, warn_on_full_buffer=False)
    except (ValueError, OSError):
        os.close(read_fd)
        os.close(write_fd)
        return
    if previous != -1:  # the program's own: give it back
        with contextlib.suppress(ValueError, OSError):
            set_wakeup_fd(previous)
        os.close(read_fd)
        os.close(write_fd)
        return
    _wakeup_fds = (read_fd, write_fd)
    main = threading.main_thread().ident
    watcher = threading.Thread(
        target=_resend_unhandled_sigterms,
        args=(read_fd, sigterm, main, kill_thread),
        name="npsummary-sigterm",
        daemon=True,
    )
    try:
        watcher.start()
    except RuntimeError:  # interpreter shutting down: no new threads
        _drop_wakeup_fds()


def _resend_unhandled_sigterms(
    read_fd: int, sigterm: int, main: int, kill_thread: Callable[[int, int], None]
) -> None:
    """Read the wakeup descriptor; after each SIGTERM, wait for the handler, and while it has
    not run as many times as SIGTERMs arrived, send SIGTERM to the main thread again (with a
    growing pause: 20 ms, then twice as long each time, for about 10 s). The signals it sends
    itself come back through the descriptor and are not counted."""
    _leave_signals_to_other_threads()
    received = resent = 0
    while True:
        try:
            data = os.read(read_fd, 256)
        except OSError:
            return
        if not data:
            return
        arrived = data.count(sigterm)
        taken = min(arrived, resent)
        resent -= taken
        received += arrived - taken
        pause = 0.02
        while _handler_runs < received and pause < 10.0:
            time.sleep(pause)
            if _handler_runs >= received:
                break
            with contextlib.suppress(OSError, ValueError):
                kill_thread(main, sigterm)
                resent += 1
            pause *= 2


def _drop_wakeup_fds() -> None:
    """In a forked child: stop writing signals into the parent's wakeup pipe (its watcher would
    take the child's SIGTERM for the parent's); the child sets up its own with its first file."""
    global _wakeup_fds
    fds, _wakeup_fds = _wakeup_fds, None
    if fds is None:
        return
    with contextlib.suppress(ValueError, OSError):
        current = _signal.set_wakeup_fd(-1)
        if current != fds[1]:  # not ours any more: put the program's back
            _signal.set_wakeup_fd(current)
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_drop_wakeup_fds)


def _on_sigterm(signum: int, frame: Any) -> None:
    global _handler_runs
    _handler_runs += 1
    if busy.depth:  # interrupted inside npsummary: finish that call first
        busy.deferred_signal = (signum, frame)
        return
    _write_then_chain(signum, frame)


def run_deferred_signal() -> None:
    """Called when a thread's busy depth returns to 0 and a SIGTERM arrived meanwhile."""
    deferred, busy.deferred_signal = busy.deferred_signal, None
    if deferred is not None:
        _write_then_chain(*deferred)


def _write_then_chain(signum: int, frame: Any) -> None:
    try:
        for flusher in list(_FLUSHERS):
            with contextlib.suppress(Exception):
                flusher.drain_all()
    finally:
        previous = _previous_sigterm
        if callable(previous):
            previous(signum, frame)
        elif previous is None or previous == _signal.SIG_DFL:
            # Terminate by the signal, as the default action would have: same exit status.
            _signal.signal(signum, _signal.SIG_DFL)
            os.kill(os.getpid(), signum)
