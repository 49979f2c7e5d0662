"""add_video: npsummary's NumPy GIF against tensorboardX + moviepy (or Pillow's GIF writer).

Run from the repository root:

    PYTHONPATH=src python3 benchmarks/bench_video.py [--repeat N]

Each case builds the whole ``Summary`` value of ``add_video`` from the same tensor: tensorboardX's
``summary.video`` (moviepy -> imageio -> Pillow, through a temporary file) when moviepy is
installed, else Pillow's GIF writer on the frames our grid gives. Both run alternately in one
process; the table shows median wall time, GIF size, ratios ours/theirs and each GIF's mean
absolute pixel error against the frames it encodes. Every GIF is decoded frame by frame with
Pillow outside the timed region; a case whose clip has at most 256 colours must decode exactly.
"""

from __future__ import annotations

import argparse
import io
import statistics
import time
from collections.abc import Callable

import numpy as np
from PIL import Image

from npsummary import proto
from npsummary._summaries.video import prepare_video, video_value


def sprites_clip(frames: int, size: int) -> np.ndarray:
    """A game-like clip: flat background, a few moving coloured squares (few colours)."""
    video = np.zeros((1, frames, 3, size, size), dtype=np.uint8)
    video[:, :, 2] = 40
    for t in range(frames):
        for k, colour in enumerate(([255, 0, 0], [0, 255, 0], [255, 255, 0])):
            y = (t * (k + 2) + 10 * k) % (size - 8)
            x = (t * (3 - k) + 20 * k) % (size - 8)
            video[0, t, :, y : y + 8, x : x + 8] = np.array(colour)[:, None, None]
    return video


def smooth_clip(frames: int, size: int) -> np.ndarray:
    """A moving smooth picture with thousands of colours per frame (floats in [0, 1])."""
    y, x = np.mgrid[0:size, 0:size] / size
    out = []
    for t in range(frames):
        phase = t / frames * 2 * np.pi
        r = 0.5 + 0.5 * np.sin(2 * np.pi * x + phase)
        g = 0.5 + 0.5 * np.cos(2 * np.pi * y * 2 - phase)
        b = (x + y) / 2
        out.append(np.stack([r, g, b]))
    return np.asarray(out, dtype=np.float32)[None]


def gray_batch(n: int, frames: int, size: int) -> np.ndarray:
    rng = np.random.default_rng(0)
    return rng.random((n, frames, 1, size, size)).astype(np.float32)


def decode(data: bytes) -> np.ndarray:
    frames = []
    with Image.open(io.BytesIO(data)) as image:
        for index in range(image.n_frames):
            image.seek(index)
            frames.append(np.asarray(image.convert("RGB")))
    return np.stack(frames)


def ours(video: np.ndarray) -> bytes:
    value = proto.SummaryValue.FromString(video_value("v", video, 4.0, lambda *a: None))
    return bytes(value.image.encoded_image_string)


def anchor() -> tuple[str, Callable[[np.ndarray], bytes]]:
    try:
        import moviepy  # noqa: F401
        from tensorboardX import summary
    except ImportError:

        def pillow(video: np.ndarray) -> bytes:
            frames = prepare_video(video, lambda count: None)
            if frames.shape[3] == 1:
                frames = np.repeat(frames, 3, axis=3)
            images = [Image.fromarray(f) for f in frames]
            buf = io.BytesIO()
            images[0].save(
                buf, "GIF", save_all=True, append_images=images[1:], duration=250, loop=0
            )
            return buf.getvalue()

        return "Pillow", pillow

    def tbx(video: np.ndarray) -> bytes:
        return bytes(summary.video("v", video, fps=4).value[0].image.encoded_image_string)

    return "tensorboardX+moviepy", tbx


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    name, theirs = anchor()
    cases = [
        ("sprites 1x16x64x64", sprites_clip(16, 64)),
        ("sprites 1x64x128x128", sprites_clip(64, 128)),
        ("smooth 1x16x64x64", smooth_clip(16, 64)),
        ("smooth 1x32x128x128", smooth_clip(32, 128)),
        ("gray 4x8x1x84x84", gray_batch(4, 8, 84)),
    ]
    print(f"anchor: {name}; median of {args.repeat} runs")
    header = (
        f"{'case':22} {'ours ms':>8} {'theirs ms':>9} {'time':>6} {'ours KB':>8} "
        f"{'theirs KB':>9} {'size':>6} {'err ours':>8} {'err theirs':>10}"
    )
    print(header)
    for label, video in cases:
        expected = prepare_video(video, lambda count: None)
        if expected.shape[3] == 1:
            expected = np.repeat(expected, 3, axis=3)
        times: dict[str, list[float]] = {"ours": [], "theirs": []}
        outputs: dict[str, bytes] = {}
        for _ in range(args.repeat):
            for key, encode in (("ours", ours), ("theirs", theirs)):
                start = time.perf_counter()
                outputs[key] = encode(video)
                times[key].append(time.perf_counter() - start)
        errors = {
            k: float(np.abs(decode(v).astype(int) - expected).mean()) for k, v in outputs.items()
        }
        colours = len(np.unique(expected.reshape(-1, 3), axis=0))
        if colours <= 256 and errors["ours"] != 0:
            raise AssertionError(f"{label}: {colours} colours but our GIF is not exact")
        t_ours, t_theirs = (statistics.median(times[k]) * 1e3 for k in ("ours", "theirs"))
        s_ours, s_theirs = (len(outputs[k]) / 1024 for k in ("ours", "theirs"))
        e_ours, e_theirs = errors["ours"], errors["theirs"]
        print(
            f"{label:22} {t_ours:8.1f} {t_theirs:9.1f} {t_ours / t_theirs:6.2f} {s_ours:8.1f} "
            f"{s_theirs:9.1f} {s_ours / s_theirs:6.2f} {e_ours:8.2f} {e_theirs:10.2f}"
        )


if __name__ == "__main__":
    main()
