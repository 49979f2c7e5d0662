"""``torch.utils.tensorboard.summary``'s builders without torch: each returns npsummary's
``Summary`` proto (``hparams``: three of them) for ``SummaryWriter.file_writer.add_summary``, with
torch's signature and values (tags kept verbatim)::

    from npsummary.torch_summary import hparams, scalar

    exp, ssi, sei = hparams({"lr": 0.1}, {"hp/loss": 0.0})
    for summary in (exp, ssi, sei, scalar("hp/loss", 0.25)):
        writer.file_writer.add_summary(summary, global_step=0)

``npsummary.patch()`` binds these where a module imported torch's.
"""

from __future__ import annotations

from ._frontends.tbx.builders import TORCH_BUILDERS

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
    "tensor_proto",
    "text",
    "video",
]

audio = TORCH_BUILDERS["audio"]
custom_scalars = TORCH_BUILDERS["custom_scalars"]
histogram = TORCH_BUILDERS["histogram"]
histogram_raw = TORCH_BUILDERS["histogram_raw"]
hparams = TORCH_BUILDERS["hparams"]
image = TORCH_BUILDERS["image"]
image_boxes = TORCH_BUILDERS["image_boxes"]
mesh = TORCH_BUILDERS["mesh"]
pr_curve = TORCH_BUILDERS["pr_curve"]
pr_curve_raw = TORCH_BUILDERS["pr_curve_raw"]
scalar = TORCH_BUILDERS["scalar"]
tensor_proto = TORCH_BUILDERS["tensor_proto"]
text = TORCH_BUILDERS["text"]
video = TORCH_BUILDERS["video"]
