"""GIF decoding: npsummary's decode_gif (the reader's decode=True for videos) against Pillow.

Run from the repository root:

    PYTHONPATH=src python3 benchmarks/bench_gifread.py [--repeat N]

Three clips of 16 frames of 64x64 encoded by our add_video encoder: a square moving over a
static background (only the changed rectangles are coded), colour gradients that shift every
frame (over 256 colours: local palettes, long LZW runs) and uniform noise (one LZW code per
pixel). Both decoders run alternately in one process; the table shows median time per pixel and
the ratio ours/Pillow. Every timed decode is checked equal to Pillow's frames.
"""

from __future__ import annotations

import argparse
import io
import statistics
import time

import numpy as np
from PIL import Image, ImageSequence

from npsummary._format.gif import encode_gif
from npsummary._format.gifread import decode_gif


def pillow_frames(data: bytes) -> np.ndarray:
    with Image.open(io.BytesIO(data)) as im:
        return np.stack([np.asarray(f.convert("RGB")) for f in ImageSequence.Iterator(im)])


def clips(t: int = 16, n: int = 64) -> dict[str, np.ndarray]:
    y, x = np.mgrid[:n, :n]
    moving = np.zeros((t, n, n, 3), np.uint8)
    moving[..., 2] = 90
    for i in range(t):
        moving[i, 10 + i : 26 + i, 2 * i : 2 * i + 16] = (255, 128, 0)
    shift = np.arange(t)[:, None, None]
    gradients = np.stack(
        [
            (x * 4 + shift * 8) % 256,
            np.broadcast_to((y * 4) % 256, (t, n, n)),
            (x + y + shift) % 256,
        ],
        -1,
    ).astype(np.uint8)
    noise = np.random.default_rng(0).integers(0, 256, (t, n, n, 3), dtype=np.uint8)
    return {"moving square": moving, "gradients": gradients, "noise": noise}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    print("| clip | GIF bytes | ours µs/pixel | Pillow µs/pixel | ours/Pillow |")
    print("|---|---|---|---|---|")
    for name, frames in clips().items():
        data = encode_gif(frames, 5)
        pixels = frames[..., 0].size
        ours, theirs = [], []
        for _ in range(args.repeat):
            start = time.perf_counter()
            got, _ = decode_gif(data)
            ours.append(time.perf_counter() - start)
            start = time.perf_counter()
            want = pillow_frames(data)
            theirs.append(time.perf_counter() - start)
            if not np.array_equal(got[..., :3], want):
                raise SystemExit(f"{name}: decoded frames differ from Pillow's")
        a, b = statistics.median(ours) / pixels * 1e6, statistics.median(theirs) / pixels * 1e6
        print(f"| {name} | {len(data)} | {a:.3f} | {b:.3f} | {a / b:.1f} |")


if __name__ == "__main__":
    main()
