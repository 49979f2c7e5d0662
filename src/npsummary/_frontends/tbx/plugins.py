"""The plugin methods of tensorboardX's and torch's ``SummaryWriter``, as a mixin.

:class:`PluginMethods` adds ``add_hparams``, ``add_pr_curve``, ``add_pr_curve_raw``, the custom
scalars methods, ``add_embedding``, ``add_video``, ``add_image_with_boxes``, ``add_mesh`` and
``add_tensor`` to :class:`npsummary.SummaryWriter`. Each method validates its arguments, builds
its summary with the one builder of that kind (``npsummary._summaries.*``) and writes it through
the writer's core; bad input raises ``TypeError``/``ValueError`` naming the tag before anything
is written.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ..._common.convert import check_tag, to_positive_float
from ..._core.event_writer import EventWriter, LogdirTarget
from .base import TbxWriterBase

__all__ = ["OWN_RUN", "PluginMethods"]

#: ``add_hparams(run_name=OWN_RUN)`` writes the session into the writer's own run.
OWN_RUN = "."


def _run_path(run_name: str) -> list[str]:
    """Path components of a sub-run name, each one safe directory name (not empty, ``.`` or
    ``..``, no NUL, at most 255 UTF-8 bytes, no ``::`` that fsspec reads as a chained URL)."""
    check_tag(run_name, "add_hparams: run_name")
    parts = run_name.replace("\\", "/").split("/")
    if any(
        part in ("", ".", "..") or "\0" in part or "::" in part for part in parts
    ) or os.path.isabs(run_name):
        raise ValueError(
            f"add_hparams: run_name must be a relative path inside the logdir without '.' or "
            f"'..' parts, NUL or '::' (or '.' for the writer's own run), got {run_name!r}"
        )
    if any(len(part.encode("utf-8")) > 255 for part in parts):
        raise ValueError(
            f"add_hparams: each directory of run_name is at most 255 bytes, got {run_name!r:.80}"
        )
    return parts


class PluginMethods(TbxWriterBase):
    """tensorboardX / torch plugin methods; mixed into :class:`npsummary.SummaryWriter`."""

    def _nan_report(self) -> Any:
        return self._get_writer().check_nonfinite.nan_pixels

    def _write_session(self, run_name: str, write: Callable[[EventWriter], None]) -> None:
        """Run ``write`` on the writer of the session's run.

        A sub-run on disk gets its own event file, written and closed at once, as torch's
        ``with SummaryWriter(...)`` does: intermediate directories of a nested name hold no
        event file (so they are no run of their own) and no file stays open per session.
        """
        if run_name == OWN_RUN:
            write(self._get_writer())
            return
        parts = _run_path(run_name)
        logdir = self.get_logdir()
        if not logdir:  # a custom sink: its sub-run sinks
            writer = self._get_writer()
            for part in parts:
                writer = writer.child(part)
            write(writer)
            return
        session = LogdirTarget(os.path.join(logdir, *parts)).open(self._options)
        try:
            write(session)
        finally:
            session.sink.close()

    # -- hparams --------------------------------------------------------------------------------

    def add_hparams(
        self,
        hparam_dict: dict[str, Any],
        metric_dict: dict[str, Any],
        hparam_domain_discrete: Any = None,
        run_name: Any = None,
        global_step: int | None = None,
        *,
        name: str | None = None,
    ) -> None:
        """Log one hyperparameter session for TensorBoard's HParams dashboard.

        Writes torch's three ``_hparams_/*`` summaries and one scalar per metric into the
        sub-run ``run_name``, by default named by the current time (``str(time.time())``) as in
        torch and tensorboardX, so each call is one session (one row of the dashboard).
        ``run_name='.'`` writes the session into the writer's own run
        instead: no extra run appears, and the run's own scalars (``metric_dict``'s keys and any
        tags logged with ``add_scalar``) are the session's metrics.

        Args:
          hparam_dict: name -> value; bool, int, float, str, a NumPy scalar or a size-1 numeric
            array; ``None`` values are skipped.
          metric_dict: metric tag -> number, logged as scalars at ``global_step``.
          hparam_domain_discrete: name -> list of the values that hyperparameter can take.
          run_name: sub-run of the session (a relative path), or ``'.'`` for this run.
          global_step: step of the metric scalars (default: the writer's step).
          name: tensorboardX's name for ``run_name``. tensorboardX's positional order
            ``(hparam_dict, metric_dict, name, global_step)`` is accepted too (a str third).

        Raises:
          TypeError: a dict is not a dict, a key is not a str, or a value has another type
            (the message names the key).
          ValueError: a bad ``run_name`` or a domain key missing from ``hparam_dict``.
        """
        from ..._summaries.hparams import hparams_summaries, metric_values

        if isinstance(hparam_domain_discrete, str):
            # tensorboardX's order: (hparam_dict, metric_dict, name, global_step)
            if isinstance(run_name, str):
                raise TypeError(
                    "add_hparams: two run names given: a str hparam_domain_discrete "
                    "(tensorboardX's name, third argument) and run_name"
                )
            if run_name is not None:
                if global_step is not None:
                    raise TypeError("add_hparams: global_step given twice")
                global_step = run_name
            hparam_domain_discrete, run_name = None, hparam_domain_discrete
        if name is not None:
            if run_name is not None:
                raise TypeError("add_hparams: pass run_name or name, not both")
            run_name = name
        if run_name is not None and not isinstance(run_name, str):
            raise TypeError(f"add_hparams: run_name must be a str, got {type(run_name).__name__}")
        if run_name is not None and run_name != OWN_RUN:
            _run_path(run_name)  # refused before anything is created
        metrics = metric_values(metric_dict)
        summaries = hparams_summaries(
            hparam_dict,
            [t for t, _ in metrics],
            hparam_domain_discrete,
            tensorboardx_values=self.flavour == "tensorboardX",
        )
        step = self._resolve("add_hparams", global_step, None)[1]
        wall = time.time()

        def write(target: EventWriter) -> None:
            for summary in summaries:
                target.write_summary(summary, step, wall)
            for tag, value in metrics:
                target.write_simple_scalar(tag, value, step, wall)  # as torch's add_scalar

        self._write_session(run_name or str(time.time()), write)

    # -- PR curves -----------------------------------------------------------------------------

    def add_pr_curve(
        self,
        tag: str,
        labels: Any,
        predictions: Any,
        global_step: int | None = None,
        num_thresholds: int = 127,
        weights: Any = None,
        walltime: float | None = None,
    ) -> None:
        """Log a precision-recall curve computed from binary labels and predicted probabilities.

        Args:
          tag: data identifier.
          labels: ground truth, 0/1 or bool, any shape.
          predictions: probabilities in [0, 1], as many as labels.
          global_step: step (default: the writer's step).
          num_thresholds: thresholds ``i / (num_thresholds - 1)``; from 1, and at most 127
            are written, as tensorboardX and torch write them.
          weights: optional non-negative weight per prediction (or one scalar).
          walltime: event time in seconds since the epoch (default now).

        Raises:
          TypeError: non-numeric input. ValueError: lengths differ, a label outside {0, 1}, a
            prediction outside [0, 1] or not finite, a bad weight or ``num_thresholds``.
        """
        from ..._summaries.pr_curve import library_thresholds, pr_curve_value

        tag, step, wall = self._resolve(tag, global_step, walltime)
        n = library_thresholds(tag, num_thresholds)
        value = pr_curve_value(tag, labels, predictions, n, weights)
        self._get_writer().write_values([value], step, wall)

    def add_pr_curve_raw(
        self,
        tag: str,
        true_positive_counts: Any,
        false_positive_counts: Any,
        true_negative_counts: Any,
        false_negative_counts: Any,
        precision: Any,
        recall: Any,
        global_step: int | None = None,
        num_thresholds: int = 127,
        weights: Any = None,
        walltime: float | None = None,
    ) -> None:
        """Log a precision-recall curve from its six precomputed rows.

        Each row is 1-D with one entry per threshold, all of one length; ``num_thresholds`` is
        stored in the metadata (TensorBoard plots the rows' length), from 1 and at most 127, as
        tensorboardX and torch store it. ``weights`` is accepted and
        ignored, as in tensorboardX and torch.

        Raises:
          TypeError: a non-numeric row. ValueError: a row is not 1-D, lengths differ, or a row
            holds NaN or infinity.
        """
        from ..._summaries.pr_curve import library_thresholds, pr_curve_raw_value

        del weights
        tag, step, wall = self._resolve(tag, global_step, walltime)
        rows = (
            true_positive_counts,
            false_positive_counts,
            true_negative_counts,
            false_negative_counts,
            precision,
            recall,
        )
        n = library_thresholds(tag, num_thresholds)
        value = pr_curve_raw_value(tag, rows, n)
        self._get_writer().write_values([value], step, wall)

    # -- custom scalars ------------------------------------------------------------------------

    def add_custom_scalars(self, layout: dict[str, dict[str, list[Any]]]) -> None:
        """Define the Custom Scalars dashboard's charts: ``{category: {title: [kind, tags]}}``
        with kind ``'Multiline'`` (tags are regexes of scalar tags) or ``'Margin'`` (exactly
        three tags: value, lower, upper). Written at step 0, as in tensorboardX and torch;
        TensorBoard uses the run's latest layout.

        Raises:
          TypeError: a malformed layout. ValueError: a margin chart without 3 tags.
        """
        from ..._summaries.custom_scalars import layout_value

        value = layout_value(layout)
        self._get_writer().write_values([value], 0, time.time())

    def add_custom_scalars_multilinechart(
        self, tags: list[str], category: str = "default", title: str = "untitled"
    ) -> None:
        """Shorthand for one multiline chart of ``tags`` in ``category``."""
        category = check_tag(category, "add_custom_scalars_multilinechart: category")
        title = check_tag(title, "add_custom_scalars_multilinechart: title")
        self.add_custom_scalars({category: {title: ["Multiline", tags]}})

    def add_custom_scalars_marginchart(
        self, tags: list[str], category: str = "default", title: str = "untitled"
    ) -> None:
        """Shorthand for one margin chart of three ``tags`` (value, lower, upper).

        Raises:
          ValueError: ``tags`` does not have exactly three entries.
        """
        category = check_tag(category, "add_custom_scalars_marginchart: category")
        title = check_tag(title, "add_custom_scalars_marginchart: title")
        if not isinstance(tags, (list, tuple)) or len(tags) != 3:
            from ..._common.compat_errors import MarginChartError

            raise MarginChartError(f"add_custom_scalars_marginchart needs 3 tags, got {tags!r}")
        self.add_custom_scalars({category: {title: ["Margin", tags]}})

    # -- embeddings ----------------------------------------------------------------------------

    def add_embedding(
        self,
        mat: Any,
        metadata: Any = None,
        label_img: Any = None,
        global_step: int | None = None,
        tag: str = "default",
        metadata_header: Any = None,
    ) -> None:
        """Save an embedding for TensorBoard's projector (files beside the event file).

        Writes ``<step:05d>/<tag>/tensors.tsv``, ``metadata.tsv`` and ``sprite.png`` under the
        logdir and appends the embedding to ``projector_config.pbtxt``, keeping the ones
        logged before. Every input is checked before any file is written.

        Args:
          mat: ``[N, D]`` numeric matrix, one point per row.
          metadata: N labels; with ``metadata_header``, N lists of one value per column.
          label_img: ``[N, C, H, W]`` square images, C = 1 or 3, tiled into the sprite.
          global_step: step in the directory name (default: the writer's step).
          tag: name of the embedding; any string (encoded so it cannot leave the logdir).
          metadata_header: column names for multi-column metadata.

        Raises:
          TypeError: non-numeric data. ValueError: ``mat`` is not 2-D, metadata or images do
            not match its row count, images are not square, or the sprite exceeds 8192 px.
          OSError: the writer has no logdir on disk or a file cannot be written.
        """
        from ..._format.png import encode_png
        from ..._sinks import projector as _projector
        from ..._summaries import embedding

        tag = check_tag(tag)
        step = self._step_of(tag, global_step)
        matrix = embedding.check_matrix(tag, mat)
        count = matrix.shape[0]
        labels = (
            None
            if metadata is None
            else embedding.metadata_tsv(tag, metadata, metadata_header, count)
        )
        sprite = None if label_img is None else embedding.sprite_image(tag, label_img, count)
        logdir = self.get_logdir()
        if not logdir:
            raise ValueError(f"{tag!r}: add_embedding writes files and needs a logdir on disk")
        subdir = f"{embedding.step_dir(step)}/{embedding.encode_tag(tag)}"
        files: list[tuple[str, Iterable[bytes]]] = []
        if labels is not None:
            files.append(("metadata.tsv", [labels]))
        if sprite is not None:
            files.append(("sprite.png", [encode_png(sprite[0])]))
        files.append(("tensors.tsv", embedding.tensors_tsv(matrix)))
        block = embedding.embedding_block(
            tag, step, subdir, labels is not None, None if sprite is None else sprite[1]
        )
        # Through the run's location (a local directory or the URL's filesystem), never a path
        # joined to the working directory.
        _projector.save_embedding(logdir, subdir, files, block)

    def _step_of(self, tag: str, global_step: Any) -> int:
        return self._resolve(tag, global_step, 0.0)[1]

    # -- video, boxes, mesh, tensor ------------------------------------------------------------

    def add_video(
        self,
        tag: str,
        vid_tensor: Any,
        global_step: int | None = None,
        fps: float = 4,
        walltime: float | None = None,
        dataformats: str = "NTCHW",
    ) -> None:
        """Log a video (or a batch of videos tiled in a grid) as an animated GIF.

        The GIF is encoded in NumPy (no moviepy) and stored as ``Summary.Image``, as in
        tensorboardX; TensorBoard's Images dashboard plays it.

        Args:
          tag: data identifier.
          vid_tensor: ``[N, T, C, H, W]`` (or as ``dataformats`` says); uint8 in [0, 255] or
            floats in [0, 1]; C = 1, 3 or 4.
          global_step: step (default: the writer's step).
          fps: frames per second (each frame lasts ``int(100 / fps)`` hundredths of a second).
          walltime: event time in seconds since the epoch (default now).
          dataformats: permutation of ``'NTCHW'`` (or of ``'TCHW'`` for one clip).

        Raises:
          TypeError: non-numeric data or a bad fps/dataformats type.
          ValueError: wrong rank, an unsupported C, an empty video or fps not positive.
        """
        from ..._imaging.layout import to_ntchw
        from ..._summaries.video import video_value

        tag, step, wall = self._resolve(tag, global_step, walltime)
        if isinstance(fps, (bool, np.bool_)):
            raise TypeError(f"{tag!r}: fps must be a number, got {fps!r}")
        rate = to_positive_float(fps, tag, "fps")
        video = to_ntchw(vid_tensor, dataformats, tag=tag)
        value = video_value(
            tag, video, rate, self._nan_report(), tensorboardx=self.flavour == "tensorboardX"
        )
        self._get_writer().write_values([value], step, wall)

    def add_image_with_boxes(
        self,
        tag: str,
        img_tensor: Any,
        box_tensor: Any,
        global_step: int | None = None,
        walltime: float | None = None,
        rescale: Any = 1,
        dataformats: Any = "CHW",
        labels: Any = None,
    ) -> None:
        """Log an image with bounding boxes drawn on it in red.

        Boxes are drawn in NumPy exactly where torch's Pillow drawing puts them. Label text
        needs a font: with Pillow installed it is drawn with Pillow's default font, as torch
        does; without Pillow only the red label rectangle is drawn
        (see ``npsummary._imaging.boxes``).
        tensorboardX's order (``..., walltime, dataformats, labels``) is accepted too: a str in
        the ``rescale`` position is taken as ``dataformats``.

        Args:
          tag: data identifier.
          img_tensor: image, ``'CHW'`` by default (uint8, or floats in [0, 1]).
          box_tensor: ``[N, 4]`` boxes ``(xmin, ymin, xmax, ymax)`` in pixels.
          global_step: step (default: the writer's step).
          walltime: event time in seconds since the epoch (default now).
          rescale: scale factor applied to the finished image.
          dataformats: layout of ``img_tensor`` (``'CHW'``, ``'HWC'``, ``'HW'``, ...).
          labels: one string per box.

        Raises:
          TypeError: non-numeric data or non-str labels. ValueError: bad shapes, non-finite
            boxes, a label count different from the box count.
        """
        from ..._summaries.image_boxes import image_boxes_value

        if isinstance(rescale, str):  # tensorboardX positional order
            rescale, dataformats, labels = 1, rescale, dataformats
        tag, step, wall = self._resolve(tag, global_step, walltime)
        value = image_boxes_value(
            tag, img_tensor, box_tensor, rescale, dataformats, labels, self._nan_report(),
            tensorboardx=self.flavour == "tensorboardX",
        )  # fmt: skip
        self._get_writer().write_values([value], step, wall)

    def add_mesh(
        self,
        tag: str,
        vertices: Any,
        colors: Any = None,
        faces: Any = None,
        config_dict: dict[str, Any] | None = None,
        global_step: int | None = None,
        walltime: float | None = None,
    ) -> None:
        """Log a mesh or point cloud for TensorBoard's Mesh dashboard (torch's format).

        Args:
          tag: data identifier; values are tagged ``{tag}_VERTEX``, ``_FACE``, ``_COLOR``.
          vertices: ``[B, N, 3]`` finite coordinates.
          colors: optional ``[B, N, 3]`` colours (uint8 0-255).
          faces: optional ``[B, F, 3]`` vertex indices in ``[0, N)``.
          config_dict: three.js settings (camera, lights, material), JSON-encoded.
          global_step: step (default: the writer's step).
          walltime: event time in seconds since the epoch (default now).

        Raises:
          TypeError: non-numeric data or a config JSON cannot encode. ValueError: bad shapes,
            non-finite vertices or face indices out of range.
        """
        from ..._summaries.mesh import mesh_summary

        tag, step, wall = self._resolve(tag, global_step, walltime)
        summary = mesh_summary(
            tag, vertices, colors, faces, config_dict, tensorboardx=self.flavour == "tensorboardX"
        )
        self._get_writer().write_summary(summary, step, wall)

    def add_tensor(
        self,
        tag: str,
        tensor: Any,
        global_step: int | None = None,
        walltime: float | None = None,
    ) -> None:
        """Log a whole tensor as torch's ``add_tensor`` does (plugin ``tensor``, values in the
        dtype's typed field; see ``npsummary._summaries.tensor``).

        Raises:
          ValueError: an unsupported dtype or a tensor of 2 GiB or more.
        """
        from ..._summaries.torch_tensor import tensor_value

        tag, step, wall = self._resolve(tag, global_step, walltime)
        self._get_writer().write_values([tensor_value(tag, tensor)], step, wall)
