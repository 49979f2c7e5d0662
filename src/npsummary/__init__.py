"""npsummary: TensorBoard summaries from NumPy, without TensorFlow.

Two APIs write the same event files:

* ``SummaryWriter`` — the tensorboardX / ``torch.utils.tensorboard`` API::

      from npsummary import SummaryWriter
      with SummaryWriter("runs/exp1") as writer:
          writer.add_scalar("loss", 0.25, global_step=10)

* the ``tf.summary`` API, as module functions::

      import npsummary as summary
      writer = summary.create_file_writer("runs/exp1")
      with writer.as_default(step=10):
          summary.scalar("loss", 0.25)

Importing npsummary imports NumPy and nothing heavier; protobuf and crc32c are imported
when a writer first needs them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from . import experimental, reader, v1
    from ._common.errors import BinCountCappedWarning, EventWriteError, NonFiniteWarning
    from ._frontends.tbx.flavours import TensorboardXSummaryWriter
    from ._frontends.tbx.global_writer import GlobalSummaryWriter
    from ._frontends.tbx.patch import patch, unpatch
    from ._frontends.tbx.summary_writer import SummaryWriter
    from ._frontends.tf2.api import (
        audio,
        distribution,
        graph,
        histogram,
        image,
        name_scope,
        record_if,
        scalar,
        should_record_summaries,
        text,
        trace_export,
        trace_off,
        trace_on,
        write,
    )
    from ._frontends.tf2.writer import (
        NoopSummaryWriter,
        SummaryFileWriter,
        create_file_writer,
        create_noop_writer,
        flush,
    )
    from ._sinks.base import EventSink, MemorySink
    from ._sinks.file import FileSink
    from ._sinks.segments import SegmentSink

__version__ = "0.1.0"

__all__ = [
    "BinCountCappedWarning",
    "EventSink",
    "EventWriteError",
    "FileSink",
    "GlobalSummaryWriter",
    "MemorySink",
    "NonFiniteWarning",
    "NoopSummaryWriter",
    "SegmentSink",
    "SummaryFileWriter",
    "SummaryWriter",
    "TensorboardXSummaryWriter",
    "__version__",
    "audio",
    "create_file_writer",
    "create_noop_writer",
    "distribution",
    "experimental",
    "flush",
    "graph",
    "histogram",
    "image",
    "name_scope",
    "patch",
    "reader",
    "record_if",
    "scalar",
    "should_record_summaries",
    "text",
    "trace_export",
    "trace_off",
    "trace_on",
    "unpatch",
    "v1",
    "write",
]


# Imported on first use, keeping `import npsummary` light: name -> (module, attribute or None).
# Every public name is loaded on first use (PEP 562), so that `import npsummary` costs almost
# nothing and a script pays only for what it touches: a SummaryWriter loads its front end, the
# sink and the scalar encoder, not the tf.summary functions, reader, v1 or patch().
_TF2 = "._frontends.tf2.api"
_TF2_WRITER = "._frontends.tf2.writer"
_ERRORS = "._common.errors"
_LAZY = {
    "experimental": (".experimental", None),
    "v1": (".v1", None),
    "reader": (".reader", None),
    "BinCountCappedWarning": (_ERRORS, "BinCountCappedWarning"),
    "EventWriteError": (_ERRORS, "EventWriteError"),
    "NonFiniteWarning": (_ERRORS, "NonFiniteWarning"),
    "SummaryWriter": ("._frontends.tbx.summary_writer", "SummaryWriter"),
    "patch": ("._frontends.tbx.patch", "patch"),
    "unpatch": ("._frontends.tbx.patch", "unpatch"),
    "EventSink": ("._sinks.base", "EventSink"),
    "MemorySink": ("._sinks.base", "MemorySink"),
    "FileSink": ("._sinks.file", "FileSink"),
    "SegmentSink": ("._sinks.segments", "SegmentSink"),
    "TensorboardXSummaryWriter": ("._frontends.tbx.flavours", "TensorboardXSummaryWriter"),
    "GlobalSummaryWriter": ("._frontends.tbx.global_writer", "GlobalSummaryWriter"),
    **{
        name: (_TF2, name)
        for name in (
            "audio",
            "distribution",
            "graph",
            "histogram",
            "image",
            "name_scope",
            "record_if",
            "scalar",
            "should_record_summaries",
            "text",
            "trace_export",
            "trace_off",
            "trace_on",
            "write",
        )
    },
    **{
        name: (_TF2_WRITER, name)
        for name in (
            "NoopSummaryWriter",
            "SummaryFileWriter",
            "create_file_writer",
            "create_noop_writer",
            "flush",
        )
    },
}


def __getattr__(name: str) -> object:
    if name in _LAZY:
        import importlib

        module_name, attribute = _LAZY[name]
        module = importlib.import_module(module_name, __name__)
        value = module if attribute is None else getattr(module, attribute)
        globals()[name] = value  # later look-ups are plain attribute reads
        return value
    raise AttributeError(f"module 'npsummary' has no attribute {name!r}")


def __dir__() -> list[str]:
    return list(__all__)
