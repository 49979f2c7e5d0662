"""The screenshots of the documentation: what TensorBoard shows for each summary kind.

    apt-get install chromium                  # Debian's package; any Chromium or Chrome works
    pip install -e '.[test]'                  # tensorboard, Pillow
    python scripts/screenshots.py             # writes docs/_static/screenshots/*.png

It runs the Python blocks of docs/index.md (the ten lines) and of docs/guide/gallery.md (one
program per kind), exactly as written, in a temporary folder; starts TensorBoard on 127.0.0.1
(a free port) over each page's ``runs/``; captures each dashboard with headless Chromium; stops
TensorBoard by its PID; and crops and quantises each picture so that the committed PNGs stay
small. The docs build then needs no browser. Nothing is written outside the temporary folder
but the PNGs.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "_static" / "screenshots"
WINDOW = (1400, 900)
WIDTH = 1000  # the committed width, in pixels
COLOURS = 96  # palette size of the committed PNGs
FENCE = re.compile(r"^```python\n(.*?)^```$", re.M | re.S)


@dataclass(frozen=True)
class Shot:
    name: str  # the PNG's name
    dashboard: str  # TensorBoard's URL fragment
    plugin: str  # the plugin whose data must be loaded first
    logdir: str  # what TensorBoard shows, relative to where the page's blocks ran
    height: int = WINDOW[1]  # rows of the window kept (cropped at the bottom)
    width: int = WINDOW[0]  # of the window: wider fits more cards in a row


def _gallery(name: str, height: int, dashboard: str = "", run: str = "") -> Shot:
    """A shot of the gallery: TensorBoard over the one run its section writes."""
    board = dashboard or name
    return Shot(name, board, board, f"runs/gallery/{run or name}", height)


#: page -> the shots of what its blocks write
PAGES = {
    "docs/index.md": [Shot("quickstart", "timeseries", "scalars", "runs", 780, 1750)],
    "docs/guide/gallery.md": [
        _gallery("scalars", 560),
        _gallery("histograms", 460),
        _gallery("distributions", 460, run="histograms"),
        _gallery("images", 560),
        _gallery("text", 420),
        _gallery("audio", 420),
        _gallery("pr_curves", 560),
        _gallery("custom_scalars", 460),
        _gallery("hparams", 420),
        _gallery("projector", 800),
        _gallery("mesh", 900),
    ],
}


def run_page(page: Path, workdir: Path) -> None:
    """The page's Python blocks, in order, as one program run in ``workdir``."""
    code = "\n".join(FENCE.findall(page.read_text(encoding="utf-8")))
    script = workdir / "page.py"
    script.write_text(code, encoding="utf-8")
    subprocess.run([sys.executable, script.name], cwd=workdir, check=True)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _get(url: str) -> object:
    with urllib.request.urlopen(url, timeout=5) as response:
        return json.load(response)


class TensorBoard:
    """``tensorboard --logdir`` on 127.0.0.1, started and stopped by its PID."""

    def __init__(self, cwd: Path, logdir: str, log: Path) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log.open("w")
        # Run where the page's blocks ran, so that it shows the logdir as the reader types it.
        argv = [sys.executable, "-m", "tensorboard.main", "--logdir", logdir]
        argv += ["--host", "127.0.0.1", "--port", str(self.port), "--reload_interval", "1"]
        self.process = subprocess.Popen(
            argv, cwd=cwd, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True
        )

    def wait_for(self, plugins: set[str], timeout: float = 120.0) -> None:
        """Until every plugin in ``plugins`` is active (its data loaded)."""
        deadline = time.monotonic() + timeout
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"tensorboard exited {self.process.returncode}; see {self.log.name}"
                )
            try:
                listing = _get(f"{self.url}/data/plugins_listing")
                assert isinstance(listing, dict)
                if all(listing.get(p, {}).get("enabled") for p in plugins):
                    return
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"tensorboard at {self.url} did not load {sorted(plugins)}")
            time.sleep(0.5)

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self.log.close()


def chromium_screenshot(chromium: str, url: str, png: Path, profile: Path, width: int) -> None:
    """Headless Chromium's picture of ``url`` after TensorBoard's scripts have run."""
    argv = [
        chromium,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--hide-scrollbars",
        "--force-device-scale-factor=1",
        f"--user-data-dir={profile}",
        f"--window-size={width},{WINDOW[1]}",
        "--virtual-time-budget=30000",
        f"--screenshot={png}",
        url,
    ]
    subprocess.run(argv, check=True, capture_output=True, timeout=300)
    if not png.exists():
        raise RuntimeError(f"chromium wrote no {png} for {url}")


def small_png(raw: Path, out: Path, height: int) -> int:
    """Crop to ``height`` rows, scale to ``WIDTH`` and quantise; returns the bytes written."""
    from PIL import Image

    with Image.open(raw) as image:
        picture = image.convert("RGB").crop((0, 0, image.width, min(height, image.height)))
    scale = WIDTH / picture.width
    picture = picture.resize((WIDTH, round(picture.height * scale)), Image.Resampling.LANCZOS)
    picture = picture.quantize(COLOURS, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    buffer = io.BytesIO()
    picture.save(buffer, format="PNG", optimize=True)
    out.write_bytes(buffer.getvalue())
    return len(buffer.getvalue())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT, help="where the PNGs go")
    parser.add_argument("--chromium", default=shutil.which("chromium") or "chromium")
    parser.add_argument("--only", nargs="*", help="names of the shots to make (default: all)")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    total = 0
    with tempfile.TemporaryDirectory(prefix="npsummary-screenshots-") as tmp:
        for page, shots in PAGES.items():
            shots = [s for s in shots if not args.only or s.name in args.only]
            if not shots:
                continue
            workdir = Path(tmp) / Path(page).stem
            workdir.mkdir()
            run_page(ROOT / page, workdir)
            for shot in shots:
                board = TensorBoard(workdir, shot.logdir, Path(tmp) / f"{shot.name}-tb.log")
                try:
                    board.wait_for({shot.plugin})
                    raw = Path(tmp) / f"{shot.name}-raw.png"
                    url = f"{board.url}/#{shot.dashboard}"
                    chromium_screenshot(
                        args.chromium, url, raw, Path(tmp) / f"profile-{shot.name}", shot.width
                    )
                finally:
                    board.stop()
                size = small_png(raw, args.out / f"{shot.name}.png", shot.height)
                total += size
                print(f"{shot.name}.png  {size / 1000:.0f} kB  ({url})")
    print(f"total {total / 1000:.0f} kB in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
