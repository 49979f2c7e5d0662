"""Regenerate the plugin golden files with the anchors (run once; the output is committed).

    pip install tensorboardX moviepy torch==2.13.0
    python tests/conformance/gen_plugins_golden.py

Runs every section of ``plugins_program.py`` with its anchor's ``SummaryWriter``
(``plugins_program.ANCHORS``: tensorboardX 2.6 or ``torch.utils.tensorboard``) in a fresh logdir
and copies the whole tree to ``golden/plugins/<section>/``: each run's event file is renamed
``events.out.tfevents.golden`` and the projector's files are kept as written.
``golden/plugins/versions.json`` records the anchors' versions.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(HERE, "golden", "plugins")
GOLDEN_NAME = "events.out.tfevents.golden"

sys.path.insert(0, os.path.dirname(HERE))

from conformance import plugins_program  # noqa: E402


def _writer(anchor: str, logdir: str) -> tuple[Any, Any]:
    if anchor == "torch":
        import torch
        from torch.utils.tensorboard import SummaryWriter

        return SummaryWriter(log_dir=logdir), torch.from_numpy
    from tensorboardX import SummaryWriter as TbxWriter

    return TbxWriter(logdir=logdir), lambda array: array


def _copy(tmp: str, target: str) -> None:
    shutil.rmtree(target, ignore_errors=True)
    for root, _, files in os.walk(tmp):
        events = [name for name in files if "tfevents" in name]
        if len(events) > 1:
            raise RuntimeError(f"{root}: expected one event file, got {events}")
        destination = os.path.join(target, os.path.relpath(root, tmp))
        os.makedirs(destination, exist_ok=True)
        for name in files:
            out = GOLDEN_NAME if "tfevents" in name else name
            shutil.copyfile(os.path.join(root, name), os.path.join(destination, out))


def main() -> None:
    from importlib.metadata import version

    for section, program in plugins_program.SECTIONS.items():
        anchor = plugins_program.ANCHORS[section]
        with tempfile.TemporaryDirectory() as tmp:
            writer, tensor = _writer(anchor, tmp)
            program(writer, tensor)
            writer.close()
            _copy(tmp, os.path.join(GOLDEN, section))
        print(f"{section}: {anchor}")
    versions = {name: version(name) for name in ("tensorboardX", "torch", "moviepy", "Pillow")}
    with open(os.path.join(GOLDEN, "versions.json"), "w") as f:
        json.dump(versions, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
