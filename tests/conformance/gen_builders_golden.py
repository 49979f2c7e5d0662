"""Regenerate the module-level builder golden files (the output is committed).

    pip install tensorboardX==2.6.5 tensorboard Pillow moviepy
    python tests/conformance/gen_builders_golden.py tensorboardX
    pip install torch==2.13.0 tensorboard Pillow    # in a separate venv (CPU wheel)
    python tests/conformance/gen_builders_golden.py torch

Runs ``builders_program.CALLS`` (and, for torch, ``builders_program.TENSORS`` through
``tensor_proto``) with the library's ``summary`` module and stores each recorded result as JSON
in ``golden/builders/<library>.json``, with the library's version.

torch 2.13's ``make_video`` imports ``moviepy.editor``, which moviepy 2 no longer has: it then
prints a message and writes a value without an image. To record the frames torch hands to its
GIF encoder, this script replaces that one function while it runs with one that stores those
frames losslessly (a gray GIF, Pillow) in the ``Summary.Image`` torch would build
(height, width and colorspace from the frames' shape, as torch sets them).
"""

from __future__ import annotations

import functools
import io
import os
import sys
import warnings
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from conformance import builders_program  # noqa: E402
from conformance._library import write_golden  # noqa: E402


def _lossless_make_video(summary_class: Any) -> Any:
    def make_video(tensor: Any, fps: Any) -> Any:
        from PIL import Image

        _, height, width, channels = tensor.shape
        assert channels == 1, "builders_program's videos are gray"
        frames = [Image.fromarray(frame[:, :, 0], mode="L") for frame in tensor]
        out = io.BytesIO()
        frames[0].save(out, format="GIF", save_all=True, append_images=frames[1:], loop=0)
        return summary_class.Image(
            height=height, width=width, colorspace=channels, encoded_image_string=out.getvalue()
        )

    return make_video


def main(library: str) -> None:
    if library == "torch":
        import torch
        from torch.utils.tensorboard import summary

        version = torch.__version__
        summary.make_video = _lossless_make_video(summary.Summary)
    elif library == "tensorboardX":
        import tensorboardX
        from tensorboardX import summary

        version = tensorboardX.__version__
    else:
        raise SystemExit("usage: gen_builders_golden.py tensorboardX|torch")
    results = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, call in builders_program.CALLS.items():
            results[name] = builders_program.record(functools.partial(call, summary))
        if library == "torch":
            for name, array in builders_program.TENSORS.items():
                tensor = torch.from_numpy(array)
                results[name] = builders_program.record(
                    functools.partial(summary.tensor_proto, "t", tensor)
                )
    write_golden("builders", library, version, "results", results)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "")
