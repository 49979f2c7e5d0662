"""Regenerate the tensorboardX golden run (run once; the output is committed).

    pip install tensorboardX==2.6.5 soundfile Pillow
    python tests/conformance/gen_tbx_golden.py

Runs ``tbx_program.run`` with ``tensorboardX.SummaryWriter`` and copies the main run and its
``add_scalars`` sub-runs to ``golden/tbx/`` with fixed event-file names. tensorboardX needs
``soundfile`` for ``add_audio`` and Pillow for images; the test suite imports neither library.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TARGET = os.path.join(HERE, "golden", "tbx")
GOLDEN_NAME = "events.out.tfevents.golden"

sys.path.insert(0, os.path.dirname(HERE))

import tensorboardX  # noqa: E402

from conformance import tbx_program  # noqa: E402


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        writer = tensorboardX.SummaryWriter(tmp, flush_secs=1)
        tbx_program.run(writer)
        writer.close()
        shutil.rmtree(TARGET, ignore_errors=True)
        for root, _, files in os.walk(tmp):
            events = [name for name in files if "tfevents" in name]
            if not events:
                continue
            if len(events) != 1:
                raise RuntimeError(f"{root}: expected one event file, got {events}")
            run = os.path.relpath(root, tmp)
            os.makedirs(os.path.join(TARGET, run), exist_ok=True)
            shutil.copyfile(os.path.join(root, events[0]), os.path.join(TARGET, run, GOLDEN_NAME))
            print(f"{run}: {events[0]}")
    with open(os.path.join(TARGET, "versions.json"), "w") as f:
        json.dump({"tensorboardX": tensorboardX.__version__}, f)
        f.write("\n")


if __name__ == "__main__":
    main()
