"""PNG encoding: npsummary's encode_png against Pillow as tensorboardX's add_image uses it.

Run from the repository root:

    PYTHONPATH=src python3 benchmarks/bench_png.py [--repeat N] [--level L] [--seed S] [--more]

For each RGB image (64², 256², 1024²; uniform noise and a smooth gradient/sinusoid picture), then
issue 29's gradient and ten smooth pictures nobody tuned for (linear ramps at a random angle,
radial rings, ramps with small noise; gray, RGB and RGBA; 64² to 512²; drawn from ``--seed``),
both encoders run alternately in the same process; the table shows median wall time, file size
and the ratios ours/Pillow. Every encoded file is decoded with Pillow (and ours also with
npsummary's own decoder) and compared with the input (outside the timed region) so a fast but
wrong encoder cannot win. ``--more`` adds other kinds of pictures: a photo (matplotlib's sample
image), a line plot, gray and RGBA images, a tiled noise texture, and the extremely compressible
ramp and checkerboard.
"""

from __future__ import annotations

import argparse
import io
import statistics
import time
from collections.abc import Callable

import numpy as np
from PIL import Image

from npsummary._format.png import encode_png
from npsummary._format.pngread import decode_png


def noise_image(n: int) -> np.ndarray:
    return np.random.default_rng(n).integers(0, 256, (n, n, 3), dtype=np.uint8)


def smooth_image(n: int) -> np.ndarray:
    y, x = np.mgrid[0:n, 0:n].astype(np.float64) / n
    r = 255 * x
    g = 127.5 + 127.5 * np.sin(2 * np.pi * 3 * y) * np.cos(2 * np.pi * 2 * x)
    b = 255 * (0.5 + 0.5 * np.sin(2 * np.pi * (x * x + y * y) * 2))
    return np.rint(np.stack([r, g, b], -1)).astype(np.uint8)


