"""Regenerate the image golden files (run once per library; the output is committed).

    pip install tensorboardX==2.6.5 tensorboard Pillow
    python tests/conformance/gen_image_golden.py tensorboardX
    pip install torch==2.13.0 tensorboard Pillow    # in a separate venv (CPU wheel)
    python tests/conformance/gen_image_golden.py torch

Runs ``image_program.run`` with the library's ``SummaryWriter`` and stores each image's fields
and decoded pixels as JSON in ``golden/images/<library>.json``, with the library's version.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

from conformance import image_program  # noqa: E402


def main(library: str) -> None:
    if library == "torch":
        import torch
        from torch.utils.tensorboard import SummaryWriter

        version = torch.__version__
    elif library == "tensorboardX":
        import tensorboardX
        from tensorboardX import SummaryWriter

        version = tensorboardX.__version__
    else:
        raise SystemExit("usage: gen_image_golden.py tensorboardX|torch")
    with tempfile.TemporaryDirectory() as tmp:
        writer = SummaryWriter(tmp)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            image_program.run(writer)
        writer.close()
        images = image_program.read_pixels(tmp)
    target = os.path.join(HERE, "golden", "images", f"{library}.json")
    os.makedirs(os.path.dirname(target), exist_ok=True)
    with open(target, "w") as f:
        json.dump({"version": version, "images": images}, f, sort_keys=True)
        f.write("\n")
    print(f"{target}: {len(images)} images from {library} {version}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "")
