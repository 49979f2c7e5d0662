"""Which process of a multi-process job writes, and where.

By default only the global rank 0 process writes (to the logdir itself); every other rank gets a
*silent* writer of the same class that accepts every call and writes nothing, without validating,
encoding or touching storage (a method call and a return). It has every attribute of the real
writer, and what the real one returns it returns with the same type (``get_logdir()``,
``log_dir``, ``file_writer``, ``use_metadata()``, ...: see :func:`silent_instance`), so a script
that runs on rank 0 runs unchanged on the others. ``ranks="all"`` gives every rank a
sub-run ``<logdir>/rank_<k>``; ``ranks=[0, 3]`` gives those ranks sub-runs and silences the rest.
``rank=`` overrides the detection.

The rank comes from ``torch.distributed`` when it is initialised (looked up only if the program
already imported it), else from the launchers' environment variables (``RANK`` set by torchrun,
``SLURM_PROCID``, ``OMPI_COMM_WORLD_RANK``, ``PMI_RANK``, ``JAX_PROCESS_INDEX``), else from
JAX when the program has started it (``jax.distributed.initialize()`` called, or its backends
running: asking an idle JAX would start them), else 0.

Every front end gates through this module once per writer: the classes derive from
:class:`RankGated` (whose ``__new__`` detects the rank and either returns a silent instance or
remembers the chosen sub-run for ``__init__``), functions call :func:`rank_run`.
"""

from __future__ import annotations

import contextlib
import inspect
import os
import sys
from collections.abc import Iterable, Iterator
from typing import Any, Literal, TypeAlias, TypeVar

import numpy as np

from .._common.convert import as_list, check_int
from .._sinks.base import NullSink

__all__ = [
    "RANK_VARIABLES",
    "RankGated",
    "Ranks",
    "detect_rank",
    "rank_run",
    "silent_instance",
    "silent_type",
]

