"""The ``add_histogram`` calls whose buckets must equal tensorboardX's and torch's exactly.

Every ``bins`` form both libraries take (``'tensorflow'``, their default; each NumPy rule name; a
count; explicit edges), with and without ``max_bins``, on data built by integer arithmetic and
additions only (bit-identical everywhere): near-normal samples (the sum of four uniforms, like a
layer's weights), the same at float32 and at a small scale, uniform weights, integers, a
constant and data with zeros of both signs. ``gen_histogram_golden.py`` runs the calls with
tensorboardX's and torch's writers; ``test_histogram_golden.py`` with npsummary's.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from conformance.data import pseudo, pseudo32


def _near_normal(n: int, seed: int) -> np.ndarray:
    parts = [pseudo((n,), seed + k, 0.0, 1.0) for k in range(4)]
    result: np.ndarray = (parts[0] + parts[1] + parts[2] + parts[3] - 2.0) * 1.7
    return result


def datasets() -> dict[str, np.ndarray]:
    normal = _near_normal(5000, 101)
    return {
        "normal": normal,
        "normal32": normal.astype(np.float32),
        "layer_weights": (normal[:1200] * 0.05).astype(np.float32),
        "uniform": pseudo32((400,), 7, -3.0, 3.0),
        "ints": np.floor(pseudo((300,), 9, 0.0, 20.0)).astype(np.int64),
        "constant": np.full((10,), 2.5),
        "zeros": np.concatenate([normal[:100], np.zeros(40), -np.zeros(10)]),
    }


RULES = ("auto", "fd", "doane", "scott", "stone", "rice", "sturges", "sqrt")
BINS: dict[str, Any] = {
    "tensorflow": "tensorflow",
    **{rule: rule for rule in RULES},
    "count10": 10,
    "count1": 1,
    "edges": [-2.0, -1.0, 0.0, 0.5, 1.0, 3.0],
}
MAX_BINS: dict[str, int | None] = {"": None, "_max8": 8}


def calls() -> list[tuple[str, np.ndarray, Any, int | None]]:
    """(tag, values, bins, max_bins) of every call, in order."""
    out = []
    for data_name, values in datasets().items():
        for bins_name, bins in BINS.items():
            for suffix, max_bins in MAX_BINS.items():
                out.append((f"{data_name}/{bins_name}{suffix}", values, bins, max_bins))
    return out


def numpy_edges() -> dict[str, list[float]]:
    """tag -> ``np.histogram_bin_edges`` of the values, for every call whose ``bins`` is a NumPy
    rule name: the one input to the libraries' buckets that follows the installed NumPy (both
    call ``np.histogram(values.astype(float), bins=rule)``)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's "stone" note
        return {
            tag: np.histogram_bin_edges(values.astype(float), bins).tolist()
            for tag, values, bins, _ in calls()
            if bins in RULES
        }


def run(writer: Any) -> None:
    """Log every call through ``writer`` (tensorboardX's, torch's or npsummary's), step 0."""
    for tag, values, bins, max_bins in calls():
        writer.add_histogram(tag, values, 0, bins=bins, max_bins=max_bins)
    writer.flush()


def read_histograms(logdir: str) -> dict[str, dict[str, Any]]:
    """tag -> the HistogramProto's fields, read with TensorBoard's record reader and proto."""
    import os

    from tensorboard.backend.event_processing.event_file_loader import RawEventFileLoader
    from tensorboard.compat.proto.event_pb2 import Event

    out: dict[str, dict[str, Any]] = {}
    for name in sorted(os.listdir(logdir)):
        if "tfevents" not in name:
            continue
        for record in RawEventFileLoader(os.path.join(logdir, name)).Load():
            event = Event.FromString(record)
            for value in event.summary.value:
                if value.HasField("histo"):
                    h = value.histo
                    out[value.tag] = {
                        "min": h.min,
                        "max": h.max,
                        "num": h.num,
                        "sum": h.sum,
                        "sum_squares": h.sum_squares,
                        "bucket_limit": list(h.bucket_limit),
                        "bucket": list(h.bucket),
                    }
    return out
