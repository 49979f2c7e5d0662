"""The module-level ``Summary`` builders of ``tensorboardX.summary`` and
``torch.utils.tensorboard.summary``, returning npsummary's ``Summary`` protos.

Frameworks call these and hand the result to ``file_writer.add_summary`` (Lightning imports
``hparams`` from torch's module). Each builder logs through a :class:`SummaryWriter` of the
library's flavour into a :class:`MemorySink` and returns the ``Summary`` of the event, so its
values, checks and errors are exactly the writer's (``tensorboardX``'s builders clean tags as
its writer does; torch's keep them). A ``Summary`` of npsummary is accepted by npsummary's
``file_writer.add_summary`` and, serialized, by any protobuf ``Summary``.
"""

from __future__ import annotations

from typing import Any

from ..._sinks.base import MemorySink
from .flavours import TensorboardXSummaryWriter, clean_tag
from .summary_writer import SummaryWriter

__all__ = ["TENSORBOARDX_BUILDERS", "TORCH_BUILDERS"]


def _logged(writer_class: type[SummaryWriter], method: str, *args: Any, **kwargs: Any) -> Any:
    """The ``Summary`` that ``writer_class(...).<method>(*args, **kwargs)`` writes."""
    from ... import proto

    sink = MemorySink()
    # A builder is a pure function: it returns its Summary on every rank, as torch's and
    # tensorboardX's do, so the writer it borrows is never rank-gated.
    writer = writer_class(sink, rank=0)
    getattr(writer, method)(*args, **kwargs)
    event = proto.Event.FromString(sink.payloads[-1])
    return event.summary


def _summaries(triple: tuple[bytes, bytes, bytes]) -> tuple[Any, Any, Any]:
    from ... import proto

    exp, ssi, sei = (proto.Summary.FromString(data) for data in triple)
    return exp, ssi, sei


def _hparams(
    hparam_dict: Any, metric_dict: Any, domains: Any, *, tensorboardx_values: bool
) -> tuple[Any, Any, Any]:
    from ..._summaries.hparams import hparams_summaries, metric_values

    metrics = metric_values({} if metric_dict is None else metric_dict)
    triple = hparams_summaries(
        {} if hparam_dict is None else hparam_dict,
        [tag for tag, _ in metrics],
        domains,
        tensorboardx_values=tensorboardx_values,
    )
    return _summaries(triple)


def _summary_of(value: bytes) -> Any:
    """npsummary's ``Summary`` holding one serialized ``Summary.Value``."""
    from ... import proto
    from ..._format.wire import encode_summary

    return proto.Summary.FromString(encode_summary([value]))


def _custom_scalars(layout: Any) -> Any:
    """``summary.custom_scalars`` (tensorboardX and torch): the Custom Scalars dashboard's
    layout, ``{category: {title: [kind, tags]}}`` as in
    :meth:`~npsummary.SummaryWriter.add_custom_scalars`, as a ``Summary``.

    Raises:
      TypeError: a malformed layout. ValueError: a margin chart without 3 tags.
    """
    from ..._summaries.custom_scalars import layout_value

    return _summary_of(layout_value(layout))


# -- tensorboardX.summary -------------------------------------------------------------------------


def tbx_scalar(
    name: str, scalar: Any, display_name: str = "", summary_description: str = ""
) -> Any:
    """``tensorboardX.summary.scalar``: a ``simple_value``, the tag cleaned."""
    return _logged(
        TensorboardXSummaryWriter, "add_scalar", name, scalar, 0, 0.0, display_name,
        summary_description,
    )  # fmt: skip


def _check_histogram_input(name: Any, values: Any, bins: Any) -> None:
    """What the libraries' module-level ``histogram`` refuses and their ``add_histogram`` does
    not reach: ``bins='tensorflow'`` (only their writer turns it into its default edges; the
    builder hands it to ``np.histogram``) and no values at all ("The input has no element.").
    Both raise ``ValueError`` there, as here."""
    from ..._common.convert import as_array

    if isinstance(bins, str) and bins == "tensorflow":
        raise ValueError(
            f"{name!r}: histogram() takes bins as np.histogram does (an int, edges or a NumPy "
            "estimator); 'tensorflow' is only SummaryWriter.add_histogram's default, as in "
            "tensorboardX and torch (pass writer.default_bins for its edges)"
        )
    if isinstance(name, str) and as_array(values, name).size == 0:
        raise ValueError(f"{name!r}: histogram() got no values (the input has no element)")


def tbx_histogram(name: str, values: Any, bins: Any, max_bins: Any = None) -> Any:
    """``tensorboardX.summary.histogram``: tensorboardX's buckets for ``bins``.

    Raises:
      ValueError: ``bins='tensorflow'`` or no values, as in tensorboardX (the writer's
        ``add_histogram`` takes both).
    """
    _check_histogram_input(clean_tag(name), values, bins)
    return _logged(TensorboardXSummaryWriter, "add_histogram", name, values, 0, bins, 0.0, max_bins)


