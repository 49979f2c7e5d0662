"""Generate the histogram golden fixtures with real TensorFlow (run once, commit the .npz).

    /work/tfvenv/bin/python tests/golden/histogram/gen_histogram_golden.py

tf1_golden.npz: for each case NAME, ``NAME.x`` (the input; bfloat16 inputs are stored as their
uint16 bit patterns with a ``NAME.bf16`` marker) and the fields of the HistogramProto written by
TF1's C++ op (``tf.compat.v1.summary.histogram`` in eager returns the serialized Summary):
``NAME.stats`` = [min, max, num, sum, sum_squares], ``NAME.limit``, ``NAME.bucket``.

tf2_golden.npz: ``NAME.x`` and ``NAME.k{K}``: the [K, 3] buckets of TF2's v3 histogram op
(``tensorboard.plugins.histogram.summary_v2._buckets``, run by TF).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, cast

import numpy as np
import tensorflow as tf
from tensorboard.compat.proto import summary_pb2
from tensorboard.plugins.histogram import summary_v2

HERE = Path(__file__).resolve().parent
DBL_MAX = sys.float_info.max


def tf1_limits() -> np.ndarray:
    pos = []
    v = 1.0e-12
    while v < 1.0e20:
        pos.append(v)
        v *= 1.1
    return np.array([-DBL_MAX, *(-p for p in reversed(pos)), 0.0, *pos, DBL_MAX])


def tf1_cases() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(20240601)
    lim = tf1_limits()[1:-1]
    lim32 = lim.astype(np.float32)
    c: dict[str, np.ndarray] = {
        "ref1": np.array([0, 0.5, 1, 1, -2, 100, 1e-13, -0.0], np.float32),
        "empty_f32": np.zeros(0, np.float32),
        "empty_f64": np.zeros(0, np.float64),
        "constant": np.array([5.0, 5.0]),
        "single": np.array([3.7], np.float32),
        "single_neg": np.array([-123.456]),
        "normal_f32_20000": rng.standard_normal(20000).astype(np.float32),
        "normal_f64_5000": rng.standard_normal(5000),
        "normal_f32_2d": rng.standard_normal((37, 53)).astype(np.float32),
        "uniform_f32_3000": rng.uniform(-10, 10, 3000).astype(np.float32),
        "lognormal_f64_3000": rng.lognormal(0, 12, 3000) * rng.choice([-1, 1], 3000),
        "lognormal_f32_3000": (rng.lognormal(0, 8, 3000) * rng.choice([-1, 1], 3000)).astype(
            np.float32
        ),
        "scaled_1e10": rng.standard_normal(1000) * 1e10,
        "huge": np.array(
            [
                1e19,
                1e25,
                1e300,
                -1e300,
                9.9e19,
                9.920775621859783e19,
                1e20,
                -1e20,
                np.nextafter(DBL_MAX, 0),
                -DBL_MAX,
                3.0e38,
            ]
        ),
        "huge_f32": np.array([3.4e38, -3.4e38, 1e20, 9.92e19, 1e30], np.float32),
        "tiny": np.array(
            [1e-13, 5e-324, 1e-310, -1e-310, 1e-12, -1e-12, 2.2e-308, 9.99e-13, 1.0000001e-12]
        ),
        "tiny_f32": np.array([1e-45, -1e-45, 1e-38, 1e-12, -1e-12, 1e-13], np.float32),
        "negzero_only": np.array([-0.0]),
        "zero_negzero": np.array([0.0, -0.0]),
        "negzero_zero": np.array([-0.0, 0.0]),
        "pos_negzero_zero": np.array([1.0, -0.0, 0.0, 2.0]),
        "neg_zero_negzero": np.array([-1.0, 0.0, -0.0, -2.0]),
        "negzero_f32": np.array([-0.0, 3.0, 0.0], np.float32),
        "int8": rng.integers(-128, 128, 500, dtype=np.int8),
        "uint8": rng.integers(0, 256, 500, dtype=np.uint8),
        "int16": rng.integers(-30000, 30000, 500, dtype=np.int16),
        "int32": rng.integers(-(2**31), 2**31, 500, dtype=np.int32),
        "int64": np.concatenate(
            [rng.integers(-(2**62), 2**62, 300, dtype=np.int64), [2**53 + 1, -(2**63), 0]]
        ).astype(np.int64),
        "float16": np.concatenate(
            [
                rng.standard_normal(500).astype(np.float16),
                np.array([65504, -65504, 6e-8, -6e-8, 0, -0.0], np.float16),
            ]
        ),
        "on_limits_f64": lim,
        "on_limits_f64_next": np.concatenate(
            [np.nextafter(lim, np.inf), np.nextafter(lim, -np.inf)]
        ),
        "on_limits_f32": lim32,
        "on_limits_f32_next": np.concatenate(
            [np.nextafter(lim32, np.float32(np.inf)), np.nextafter(lim32, np.float32(-np.inf))]
        ),
        "subnormal_first": np.array([1e-310, 0.0, 5.0]),
        "zero_then_subnormal": np.array([0.0, 1e-310, -3.0]),
        "neg_subnormal_max": np.array([-5.0, -1e-310, -0.0]),
        "all_subnormal": np.array([1e-310, 2e-310, -4e-310]),
        "subnormal_f32": np.array([1e-45, 0.0, 2.0], np.float32),
        "neg_subnormal_f32": np.array([-1e-45, -7.0], np.float32),
        "cancel_sum": np.array([1e16, 1.0, -1e16, 3.0, 1e-3] * 7),
        "bf16": rng.standard_normal(400).astype(np.float32),
    }
    return c


def tf1_fields(x: np.ndarray, as_bf16: bool = False) -> tuple[np.ndarray, ...]:
    t = tf.constant(x)
    if as_bf16:
        t = tf.cast(t, tf.bfloat16)
    raw = tf.compat.v1.summary.histogram("h", t).numpy()
    h = summary_pb2.Summary.FromString(raw).value[0].histo
    stats = np.array([h.min, h.max, h.num, h.sum, h.sum_squares])
    return stats, np.array(h.bucket_limit, np.float64), np.array(h.bucket, np.float64)


def main() -> None:
    out: dict[str, np.ndarray] = {}
    for name, x in tf1_cases().items():
        bf16 = name == "bf16"
        stats, limit, bucket = tf1_fields(x, bf16)
        if bf16:
            bits = tf.bitcast(tf.cast(tf.constant(x), tf.bfloat16), tf.uint16).numpy()
            out[f"{name}.x"] = bits
            out[f"{name}.bf16"] = np.array(True)
        else:
            out[f"{name}.x"] = x
        out[f"{name}.stats"] = stats
        out[f"{name}.limit"] = limit
        out[f"{name}.bucket"] = bucket
    np.savez_compressed(HERE / "tf1_golden.npz", **cast(dict[str, Any], out))

    rng = np.random.default_rng(7)
    tf2: dict[str, tuple[np.ndarray, list[int]]] = {
        "normal_f32": (rng.standard_normal(5000).astype(np.float32), [30, 1, 7, 100]),
        "normal_f64": (rng.standard_normal(3000) * 1e3 + 5, [30, 13]),
        "ints": (np.arange(10), [5, 30, 1]),
        "int32_wide": (rng.integers(-(2**31), 2**31, 1000, dtype=np.int32), [30]),
        "empty": (np.zeros(0, np.float32), [30, 0]),
        "constant": (np.full(9, 2.5, np.float32), [30, 4]),
        "single": (np.array([-7.25]), [30]),
        "tiny_range": (np.array([1.0, np.nextafter(1.0, 2.0), 1.0 + 2**-51]), [30, 3]),
        "float16": (rng.standard_normal(700).astype(np.float16), [30]),
        "lognormal": (rng.lognormal(0, 6, 2000), [30, 50]),
    }
    out2: dict[str, np.ndarray] = {}
    for name, (x, ks) in tf2.items():
        out2[f"{name}.x"] = x
        for k in ks:
            got = summary_v2._buckets(tf.constant(x), bucket_count=k).numpy()
            out2[f"{name}.k{k}"] = np.asarray(got, np.float64)
    np.savez_compressed(HERE / "tf2_golden.npz", **cast(dict[str, Any], out2))
    print("wrote", HERE / "tf1_golden.npz", HERE / "tf2_golden.npz")


if __name__ == "__main__":
    main()
