"""Calls where tensorboardX and torch write different files: each npsummary flavour must write
its library's (issue 21, item 4). ``gen_flavour_golden.py`` runs them with both libraries;
``test_flavour_golden.py`` with ``npsummary.TensorboardXSummaryWriter`` and
``npsummary.SummaryWriter``.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from conformance.data import pseudo


def run(writer: Any) -> None:
    """Log through ``writer``; every call differs between the two libraries."""
    for step in range(2):
        writer.add_scalars("loss", {"train": 0.5 + step, "val": 0.25 * step}, step)
        writer.add_scalars("nested/main tag", {"a": 1.0 + step}, step)
    writer.add_scalar("acc (top-1)", 0.75, 0)  # tensorboardX: "acc__top-1_"
    writer.add_scalar("/leading/slash", 1.5, 0)  # tensorboardX: "leading/slash"
    writer.add_histogram("weights [layer 1]", pseudo((200,), 3), 0)
    writer.add_image("sample #1", pseudo((3, 4, 4), 4, 0.0, 1.0), 0)
    vertices = pseudo((1, 4, 3), 5).astype(np.float32)
    faces = np.array([[[0, 1, 2], [1, 2, 3]]], dtype=np.int32)
    writer.add_mesh("mesh", vertices, faces=faces, global_step=0)
    # Audio: torch truncates x * 32767, tensorboardX's soundfile keeps the top half of a 32-bit
    # sample: the float64 tone, float32 noise beyond [-1, 1] (clipped), values a hair from a
    # 16-bit step and tiny negatives (where a floor would give -1) tell them apart.
    tone = np.sin(2 * np.pi * 440 * np.arange(2205) / 22050)
    writer.add_audio("audio/tone", tone, 0, sample_rate=22050)
    writer.add_audio("audio/loud", pseudo((400,), 6, -1.5, 1.5).astype(np.float32), 0, 8000)
    steps = np.arange(-300, 300)
    near = np.concatenate(
        [(steps + 0.5) / 32767, (steps - 1e-6) / 32768, -(10.0 ** -np.arange(3, 15))]
    )
    writer.add_audio("audio/near steps", near, 0, sample_rate=8000)
    writer.add_hparams(
        {"lr": 0.1, "use_bn": True, "opt": "sgd"}, {"hp/metric": 0.5}, run_name="session"
    ) if _takes_run_name(writer) else writer.add_hparams(
        {"lr": 0.1, "use_bn": True, "opt": "sgd"}, {"hp/metric": 0.5}, name="session"
    )
    writer.flush()


def _takes_run_name(writer: Any) -> bool:
    import inspect

    return "run_name" in inspect.signature(writer.add_hparams).parameters


def read_logdir(logdir: str) -> dict[str, list[list[Any]]]:
    """run -> sorted [tag, kind, payload] of every value (scalars as float, hparams plugin data
    as its text format, images as their size, histograms as their num, audio as its fields and
    the SHA-256 of its WAV bytes)."""
    import hashlib

    from tensorboard.backend.event_processing.event_file_loader import RawEventFileLoader
    from tensorboard.compat.proto.event_pb2 import Event
    from tensorboard.plugins.hparams import plugin_data_pb2

    out: dict[str, list[list[Any]]] = {}
    for root, _, files in os.walk(logdir):
        for name in sorted(f for f in files if "tfevents" in f):
            run = os.path.relpath(root, logdir).replace(os.sep, "/")
            values = out.setdefault(run, [])
            for record in RawEventFileLoader(os.path.join(root, name)).Load():
                for value in Event.FromString(record).summary.value:
                    plugin = value.metadata.plugin_data.plugin_name
                    payload: Any
                    if plugin == "mesh":
                        from tensorboard.plugins.mesh import plugin_data_pb2 as mesh_pb2
                        from tensorboard.util import tensor_util

                        data = mesh_pb2.MeshPluginData.FromString(
                            value.metadata.plugin_data.content
                        )
                        array = tensor_util.make_ndarray(value.tensor)
                        kind, payload = "mesh", [str(data), str(array.dtype), array.tolist()]
                    elif plugin == "hparams":
                        data = plugin_data_pb2.HParamsPluginData.FromString(
                            value.metadata.plugin_data.content
                        )
                        if data.HasField("session_start_info"):
                            data.session_start_info.start_time_secs = 0
                        payload = str(data)
                        kind = "hparams"
                    elif value.HasField("simple_value"):
                        kind, payload = "scalar", float(np.float32(value.simple_value))
                    elif value.HasField("histo"):
                        kind, payload = "histogram", value.histo.num
                    elif value.HasField("image"):
                        kind, payload = "image", [value.image.height, value.image.width]
                    elif value.HasField("audio"):
                        a = value.audio
                        digest = hashlib.sha256(a.encoded_audio_string).hexdigest()
                        kind = "audio"
                        payload = [a.sample_rate, a.num_channels, a.length_frames, digest]
                    else:
                        kind, payload = value.WhichOneof("value") or "none", None
                    values.append([value.tag, kind, payload])
    return {run: sorted(values, key=repr) for run, values in out.items()}