def histogram_raw(
    name: str,
    min: Any,
    max: Any,
    num: Any,
    sum: Any,
    sum_squares: Any,
    bucket_limits: Any,
    bucket_counts: Any,
) -> Any:
    """``histogram_raw`` of both libraries: the given fields in a ``HistogramProto``."""
    return _logged(
        SummaryWriter, "add_histogram_raw", name, min, max, num, sum, sum_squares,
        bucket_limits, bucket_counts, 0, 0.0,
    )  # fmt: skip


def tbx_image(tag: str, tensor: Any, rescale: Any = 1, dataformats: str = "CHW") -> Any:
    """``tensorboardX.summary.image``: one PNG, the tag cleaned."""
    return _image(TensorboardXSummaryWriter, tag, tensor, rescale, dataformats)


def _image(
    writer_class: type[SummaryWriter], tag: str, tensor: Any, rescale: Any, dataformats: str
) -> Any:
    if rescale == 1:
        return _logged(writer_class, "add_image", tag, tensor, 0, 0.0, dataformats)
    # A rescaled image: add_image_with_boxes resizes as both libraries do (Lanczos), no boxes.
    import numpy as np

    no_boxes = np.zeros((0, 4))
    return _logged(
        writer_class, "add_image_with_boxes", tag, tensor, no_boxes, 0, 0.0, rescale,
        dataformats,
    )  # fmt: skip


def _image_boxes(writer_class: type[SummaryWriter]) -> Any:
    def image_boxes(
        tag: str,
        tensor_image: Any,
        tensor_boxes: Any,
        rescale: Any = 1,
        dataformats: str = "CHW",
        labels: Any = None,
    ) -> Any:
        """``image_boxes`` of both libraries: one PNG with the ``[N, 4]`` ``xyxy`` boxes drawn
        in red (``add_image_with_boxes`` of the writer)."""
        return _logged(
            writer_class, "add_image_with_boxes", tag, tensor_image, tensor_boxes, 0, 0.0,
            rescale, dataformats, labels,
        )  # fmt: skip

    return image_boxes


tbx_image_boxes = _image_boxes(TensorboardXSummaryWriter)
torch_image_boxes = _image_boxes(SummaryWriter)


def _audio(writer_class: type[SummaryWriter]) -> Any:
    def audio(tag: str, tensor: Any, sample_rate: Any = 44100) -> Any:
        """``audio`` of both libraries: 16-bit WAV in a ``Summary.Audio``, the samples
        converted as the library converts them (``add_audio`` of the writer)."""
        return _logged(writer_class, "add_audio", tag, tensor, 0, sample_rate, 0.0)

    return audio


tbx_audio = _audio(TensorboardXSummaryWriter)
torch_audio = _audio(SummaryWriter)


def text(tag: str, text: Any) -> Any:
    """``text`` of both libraries: the tag ``<tag>/text_summary``."""
    return _logged(SummaryWriter, "add_text", tag, text, 0, 0.0)


def pr_curve(
    tag: str, labels: Any, predictions: Any, num_thresholds: Any = 127, weights: Any = None
) -> Any:
    """``pr_curve`` of both libraries: ``num_thresholds`` from 1, capped at 127 as there."""
    from ..._common.convert import check_tag
    from ..._summaries.pr_curve import library_thresholds, pr_curve_value

    tag = check_tag(tag)
    n = library_thresholds(tag, num_thresholds)
    return _summary_of(pr_curve_value(tag, labels, predictions, n, weights))


def pr_curve_raw(
    tag: str,
    tp: Any,
    fp: Any,
    tn: Any,
    fn: Any,
    precision: Any,
    recall: Any,
    num_thresholds: Any = 127,
    weights: Any = None,
) -> Any:
    """``pr_curve_raw`` of both libraries: ``num_thresholds`` (stored in the metadata) from 1,
    capped at 127 as there; ``weights`` is ignored, as there."""
    from ..._common.convert import check_tag
    from ..._summaries.pr_curve import library_thresholds, pr_curve_raw_value

    del weights
    tag = check_tag(tag)
    n = library_thresholds(tag, num_thresholds)
    rows = (tp, fp, tn, fn, precision, recall)
    return _summary_of(pr_curve_raw_value(tag, rows, n))


def tbx_hparams(hparam_dict: Any = None, metric_dict: Any = None) -> tuple[Any, Any, Any]:
    """``tensorboardX.summary.hparams``: (experiment, session start, session end) Summaries,
    booleans recorded as booleans."""
    return _hparams(hparam_dict, metric_dict, None, tensorboardx_values=True)


def tbx_video(tag: str, tensor: Any, fps: Any = 4, dataformats: str = "NTCHW") -> Any:
    """``tensorboardX.summary.video``: an animated GIF, the tag cleaned."""
    return _logged(TensorboardXSummaryWriter, "add_video", tag, tensor, 0, fps, 0.0, dataformats)


