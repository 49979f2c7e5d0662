"""The rest of tensorboardX's and torch's ``SummaryWriter`` surface, as a mixin.

Attributes (``logdir``/``log_dir``, ``purge_step``, ``max_queue``, ``flush_secs``,
``filename_suffix``, ``default_bins``), the low-level writers (``file_writer``,
``_get_file_writer()``, ``all_writers``), ``use_metadata``, ``export_scalars_to_json`` and the
graph methods, and the checks of tensorboardX's extra constructor arguments.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

from ..._common.convert import check_flag
from .base import TbxWriterBase
from .file_writer import MetadataDefaults, RunFileWriter

__all__ = ["COMET_DISABLED", "AttributeMethods", "check_tbx_options"]

#: tensorboardX's default ``comet_config``.
COMET_DISABLED: dict[str, Any] = {"disabled": True}


def check_tbx_options(write_to_disk: Any, comet_config: Any, kwargs: dict[str, Any]) -> bool:
    """tensorboardX's extra constructor arguments: what npsummary can honour, or a clear error.
    Returns ``write_to_disk`` as a bool."""
    write_to_disk = check_flag(write_to_disk, "write_to_disk")
    if comet_config is not None and not (
        isinstance(comet_config, dict) and comet_config.get("disabled") is True
    ):
        raise ValueError(
            "comet_config: npsummary does not log to Comet; pass {'disabled': True} or None "
            f"(got {comet_config!r})"
        )
    if kwargs:
        raise TypeError(f"SummaryWriter got unexpected keyword arguments: {sorted(kwargs)}")
    return bool(write_to_disk)


def _tensorboardx_default_bins() -> list[float]:
    from ..._histogram.tbx import tensorboardx_default_edges

    return tensorboardx_default_edges()


def _child_file_writer(path: str, sink: Any, meta: MetadataDefaults) -> RunFileWriter:
    # A sub-run's file closes with its SummaryWriter; close() on it only flushes.
    return RunFileWriter(path, lambda: sink, meta, sink.flush)


class AttributeMethods(TbxWriterBase):
    """Attributes, low-level writers, ``use_metadata``, export and graphs of ``SummaryWriter``."""

    # -- attributes -----------------------------------------------------------------------------

    @property
    def logdir(self) -> str:
        """The run directory (tensorboardX's name; ``""`` for a custom sink)."""
        return self._target.logdir

    @property
    def log_dir(self) -> str:
        """The run directory (torch's name)."""
        return self._target.logdir

    @property
    def purge_step(self) -> int | None:
        """The ``purge_step`` given to the constructor."""
        return self._given_purge_step

    @property
    def max_queue(self) -> int:
        """Pending events that make the background thread write early."""
        return self._options.max_queue

    @property
    def flush_secs(self) -> float:
        """Longest time an event waits in memory."""
        return self._options.flush_secs

    @property
    def filename_suffix(self) -> str:
        """Appended to the event file names."""
        return self._options.filename_suffix

    @property
    def default_bins(self) -> list[float]:
        """tensorboardX's and torch's exponential bin edges (computed on access)."""
        return _tensorboardx_default_bins()

    # -- low-level writers ----------------------------------------------------------------------

    def _get_file_writer(self) -> RunFileWriter:
        """The main run's file writer (opens a new event file if the writer was closed)."""
        self._get_writer()
        logdir = self._target.logdir
        return RunFileWriter(logdir, lambda: self._get_writer().sink, self._meta, self.close)

    @property
    def file_writer(self) -> RunFileWriter | None:
        """The main run's file writer; None after ``close()``, as in tensorboardX and torch."""
        if self._writer is None:
            return None
        return self._get_file_writer()

    @property
    def all_writers(self) -> dict[str, RunFileWriter] | None:
        """``run directory -> file writer`` for the main run and every ``add_scalars`` sub-run;
        None after ``close()``."""
        writer = self._writer
        if writer is None:
            return None
        logdir = self._target.logdir
        out = {logdir: self._get_file_writer()}
        for run, child in list(writer.children.items()):
            path = os.path.join(logdir, run)
            out[path] = _child_file_writer(path, child.sink, self._meta)
        return out

    @contextlib.contextmanager
    def use_metadata(self, *, global_step: Any = None, walltime: Any = None) -> Iterator[Any]:
        """Default ``global_step`` and ``walltime`` for every ``add_*`` call in the block.

        Raises:
          ValueError: neither is given. RuntimeError: blocks are nested.
        """
        with self._meta.use(global_step, walltime):
            yield self

    # -- export ---------------------------------------------------------------------------------

    def export_scalars_to_json(self, path: str | os.PathLike[str]) -> None:
        """Write every scalar this writer logged since the last export to ``path`` as JSON,
        ``{key: [[wall_time, step, value], ...]}`` (tensorboardX's format: the key is the tag for
        the main run and the sub-run directory for ``add_scalars``).

        The values are read back from this writer's own event files; nothing is kept in memory.
        """
        from .scalar_export import export_scalars

        export_scalars(self, path)

    # -- graphs ---------------------------------------------------------------------------------

    def add_graph(
        self,
        model: Any,
        input_to_model: Any = None,
        verbose: bool = False,
        use_strict_trace: bool = True,
    ) -> None:
        """Log a model graph for TensorBoard's Graphs tab.

        Args:
          model: a ``GraphDef`` (message or serialized bytes), an object with
            ``as_graph_def()``, or a ``torch.nn.Module`` traced with ``input_to_model`` by
            torch's own tracer (torch is imported only here), as torch's ``add_graph`` does.
          input_to_model: the example input(s) for tracing a module.
          verbose: print the traced graph (torch's option).
          use_strict_trace: passed to ``torch.jit.trace``'s ``strict``.

        Raises:
          TypeError: ``model`` is none of the above, or torch's tracer is not installed.
        """
        from ..._summaries.graphs import model_graph

        self._get_file_writer().add_graph(
            model_graph(model, input_to_model, verbose, use_strict_trace)
        )

    def add_onnx_graph(self, onnx_model_file: Any = None, *, prototxt: Any = None) -> None:
        """Log the graph of an ONNX model file (needs ``pip install onnx``).

        Args:
          onnx_model_file: path of the ``.onnx`` file (tensorboardX's name).
          prototxt: the same, under torch's name.

        Raises:
          ImportError: onnx is not installed. TypeError, ValueError: no such file.
        """
        from ..._summaries.graphs import onnx_graph

        if (onnx_model_file is None) == (prototxt is None):
            raise TypeError("add_onnx_graph: pass the model file once (onnx_model_file=...)")
        path = onnx_model_file if prototxt is None else prototxt
        self._get_file_writer().add_graph(onnx_graph(path))

    def add_openvino_graph(self, xmlname: Any) -> None:
        """Log the graph of an OpenVINO IR model (its ``.xml`` file; needs
        ``pip install openvino`` only to produce that file, not to read it)."""
        from ..._summaries.graphs import openvino_graph

        self._get_file_writer().add_graph(openvino_graph(xmlname))
