"""``tf.compat.v1.summary`` (TF1-style summaries) without TensorFlow.

TF1 code builds summary ops once and evaluates them with ``sess.run`` every step. Here each
function computes its summary immediately and returns it as serialized ``Summary`` bytes, so a
ported training loop calls the summary functions every step, then :func:`merge_all`, then
``FileWriter.add_summary``::

    writer = npsummary.v1.FileWriter("logs/train")
    for step in range(steps):
        npsummary.v1.scalar("loss", loss)
        npsummary.v1.histogram("weights", w)
        writer.add_summary(npsummary.v1.merge_all(), step)

Formats are TF1's (docs/FORMAT.md §4, §6.2):

* ``scalar`` → ``simple_value`` (float32); ``histogram`` → legacy ``HistogramProto`` with TF1's
  exponential buckets; ``image`` → one ``Summary.Image`` (PNG) per image with TF1's float
  normalisation, tags ``<tag>/image/<i>`` (``<tag>/image`` when ``max_outputs`` is 1); ``audio``
  → one ``Summary.Audio`` (WAV) per clip, tags ``<tag>/audio/<i>`` (or ``<tag>/audio``). None
  of these carry metadata, as in TF1; TensorBoard migrates them when it reads them.
* ``text`` and ``tensor_summary`` → tensors with plugin metadata, exactly as TF1 wrote them.

Tags follow TF1: illegal characters (outside ``[-/\\w.]``) become ``_``, leading ``/`` are
dropped, the current :func:`npsummary.name_scope` is prepended, ``family`` gives
``family/<scope>/family/name``, and a name already used is uniquified (``loss``, ``loss_1``, …)
as TensorFlow's graph did.

Steps: TF1 built each summary once; a ported loop creates it again every step. So names count
as used only until the next :func:`merge_all` or ``FileWriter.add_summary`` in the thread, and a
loop that logs the same summaries every step keeps the same tags, whether it merges them or
writes them one by one. ``merge_all(key)`` merges the summaries collected under ``key`` since
the previous ``merge_all(key)``, except those older than the last two ``add_summary`` calls:
summaries never merged are not kept (and past ``MAX_PENDING`` in one collection the oldest are
dropped, with a ``RuntimeWarning``).

Deviations, all deliberate:

* Summaries are collected per thread and expire as described above (TF1: per graph, forever).
* TF2's redirection of v1 ops to a default v2 writer is not emulated: these functions always
  return bytes.
* ``FileWriter`` names files like ``create_file_writer`` (with pid and counter), so two writers
  started in the same second never overwrite each other (TF1 issue #33595); ``flush_secs``
  defaults to 2 s instead of 120 s. See :class:`FileWriter`.
"""

from __future__ import annotations

from typing import Any

from ._frontends.v1.api import MAX_PENDING as MAX_PENDING  # public constants, as before
from ._frontends.v1.api import SUMMARIES as SUMMARIES
from ._frontends.v1.api import (
    FileWriter,
    SummaryDescription,
    audio,
    clean_tag,
    get_summary_description,
    histogram,
    image,
    merge,
    merge_all,
    scalar,
    tensor_summary,
    text,
)

__all__ = [
    "Event",  # noqa: F822 (lazy, see __getattr__)
    "FileWriter",
    "SessionLog",  # noqa: F822 (lazy, see __getattr__)
    "Summary",  # noqa: F822 (lazy, see __getattr__)
    "SummaryDescription",
    "TaggedRunMetadata",  # noqa: F822 (lazy, see __getattr__)
    "audio",
    "clean_tag",
    "get_summary_description",
    "histogram",
    "image",
    "merge",
    "merge_all",
    "scalar",
    "tensor_summary",
    "text",
]


def __getattr__(name: str) -> Any:
    # Proto classes, imported lazily to keep `import npsummary.v1` light.
    if name in ("Event", "SessionLog", "Summary", "TaggedRunMetadata"):
        from . import proto

        return getattr(proto, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
