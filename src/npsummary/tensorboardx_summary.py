"""``tensorboardX.summary``'s builders without tensorboardX: each returns npsummary's ``Summary``
proto (``hparams``: three of them) for ``SummaryWriter.file_writer.add_summary``, with
tensorboardX's signature and values (tags cleaned as tensorboardX cleans them)::

    from npsummary.tensorboardx_summary import hparams, scalar

    exp, ssi, sei = hparams({"lr": 0.1}, {"hp/loss": 0.0})
    for summary in (exp, ssi, sei, scalar("hp/loss", 0.25)):
        writer.file_writer.add_summary(summary, global_step=0)

``npsummary.patch()`` binds these where a module imported tensorboardX's.
"""

from __future__ import annotations

from ._frontends.tbx.builders import TENSORBOARDX_BUILDERS

__all__ = [
    "audio",
    "custom_scalars",
    "histogram",
    "histogram_raw",
    "hparams",
    "image",
    "image_boxes",
    "mesh",
    "pr_curve",
    "pr_curve_raw",
    "scalar",
    "text",
    "video",
]

audio = TENSORBOARDX_BUILDERS["audio"]
custom_scalars = TENSORBOARDX_BUILDERS["custom_scalars"]
histogram = TENSORBOARDX_BUILDERS["histogram"]
histogram_raw = TENSORBOARDX_BUILDERS["histogram_raw"]
hparams = TENSORBOARDX_BUILDERS["hparams"]
image = TENSORBOARDX_BUILDERS["image"]
image_boxes = TENSORBOARDX_BUILDERS["image_boxes"]
mesh = TENSORBOARDX_BUILDERS["mesh"]
pr_curve = TENSORBOARDX_BUILDERS["pr_curve"]
pr_curve_raw = TENSORBOARDX_BUILDERS["pr_curve_raw"]
scalar = TENSORBOARDX_BUILDERS["scalar"]
text = TENSORBOARDX_BUILDERS["text"]
video = TENSORBOARDX_BUILDERS["video"]
