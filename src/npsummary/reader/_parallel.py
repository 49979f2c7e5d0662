"""Runs decoded in worker processes: how many, in which groups, and results back in order.

Decoding is CPU-bound NumPy and protobuf work in short calls, which threads do not speed up (the
GIL), so a large sweep is read by worker processes, each reading whole runs with the same code as
a serial read; the caller gets the runs back in name order, bit for bit what one process reads.
Workers start through ``forkserver`` (``spawn`` where there is none): ``fork`` would copy a
parent that may hold threads (a writer's flusher, the user's) mid-lock. The server preloads the
reader, so a worker starts in about the time of a fork. Children are started with the parent's
``__main__`` hidden, so a script that reads at top level, without the
``if __name__ == "__main__":`` guard, is not run again in every worker.

A read too small to repay the workers' start-up (``MIN_BYTES``, measured: see
``benchmarks/RESULTS.md``) is read in the calling thread, as are reads through filesystems other
than the local one unless ``workers`` is given. Results come back through multiprocessing's pipe,
pickled by npsummary's own worker: the bytes unpickled are made by that code, never read from a
file.
"""

from __future__ import annotations

import os
import sys
import types
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager
from typing import Any, TypeVar

from ._discover import Run
from ._io import FileSystem, LocalFileSystem

__all__ = ["MIN_BYTES", "ordered_map", "split", "worker_count"]

#: Below this many bytes of event files, a read stays in the calling thread: starting the
#: forkserver and its workers costs about 0.3 s, about what reading 40 MB costs one core.
MIN_BYTES = 64 << 20
_TASKS_PER_WORKER = 8  # groups per worker: enough to even out runs of different sizes
_MAX_RUNS_PER_TASK = 64  # at most: bounds what a worker sends back at once
_AHEAD = 2  # groups in flight per worker (results not yet taken by the caller)

T = TypeVar("T")


def cpu_count() -> int:
    """CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def worker_count(workers: int | None, fs: FileSystem, runs: list[Run]) -> int:
    """Processes to read ``runs`` with: ``workers`` if given (never more than the runs),
    else one per CPU for a local read of at least ``MIN_BYTES``, else 1."""
    if workers is not None:
        return max(1, min(workers, len(runs)))
    if not isinstance(fs, LocalFileSystem) or len(runs) < 2 or cpu_count() < 2:
        return 1
    total = 0
    for run in runs:
        for file in run.files:
            try:
                total += fs.size(file)
            except OSError:
                continue  # the read itself reports it
            if total >= MIN_BYTES:
                return min(cpu_count(), len(runs))
    return 1


def split(runs: list[Run], workers: int) -> list[list[Run]]:
    """Consecutive groups of ``runs``, about ``_TASKS_PER_WORKER`` per worker."""
    size = max(1, min(_MAX_RUNS_PER_TASK, -(-len(runs) // (workers * _TASKS_PER_WORKER))))
    return [runs[i : i + size] for i in range(0, len(runs), size)]


def _context() -> Any:
    import multiprocessing

    methods = multiprocessing.get_all_start_methods()
    if "forkserver" in methods:
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(["npsummary.reader._load"])
        return ctx
    return multiprocessing.get_context("spawn")


@contextmanager
def _main_hidden() -> Iterator[None]:
    """While workers start: a ``__main__`` with no file or spec, so that they do not import the
    caller's script (multiprocessing re-runs it otherwise)."""
    main = sys.modules.get("__main__")
    if main is None or (getattr(main, "__file__", None) is None and main.__spec__ is None):
        yield
        return
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        sys.modules["__main__"] = main


def ordered_map(
    fn: Callable[..., T], fs: FileSystem, groups: list[list[Run]], options: Any, workers: int
) -> Iterator[T]:
    """``fn(fs, group, options)`` of each group in ``workers`` processes, yielded in order with
    at most ``_AHEAD`` groups per worker in flight. An exception in a worker is raised here
    (later groups are cancelled); closing the iterator early stops the workers."""
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=_context())
    pending: deque[Future[T]] = deque()
    todo = iter(groups)
    try:
        while True:
            while len(pending) < workers * _AHEAD:
                group = next(todo, None)
                if group is None:
                    break
                with _main_hidden():
                    pending.append(pool.submit(fn, fs, group, options))
            if not pending:
                return
            yield pending.popleft().result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
