"""``SummaryWriter.export_scalars_to_json``: scalars read back from the writer's own files.

tensorboardX keeps every scalar in a dict for this method (its docstring warns that it "explodes
your RAM"). npsummary keeps only, per event file this writer wrote, the byte offset up to which
the last export read, and reads the records after it: the JSON holds the scalars logged since
the previous export, as tensorboardX's does (it empties its dict after an export).
"""

from __future__ import annotations

import io
import json
import os
import struct
from typing import Any

from ..._format.record import read_records
from ..._sinks.base import NullSink
from ..._sinks.projector import write_file

__all__ = ["export_scalars", "scalar_of"]


def scalar_of(value: Any) -> float | None:
    """The number of a scalar ``Summary.Value`` (``simple_value`` or a size-1 numeric tensor
    with ``scalars`` metadata), or None for any other value."""
    kind = value.WhichOneof("value")
    if kind == "simple_value":
        return float(value.simple_value)
    if kind != "tensor" or value.metadata.plugin_data.plugin_name != "scalars":
        return None
    tensor = value.tensor
    if tensor.float_val:
        return float(tensor.float_val[0])
    if tensor.double_val:
        return float(tensor.double_val[0])
    if tensor.dtype == 1 and len(tensor.tensor_content) == 4:
        return float(struct.unpack("<f", tensor.tensor_content)[0])
    if tensor.dtype == 2 and len(tensor.tensor_content) == 8:
        return float(struct.unpack("<d", tensor.tensor_content)[0])
    return None


def _scalars(payloads: Any, key: str | None, out: dict[str, list[list[float]]]) -> None:
    from ... import proto

    for payload in payloads:
        event = proto.Event.FromString(payload)
        if event.WhichOneof("what") != "summary":
            continue
        for value in event.summary.value:
            number = scalar_of(value)
            if number is not None:
                entry = [event.wall_time, event.step, number]
                out.setdefault(key if key is not None else value.tag, []).append(entry)


def _new_payloads(sink: Any, offsets: dict[str, int]) -> list[bytes]:
    """Records of ``sink`` that the last export did not read."""
    segments = getattr(sink, "uploaded_segments", None)
    if segments is not None:  # a URL logdir (a SegmentSink): read back its uploaded segments
        names = segments()
        start = offsets.get(sink.url, 0)
        offsets[sink.url] = len(names)
        payloads: list[bytes] = []
        for name in names[start:]:
            payloads.extend(read_records(io.BytesIO(sink.read_segment(name))))
        return payloads
    path = getattr(sink, "path", None)
    if isinstance(path, str) and path:
        start = offsets.get(path, 0)
        with open(path, "rb") as stream:
            stream.seek(start)
            payloads = list(read_records(stream))
            offsets[path] = stream.tell()
        return payloads
    if isinstance(sink, NullSink):  # write_to_disk=False: nothing was kept
        return []
    if not hasattr(sink, "payloads"):
        raise ValueError(
            f"export_scalars_to_json cannot read back events written to a {type(sink).__name__}"
        )
    recorded = list(sink.payloads)  # a MemorySink
    start = offsets.get(str(id(sink)), 0)
    offsets[str(id(sink))] = len(recorded)
    return recorded[start:]


def export_scalars(writer: Any, path: str | os.PathLike[str]) -> None:
    """See ``SummaryWriter.export_scalars_to_json``.

    The writer's runs may be local files, segments on a URL or a ``MemorySink``; a sink of any
    other kind (a user's own) cannot be read back and raises ``ValueError``.
    """
    offsets: dict[str, int] = writer.__dict__.setdefault("_export_offsets", {})
    writer.flush()
    event_writer = writer._get_writer()
    out: dict[str, list[list[float]]] = {}
    _scalars(_new_payloads(event_writer.sink, offsets), None, out)
    logdir = writer.logdir
    for run, child in list(event_writer.children.items()):
        key = f"{logdir.rstrip('/')}/{run}" if "://" in logdir else os.path.join(logdir, run)
        _scalars(_new_payloads(child.sink, offsets), key, out)
    # A complete new file renamed into place: a link at ``path`` is replaced, never followed,
    # and a failure leaves the previous export as it was.
    write_file(os.fspath(path), [json.dumps(out).encode("utf-8")])
