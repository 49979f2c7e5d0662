"""Image methods of ``SummaryWriter``: images, image grids, matplotlib figures, conv filters and
feature maps. Every one ends in one image value built by :mod:`npsummary._summaries.image`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..._common.convert import as_array, check_flag, check_int, check_text, tagged
from .base import TbxWriterBase

if TYPE_CHECKING:
    from ..._common.types import ArrayLike, DataFormats, GlobalStepLike, KernelLayout, NormalizeMode

__all__ = ["ImageMethods"]

#: Most padding pixels between grid tiles: a huge padding would allocate a huge canvas.
MAX_PADDING = 1024


def _grid_options(
    tag: str, ncols: Any, padding: Any, *, ncols_optional: bool
) -> tuple[int | None, int]:
    """Grid options, checked up front (before any pixel work) and returned as ints."""
    columns = None
    if ncols is not None or not ncols_optional:
        columns = check_int(ncols, "ncols", tag=tag, minimum=1)
    return columns, check_int(padding, "padding", tag=tag, minimum=0, maximum=MAX_PADDING)


class ImageMethods(TbxWriterBase):
    """``add_image``, ``add_images``, ``add_figure``, ``add_filters``, ``add_feature_maps``."""

    def add_image(
        self,
        tag: str,
        img_tensor: ArrayLike,
        global_step: GlobalStepLike = None,
        walltime: float | None = None,
        dataformats: DataFormats = "CHW",
        *,
        description: str | None = None,
    ) -> None:
        """Log one image.

        Args:
          tag: the image's name.
          img_tensor: pixels; C is 1 (gray, written as RGB as tensorboardX and torch do),
            2 (gray + alpha), 3 (RGB) or 4 (RGBA). uint8 is stored as is; every other dtype
            (floats, other integers, bool) is read as [0, 1] as both libraries read it:
            ``float32(x) * 255`` clipped to [0, 255] and truncated, as torch does, so an
            int 0/1 mask is black and white (the tensorboardX flavour: ``(x * 255.0)
            .astype(uint8)`` as tensorboardX, so values outside [0, 1] wrap around); NaN is
            drawn as 0 with a :class:`~npsummary.NonFiniteWarning`. Written as a
            ``Summary.Image`` (PNG), as tensorboardX and torch write it.
          global_step: step; default: the step given to :meth:`set_step`.
          walltime: seconds since the epoch; default: now.
          dataformats: axis letters, ``'CHW'`` (default, torch), ``'HWC'``, ``'HW'`` or any
            permutation; a 4-D layout such as ``'NCHW'`` is tiled into one grid image.
          description: Markdown shown in TensorBoard.

        Raises:
          TypeError, ValueError: bad input, naming the tag; nothing is written.
        """
        from ..._imaging.layout import to_hwc

        tag, step, wall = self._resolve(tag, global_step, walltime)
        hwc = to_hwc(as_array(img_tensor, tag), dataformats, tag=tag)
        self._write_pixels(tag, hwc, step, wall, description, rgb=True)

    def add_images(
        self,
        tag: str,
        img_tensor: ArrayLike,
        global_step: GlobalStepLike = None,
        walltime: float | None = None,
        dataformats: DataFormats = "NCHW",
        *,
        ncols: int = 8,
        padding: int = 0,
        description: str | None = None,
    ) -> None:
        """Log a batch of images tiled into one grid, as tensorboardX does.

        Args:
          tag: the grid's name.
          img_tensor: ``'NCHW'`` by default (or ``'NHWC'``, ``'NHW'``, …); a list of
            same-shaped images is stacked first. Value rules as :meth:`add_image`.
          global_step, walltime: as :meth:`add_image`.
          dataformats: axis letters of the batch, or of each image (``'CHW'``, ``'HWC'``,
            ...) for a list of images or a single image, as tensorboardX and torch take them.
          ncols: images per row.
          padding: pixels between tiles (at most 1024).
          description: Markdown shown in TensorBoard.

        Raises:
          TypeError, ValueError: bad input or an empty batch, naming the tag.
        """
        from ..._imaging.grid import make_grid
        from ..._imaging.layout import to_nhwc

        tag, step, wall = self._resolve(tag, global_step, walltime)
        images = img_tensor
        per_image = isinstance(dataformats, str) and "N" not in dataformats.upper()
        if isinstance(images, (list, tuple)):
            images = [as_array(image, tag) for image in images]
        elif per_image:
            images = [as_array(images, tag)]  # one image ('CHW', 'HWC'), as both libraries take
        if per_image:
            # Images in the per-image layout (tensorboardX's documented use for a list):
            # stacked along a new first axis.
            dataformats = "N" + dataformats
        columns, pad = _grid_options(tag, ncols, padding, ncols_optional=False)
        batch = images if isinstance(images, list) else as_array(images, tag)
        nhwc = tagged(tag, lambda: to_nhwc(batch, dataformats, tag=tag))
        if nhwc.shape[0] == 0:
            raise ValueError(f"{tag!r}: add_images got an empty batch, shape {nhwc.shape}")
        grid = make_grid(nhwc, ncols=columns or 1, padding=pad)
        self._write_pixels(tag, grid, step, wall, description, rgb=True)

    def add_figure(
        self,
        tag: str,
        figure: Any,
        global_step: GlobalStepLike = None,
        close: bool = True,
        walltime: float | None = None,
    ) -> None:
        """Log a matplotlib figure (or a list of same-sized figures, tiled).

        The figure is rendered through its Agg canvas buffer; matplotlib is imported only here.

        Args:
          tag: the image's name.
          figure: a ``matplotlib.figure.Figure`` or a list of them.
          global_step, walltime: as :meth:`add_image`.
          close: close the figures afterwards.

        Raises:
          TypeError: not a figure. ValueError: an empty list, or figures of different sizes.
        """
        from ..._imaging.grid import figure_to_hwc, make_grid

        tag, step, wall = self._resolve(tag, global_step, walltime)
        figures = list(figure) if isinstance(figure, (list, tuple)) else [figure]
        if not figures:
            raise ValueError(f"{tag!r}: add_figure got an empty list of figures")
        for f in figures:
            if not hasattr(f, "canvas") or not hasattr(f, "savefig"):
                raise TypeError(
                    f"{tag!r}: add_figure expects a matplotlib Figure (or a list of them), "
                    f"got {type(f).__name__}"
                )
        close = check_flag(close, "close", tag=tag)
        rendered = [figure_to_hwc(f) for f in figures]
        if close:
            import matplotlib.pyplot as plt

            for f in figures:
                plt.close(f)
        if len({r.shape for r in rendered}) != 1:
            raise ValueError(
                f"{tag!r}: figures in one add_figure call must have the same size, got "
                f"{sorted({r.shape for r in rendered})}"
            )
        pixels = rendered[0] if len(rendered) == 1 else make_grid(np.stack(rendered), 8, 0)
        self._write_pixels(tag, pixels, step, wall, None)

    def add_filters(
        self,
        tag: str,
        weights: ArrayLike,
        global_step: GlobalStepLike = None,
        walltime: float | None = None,
        layout: KernelLayout = "HWIO",
        *,
        normalize: NormalizeMode = "tile",
        ncols: int | None = None,
        padding: int = 1,
    ) -> None:
        """Log a conv layer's kernel as one grid image, each tile scaled to [0, 1].

        Args:
          tag: the image's name.
          weights: the kernel. A layer with 3 input channels is drawn as one RGB tile per
            filter; otherwise each (out, in) slice is a gray tile, one row per output filter.
          global_step, walltime: as :meth:`add_image`.
          layout: ``'HWIO'`` (TF/Keras ``[kh, kw, in, out]``) or ``'OIHW'`` (torch).
          normalize: ``'tile'``, ``'filter'``, ``'layer'`` or ``'none'``.
          ncols: tiles per row; default: one row per filter.
          padding: pixels between tiles.

        Raises:
          TypeError, ValueError: bad input, naming the tag.
        """
        from ..._imaging.grid import kernel_grid

        tag, step, wall = self._resolve(tag, global_step, walltime)
        columns, pad = _grid_options(tag, ncols, padding, ncols_optional=True)
        grid = kernel_grid(
            as_array(weights, tag), layout, normalize=normalize, ncols=columns, padding=pad,
            tag=tag,
        )  # fmt: skip
        self._write_pixels(tag, grid, step, wall, None)

    def add_feature_maps(
        self,
        tag: str,
        activations: ArrayLike,
        global_step: GlobalStepLike = None,
        walltime: float | None = None,
        dataformats: DataFormats = "NCHW",
        *,
        sample: int = 0,
        normalize: NormalizeMode = "tile",
        ncols: int | None = None,
        padding: int = 1,
    ) -> None:
        """Log what a conv layer sees: one sample's activations as a grid of gray tiles, one
        per channel, each min-max normalised.

        Args:
          tag: the image's name.
          activations: a layer's output.
          global_step, walltime: as :meth:`add_image`.
          dataformats: ``'NCHW'`` (torch), ``'NHWC'`` (TF) or ``'CHW'``/``'HWC'`` for one
            sample.
          sample: which sample of the batch.
          normalize, ncols, padding: as :meth:`add_filters`.

        Raises:
          TypeError, ValueError: bad input, naming the tag.
        """
        from ..._imaging.grid import feature_map_grid

        tag, step, wall = self._resolve(tag, global_step, walltime)
        columns, pad = _grid_options(tag, ncols, padding, ncols_optional=True)
        index = check_int(sample, "sample", tag=tag)
        grid = feature_map_grid(
            as_array(activations, tag), dataformats, sample=index, normalize=normalize,
            ncols=columns, padding=pad, tag=tag,
        )  # fmt: skip
        self._write_pixels(tag, grid, step, wall, None)

    def _write_pixels(
        self,
        tag: str,
        hwc: Any,
        step: int,
        wall: float,
        description: str | None,
        *,
        rgb: bool = False,
    ) -> None:
        """Write ``hwc``; ``rgb``: one channel becomes RGB, as tensorboardX's and torch's
        add_image(s) do (npsummary's own filter and feature-map grids stay gray)."""
        from ..._summaries.image import pixels_value

        writer = self._get_writer()
        note = check_text(description, "description", tag=tag)
        nan_report = writer.check_nonfinite.nan_pixels
        wrap = self.flavour == "tensorboardX"
        value = pixels_value(tag, hwc, nan_report, description=note, rgb=rgb, wrap=wrap)
        writer.write_values([value], step, wall)