#: Launchers' environment variables holding the global rank, in the order they are read.
RANK_VARIABLES = ("RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "JAX_PROCESS_INDEX")

#: The ``ranks=`` argument: None (rank 0 writes the logdir), "all", or the ranks that write.
#: A string, so that no typing object is built at import (the writers' signatures name it).
Ranks: TypeAlias = 'Literal["all"] | Iterable[int] | None'


def _torch_rank() -> int | None:
    dist = sys.modules.get("torch.distributed")
    if dist is None:
        return None
    try:
        if dist.is_available() and dist.is_initialized():
            return int(dist.get_rank())
    except (RuntimeError, ValueError):  # a process group being torn down: fall back
        return None
    return None


def _environment_rank() -> int | None:
    for name in RANK_VARIABLES:
        value = os.environ.get(name, "").strip()
        if not value:
            continue
        try:
            rank = int(value)
        except ValueError:
            raise ValueError(
                f"environment variable {name}={value!r} is not a rank (an int); "
                "pass rank= to the writer to override"
            ) from None
        if rank < 0:
            raise ValueError(f"environment variable {name}={value!r} is not a rank (>= 0)")
        return rank
    return None


def _jax_rank() -> int | None:
    jax = sys.modules.get("jax")
    if jax is None or not hasattr(jax, "process_index"):
        return None
    # jax.process_index() starts JAX's backends: on a GPU they claim most of its memory, and
    # jax.distributed.initialize() refuses to run afterwards. Only a JAX that has started its
    # backends or its distributed client is asked.
    distributed = getattr(sys.modules.get("jax._src.distributed"), "global_state", None)
    if getattr(distributed, "client", None) is not None:
        return int(distributed.process_id)  # type: ignore[union-attr]
    started = getattr(sys.modules.get("jax._src.xla_bridge"), "backends_are_initialized", None)
    if started is None or not started():
        return None
    return int(jax.process_index())


def detect_rank() -> int:
    """The global rank of this process (0 outside a multi-process job)."""
    for source in (_torch_rank, _environment_rank, _jax_rank):
        rank = source()
        if rank is not None:
            return rank
    return 0


def _check_rank(rank: Any, name: str = "rank") -> int:
    return check_int(rank, name, minimum=0)


def _check_ranks(ranks: Any) -> frozenset[int] | Literal["all"] | None:
    if ranks is None:
        return None
    if isinstance(ranks, str) and ranks == "all":
        return "all"
    if isinstance(ranks, (str, bytes)) or (isinstance(ranks, np.ndarray) and ranks.ndim == 0):
        raise TypeError(f"ranks must be None, 'all' or a list of ints, got {ranks!r:.60}")
    if not isinstance(ranks, (Iterable, np.ndarray)):
        raise TypeError(f"ranks must be None, 'all' or a list of ints, got {ranks!r:.60}")
    items = as_list(ranks, "ranks", "ranks")
    chosen = [_check_rank(item, f"ranks[{i}]") for i, item in enumerate(items)]
    if not chosen:
        raise ValueError("ranks must name at least one rank, got an empty list")
    return frozenset(chosen)


def rank_run(rank: Any = None, ranks: Any = None) -> str | None:
    """Where this process writes: ``""`` (the logdir), ``"rank_<k>"`` (a sub-run), or None.

    Args:
      rank: this process's rank, or None to detect it.
      ranks: None (only rank 0 writes, to the logdir), ``"all"``, or the ranks that write.

    Returns:
      The sub-run name relative to the logdir, or None when this rank writes nothing.

    Raises:
      TypeError, ValueError: ``rank``/``ranks`` (or a launcher's variable) is not a rank.
    """
    chosen = _check_ranks(ranks)
    k = detect_rank() if rank is None else _check_rank(rank)
    if chosen is None:
        return "" if k == 0 else None
    if chosen == "all" or k in chosen:
        return f"rank_{k}"
    return None


_T = TypeVar("_T")


def _silent(*args: Any, **kwargs: Any) -> None:
    return None


def silent_type(cls: type[_T], overrides: dict[str, Any]) -> type[_T]:
    """A subclass of ``cls`` whose public methods accept anything and do nothing, except the
    entries of ``overrides`` (``__init__`` among them, setting what those read)."""
    namespace: dict[str, Any] = {"__doc__": f"A {cls.__name__} of a rank that writes nothing."}
    namespace.update(overrides)
    for klass in cls.__mro__:
        for name, attr in vars(klass).items():
            if name.startswith("_") or name in namespace:
                continue
            if callable(attr) and not isinstance(attr, (type, staticmethod, classmethod)):
                namespace[name] = _silent
            elif isinstance(attr, property):
                namespace[name] = property(_silent)
    return type(f"Silent{cls.__name__}", (cls,), namespace)


def _logdir_argument(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    logdir = args[0] if args else kwargs.get("logdir", kwargs.get("log_dir"))
    if isinstance(logdir, (str, os.PathLike)):
        return str(os.fspath(logdir))
    return ""


def _silent_init(self: Any, *args: Any, **kwargs: Any) -> None:
    self._silent_logdir = _logdir_argument(args, kwargs)


@contextlib.contextmanager
def silent_context(self: Any, *args: Any, **kwargs: Any) -> Iterator[Any]:
    """A ``with`` block that accepts any arguments and yields ``self`` (``use_metadata``)."""
    yield self


_SILENT_TYPES: dict[type, type] = {}


def silent_instance(cls: type[_T]) -> _T:
    """A new, uninitialised instance of the silent subclass of ``cls`` (for ``__new__``).

    Its ``get_logdir()`` returns the logdir it was constructed with and its ``sink`` is a
    :class:`NullSink`; the members a :class:`RankGated` class lists in ``_silent_members()``
    return what they define (values of the types the real ones return); every other public
    method and property returns None.
    """
    silent = _SILENT_TYPES.get(cls)
    if silent is None:
        overrides: dict[str, Any] = {
            "__init__": _silent_init,
            "get_logdir": lambda self: self._silent_logdir,
            "sink": property(lambda self: NullSink()),
        }
        members = getattr(cls, "_silent_members", None)
        if members is not None:
            overrides.update(members())
        silent = _SILENT_TYPES[cls] = silent_type(cls, overrides)
    return object.__new__(silent)


_RANK_POSITIONS: dict[type, tuple[int, int]] = {}


def _rank_arguments(cls: type, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, Any]:
    """``rank`` and ``ranks`` as passed to ``cls(...)``, by keyword or by position."""
    rank, ranks = kwargs.get("rank"), kwargs.get("ranks")
    if args:
        positions = _RANK_POSITIONS.get(cls)
        if positions is None:
            names = [
                p.name
                for p in list(inspect.signature(cls).parameters.values())
                if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
            ]
            absent = sys.maxsize  # keyword-only or not a parameter: never positional
            positions = (
                names.index("rank") if "rank" in names else absent,
                names.index("ranks") if "ranks" in names else absent,
            )
            _RANK_POSITIONS[cls] = positions
        if positions[0] < len(args):
            rank = args[positions[0]]
        if positions[1] < len(args):
            ranks = args[positions[1]]
    return rank, ranks


class RankGated:
    """Base of the writer classes whose constructor takes ``rank=`` and ``ranks=``.

    ``cls(...)`` detects the rank once: on a rank that writes nothing it returns a silent instance
    (see :func:`silent_instance`; ``__init__`` only records the logdir), otherwise a real one whose
    ``__init__`` gets the chosen sub-run from :meth:`_rank_run`.
    """

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        # A rank that does not write gets a silent writer: no validation, no file, no cost.
        rank, ranks = _rank_arguments(cls, args, kwargs)
        run = rank_run(rank, ranks)
        if run is None:
            return silent_instance(cls)
        self = super().__new__(cls)
        self.__dict__["_gated_run"] = run
        return self

    def _rank_run(self, rank: Any, ranks: Any) -> str:
        """The sub-run this process writes (``""``: the logdir itself), as ``__new__`` chose it;
        detected here only for an instance made without ``cls(...)`` (e.g. unpickled)."""
        run: str | None = self.__dict__.pop("_gated_run", None)
        if run is None:
            run = rank_run(rank, ranks) or ""
        return run