def tbx_mesh(tag: str, vertices: Any, colors: Any, faces: Any, config_dict: Any = None) -> Any:
    """``tensorboardX.summary.mesh``: tensorboardX's ``{tag}_1/_2/_3`` values."""
    return _logged(
        TensorboardXSummaryWriter, "add_mesh", tag, vertices, colors, faces, config_dict, 0, 0.0
    )


# -- torch.utils.tensorboard.summary --------------------------------------------------------------


def torch_scalar(
    name: str,
    tensor: Any,
    collections: Any = None,
    new_style: bool = False,
    double_precision: bool = False,
) -> Any:
    """``torch.utils.tensorboard.summary.scalar``: a ``simple_value``, or with ``new_style`` a
    rank-0 tensor with ``scalars`` metadata; ``collections`` is ignored, as in torch."""
    return _logged(
        SummaryWriter, "add_scalar", name, tensor, 0, 0.0, new_style=new_style,
        double_precision=double_precision,
    )  # fmt: skip


def torch_histogram(name: str, values: Any, bins: Any, max_bins: Any = None) -> Any:
    """``torch.utils.tensorboard.summary.histogram``: torch's buckets for ``bins``.

    Raises:
      ValueError: ``bins='tensorflow'`` or no values, as in torch (the writer's
        ``add_histogram`` takes both).
    """
    _check_histogram_input(name, values, bins)
    return _logged(SummaryWriter, "add_histogram", name, values, 0, bins, 0.0, max_bins)


def torch_tensor_proto(tag: str, tensor: Any) -> Any:
    """``torch.utils.tensorboard.summary.tensor_proto``: the whole tensor in the typed field
    torch picks for its dtype, plugin ``tensor`` (``SummaryWriter.add_tensor``'s value).

    Raises:
      ValueError: an unsupported dtype or a tensor of 2 GiB or more, as in torch.
    """
    from ..._common.convert import check_tag
    from ..._summaries.torch_tensor import tensor_value

    return _summary_of(tensor_value(check_tag(tag), tensor))


def torch_image(tag: str, tensor: Any, rescale: Any = 1, dataformats: str = "NCHW") -> Any:
    """``torch.utils.tensorboard.summary.image``: one PNG (a batch tiled into a grid)."""
    return _image(SummaryWriter, tag, tensor, rescale, dataformats)


def torch_hparams(
    hparam_dict: Any = None, metric_dict: Any = None, hparam_domain_discrete: Any = None
) -> tuple[Any, Any, Any]:
    """``torch.utils.tensorboard.summary.hparams``: (experiment, session start, session end)
    Summaries, booleans recorded as numbers."""
    return _hparams(hparam_dict, metric_dict, hparam_domain_discrete, tensorboardx_values=False)


def torch_video(tag: str, tensor: Any, fps: Any = 4) -> Any:
    """``torch.utils.tensorboard.summary.video``: ``[N, T, C, H, W]`` as an animated GIF."""
    return _logged(SummaryWriter, "add_video", tag, tensor, 0, fps, 0.0)


def torch_mesh(
    tag: str,
    vertices: Any,
    colors: Any,
    faces: Any,
    config_dict: Any,
    display_name: Any = None,
    description: Any = None,
) -> Any:
    """``torch.utils.tensorboard.summary.mesh``: torch's ``{tag}_VERTEX/_FACE/_COLOR`` values
    (``display_name`` and ``description`` are not written, as in torch)."""
    return _logged(SummaryWriter, "add_mesh", tag, vertices, colors, faces, config_dict, 0, 0.0)


custom_scalars = _custom_scalars

#: name in ``tensorboardX.summary`` -> npsummary's builder.
TENSORBOARDX_BUILDERS = {
    "scalar": tbx_scalar,
    "histogram": tbx_histogram,
    "histogram_raw": histogram_raw,
    "image": tbx_image,
    "image_boxes": tbx_image_boxes,
    "video": tbx_video,
    "audio": tbx_audio,
    "text": text,
    "pr_curve": pr_curve,
    "pr_curve_raw": pr_curve_raw,
    "hparams": tbx_hparams,
    "custom_scalars": custom_scalars,
    "mesh": tbx_mesh,
}
#: name in ``torch.utils.tensorboard.summary`` -> npsummary's builder.
TORCH_BUILDERS = {
    "scalar": torch_scalar,
    "histogram": torch_histogram,
    "histogram_raw": histogram_raw,
    "image": torch_image,
    "image_boxes": torch_image_boxes,
    "video": torch_video,
    "audio": torch_audio,
    "text": text,
    "pr_curve": pr_curve,
    "pr_curve_raw": pr_curve_raw,
    "hparams": torch_hparams,
    "custom_scalars": custom_scalars,
    "mesh": torch_mesh,
    "tensor_proto": torch_tensor_proto,
}