def issue_gradient(n: int = 256) -> np.ndarray:
    """The three-channel gradient of issue 29: r = x*255/n, g = y*255/n, b = (x+y)*127/n."""
    y, x = np.mgrid[0:n, 0:n]
    return np.stack([x * 255 // n, y * 255 // n, (x + y) * 127 // n], -1).astype(np.uint8)


def gradient_image(kind: str, height: int, width: int, channels: int, seed: int) -> np.ndarray:
    """A smooth picture nobody tuned the encoder for, drawn from ``seed`` (direction, scale,
    centre and offset of every channel): ``linear`` ramps at a random angle, ``radial`` rings
    round a random centre, ``noisy`` a linear ramp plus integer noise in -2..2. Values are
    clipped to 0..255 and truncated to uint8 as ``float.astype(np.uint8)`` does; one channel
    gives ``[H, W]``."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:height, 0:width].astype(np.float64)
    planes = []
    for _ in range(channels):
        if kind == "radial":
            cy, cx = rng.uniform(0, height), rng.uniform(0, width)
            radius = np.hypot(y - cy, x - cx)
            plane = rng.uniform(0, 64) + radius * 255 / np.hypot(height, width) * rng.uniform(1, 2)
        else:
            angle = rng.uniform(0, 2 * np.pi)
            along = (x * np.cos(angle) + y * np.sin(angle)) / max(height, width)
            plane = 127.5 + along * rng.uniform(100, 255)
        planes.append(plane)
    image = np.stack(planes, -1)
    if kind == "noisy":
        image += rng.integers(-2, 3, image.shape)
    image = np.clip(image, 0, 255).astype(np.uint8)
    return image[:, :, 0] if channels == 1 else image  # gray as [H, W], as Pillow takes it


GRADIENTS = (
    ("linear", 64, 64, 1),
    ("linear", 64, 64, 3),
    ("radial", 200, 300, 4),
    ("linear", 200, 300, 3),
    ("noisy", 256, 256, 3),
    ("radial", 256, 256, 1),
    ("linear", 512, 512, 3),
    ("radial", 512, 512, 3),
    ("noisy", 512, 512, 4),
    ("linear", 512, 512, 1),
)


def gradient_images(seed: int) -> list[tuple[str, np.ndarray]]:
    """The issue's gradient and the ``GRADIENTS`` cases drawn from ``seed``."""
    cases = [("issue grad 256", issue_gradient())]
    for i, (kind, height, width, channels) in enumerate(GRADIENTS):
        name = f"{kind} {width}x{height}x{channels}"
        cases.append((name, gradient_image(kind, height, width, channels, seed * 100 + i)))
    return cases


def more_images() -> list[tuple[str, np.ndarray]]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.cbook as cbook
    import matplotlib.pyplot as plt

    with Image.open(cbook.get_sample_data("grace_hopper.jpg")) as im:
        photo = np.asarray(im.convert("RGB"))
    fig, ax = plt.subplots(figsize=(6.4, 4.8), dpi=100)
    x = np.linspace(0, 10, 500)
    ax.plot(x, np.sin(x), x, np.cos(x))
    ax.set_title("loss")
    fig.canvas.draw()
    plot = np.asarray(fig.canvas.buffer_rgba()).copy()  # type: ignore[attr-defined]
    plt.close(fig)
    rng = np.random.default_rng(0)
    ramp = np.broadcast_to(np.linspace(0, 255, 512).astype(np.uint8)[None, :, None], (512, 512, 3))
    cells = (np.add.outer(np.arange(512) // 8, np.arange(512) // 8) % 2 * 255).astype(np.uint8)
    return [
        ("photo 600x512", photo),
        ("gray photo", photo.mean(axis=2).astype(np.uint8)),
        ("plot RGBA", plot),
        ("plot RGB", np.ascontiguousarray(plot[:, :, :3])),
        ("tiled noise", np.tile(rng.integers(0, 256, (64, 64, 3), dtype=np.uint8), (8, 8, 1))),
        ("smooth 512", smooth_image(512)),
        ("ramp 512", np.ascontiguousarray(ramp)),
        ("checker 512", np.repeat(cells[:, :, None], 3, axis=2)),
    ]


def pillow_png(image: np.ndarray) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(image).save(buf, format="PNG")
    return buf.getvalue()


def decode(data: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(data)))


def measure(
    encoders: dict[str, Callable[[np.ndarray], bytes]], image: np.ndarray, repeat: int
) -> dict[str, tuple[float, int]]:
    times: dict[str, list[float]] = {name: [] for name in encoders}
    sizes: dict[str, int] = {}
    for _ in range(repeat):
        for name, encode in encoders.items():
            t0 = time.perf_counter()
            data = encode(image)
            times[name].append(time.perf_counter() - t0)
            if not np.array_equal(decode(data), image):
                raise AssertionError(f"{name}: decoded pixels differ for shape {image.shape}")
            ours = name == "pillow" or np.array_equal(decode_png(data).reshape(image.shape), image)
            if not ours:
                raise AssertionError(f"{name}: npsummary's decoder differs for {image.shape}")
            sizes[name] = len(data)
    return {name: (statistics.median(times[name]), sizes[name]) for name in encoders}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=0, help="runs per case (default: by size)")
    parser.add_argument("--level", type=int, default=None, help="force a zlib level for ours")
    parser.add_argument("--seed", type=int, default=0, help="draws the gradient pictures")
    parser.add_argument("--more", action="store_true", help="also photo, plot, ramp, ...")
    args = parser.parse_args()

    def ours(image: np.ndarray) -> bytes:
        return encode_png(image, compress_level=args.level)

    encoders = {"npsummary": ours, "pillow": pillow_png}
    print(f"numpy {np.__version__}, Pillow {Image.__version__}")
    header = (
        f"| {'image':<22} | {'ours ms':>8} | {'Pillow ms':>9} | {'time ratio':>10} "
        f"| {'ours bytes':>10} | {'Pillow bytes':>12} | {'size ratio':>10} |"
    )
    print(header)
    print("|" + "|".join("-" * (len(c)) for c in header.split("|")[1:-1]) + "|")
    cases: list[tuple[str, np.ndarray, int]] = []
    for n in (64, 256, 1024):
        repeat = args.repeat or {64: 301, 256: 61, 1024: 15}[n]
        cases.append((f"noise {n}x{n}", noise_image(n), repeat))
        cases.append((f"smooth {n}x{n}", smooth_image(n), repeat))
    for name, image in gradient_images(args.seed):
        # Small pictures take a fraction of a millisecond: as many runs as the 64² ones.
        repeat = args.repeat or (
            301 if image.size <= 3 * 64**2 else 61 if image.size <= 2**18 else 21
        )
        cases.append((name, image, repeat))
    if args.more:
        cases += [(name, image, args.repeat or 21) for name, image in more_images()]
    for name, image, repeat in cases:
        measure(encoders, image, 2)  # warm-up
        res = measure(encoders, image, repeat)
        (t_ours, b_ours), (t_pil, b_pil) = res["npsummary"], res["pillow"]
        print(
            f"| {name:<22} | {t_ours * 1e3:8.2f} | {t_pil * 1e3:9.2f} | {t_ours / t_pil:10.2f} "
            f"| {b_ours:10d} | {b_pil:12d} | {b_ours / b_pil:10.3f} |"
        )


if __name__ == "__main__":
    main()
