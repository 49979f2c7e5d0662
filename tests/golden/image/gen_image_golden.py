"""Generate the image-conversion golden fixtures with real TensorFlow (run once, commit outputs).

    /work/tfvenv/bin/python tests/golden/image/gen_image_golden.py

Writes, next to this script:
  tf2_convert.npz  tf.image.convert_image_dtype(x, tf.uint8, saturate=True), the conversion
                   tf.summary.image applies, for every dtype TF accepts: keys "<dtype>_in" and
                   "<dtype>_out". float16, int8, uint8, int16 and uint16 are exhaustive; float32,
                   float64, int32 and int64 hold edge values and random samples.
  tf1_image.npz    tf.compat.v1.summary.image (the ImageSummary kernel, NormalizeFloatImage) run
                   in a graph session; each case's PNGs decoded with tf.io.decode_png: keys
                   "<case>_in", "<case>_out" and "<case>_bad" (the bad_color given to the op).
  versions.txt     TF and NumPy versions used.

The test suite never imports TensorFlow; it compares npsummary against these arrays.
"""

from __future__ import annotations

import os
from typing import Any, cast

import numpy as np
import tensorflow as tf
from tensorflow.core.framework import summary_pb2
from tensorflow.python.ops import gen_logging_ops

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(20240601)


def float_edges(dt: type[np.floating[Any]]) -> np.ndarray:
    """Values at and around every k/255.5 boundary, specials, and a random spread."""
    finfo = np.finfo(dt)
    base = (np.arange(-2, 260, dtype=np.float64) / 255.5).astype(dt)
    near = [base]
    for _ in range(3):
        near.append(np.nextafter(near[-1], dt(np.inf)))
    low = [base]
    for _ in range(3):
        low.append(np.nextafter(low[-1], dt(-np.inf)))
    specials = np.array(
        [
            0.0,
            -0.0,
            finfo.tiny,
            -finfo.tiny,
            finfo.smallest_subnormal,
            0.5,
            1.0,
            1.5,
            -0.2,
            0.001,
            0.998,
            0.999,
            2.0,
            255.0,
            1e4,
            -1e4,
            finfo.max,
            -finfo.max,
            np.inf,
            -np.inf,
            np.nan,
            -np.nan,
        ],
        dtype=dt,
    )
    uniform = rng.uniform(-0.25, 1.25, 8000).astype(dt)
    widths: dict[type[np.floating[Any]], type[np.unsignedinteger[Any]]]
    widths = {np.float32: np.uint32, np.float64: np.uint64}
    nbits = widths[dt]
    bits = rng.integers(0, np.iinfo(nbits).max, 4000, dtype=nbits, endpoint=True).view(dt)
    return np.concatenate(near + low + [specials, uniform, bits])


def int_edges(dt: type[np.signedinteger[Any]]) -> np.ndarray:
    info = np.iinfo(dt)
    vals = {0, 1, -1, info.min, info.max, info.min + 1, info.max - 1}
    for k in range(info.bits):
        for d in (-1, 0, 1):
            vals.update({2**k + d, -(2**k) + d})
    shift = info.bits - 9  # TF scales by 2**shift for int32/int64
    for m in range(-2, 258):
        for d in (-1, 0, 1):
            vals.add(m * 2**shift + d)
    arr = np.array(sorted(v for v in vals if info.min <= v <= info.max), dtype=dt)
    rand = rng.integers(info.min, info.max, 8000, dtype=dt, endpoint=True)
    return np.concatenate([arr, rand])


def tf2_convert() -> dict[str, np.ndarray]:
    inputs = {
        "float16": np.arange(2**16, dtype=np.uint16).view(np.float16),
        "float32": float_edges(np.float32),
        "float64": float_edges(np.float64),
        "uint8": np.arange(256, dtype=np.uint8),
        "int8": np.arange(-128, 128, dtype=np.int8),
        "int16": np.arange(-(2**15), 2**15, dtype=np.int16),
        "uint16": np.arange(2**16, dtype=np.uint16),
        "int32": int_edges(np.int32),
        "int64": int_edges(np.int64),
    }
    out = {}
    for name, x in inputs.items():
        y = tf.image.convert_image_dtype(x, tf.uint8, saturate=True).numpy()
        assert y.dtype == np.uint8 and y.shape == x.shape
        out[f"{name}_in"] = x
        out[f"{name}_out"] = y
    return out


def tf1_cases() -> dict[str, tuple[np.ndarray, np.ndarray | None]]:
    cases: dict[str, tuple[np.ndarray, np.ndarray | None]] = {}
    r = rng
    cases["f32_signed_rgb"] = (r.normal(size=(3, 9, 11, 3)).astype(np.float32), None)
    cases["f32_positive_gray"] = ((r.random((2, 8, 13, 1)) * 10).astype(np.float32), None)
    x: np.ndarray = r.random((1, 64, 64, 3)).astype(np.float32)
    x.flat[0] = 1.0
    x[0, 1, :, 0] = np.arange(64, dtype=np.float32) / 255  # k/255 * 255 lands on or near k
    cases["f32_unit_max1"] = (x, None)
    x = (r.random((2, 32, 48, 4)) * 2 - 0.7).astype(np.float32)
    cases["f32_signed_rgba"] = (x, None)
    x = r.normal(size=(2, 6, 7, 3)).astype(np.float32)
    x[0, 0, 0, 0] = np.nan
    x[0, 1, 2, 1] = np.inf
    x[0, 2, 3, 2] = -np.inf
    x[1, 3, 3] = np.nan
    x[1, 4, 4, 0] = 1e30  # finite but large: sets the max
    cases["f32_nonfinite_rgb"] = (x, None)
    x = r.random((1, 5, 6, 4)).astype(np.float32)
    x[0, 0, :, 3] = np.nan
    cases["f32_nonfinite_rgba"] = (x, None)
    x = r.random((1, 5, 6, 1)).astype(np.float32)
    x[0, ::2, ::2, 0] = np.inf
    cases["f32_nonfinite_gray"] = (x, None)
    cases["f32_all_nan"] = (np.full((1, 3, 4, 3), np.nan, np.float32), None)
    cases["f32_zero"] = (np.zeros((1, 4, 5, 1), np.float32), None)
    cases["f32_tiny_positive"] = ((r.random((1, 4, 5, 3)) * 5e-7).astype(np.float32), None)
    cases["f32_tiny_signed"] = (((r.random((1, 4, 5, 3)) - 0.5) * 1e-6).astype(np.float32), None)
    x = np.full((1, 2, 3, 1), 1e-6, np.float32)
    x[0, 0, 0, 0] = 0
    cases["f32_threshold"] = (x, None)
    x = np.full((1, 2, 3, 1), -1e-6, np.float32)
    x[0, 0, 0, 0] = 5e-7
    cases["f32_threshold_signed"] = (x, None)
    cases["f16_signed"] = (r.normal(size=(2, 10, 12, 3)).astype(np.float16), None)
    cases["f16_positive"] = ((r.random((2, 10, 12, 1)) * 3).astype(np.float16), None)
    x = (r.random((1, 16, 16, 4)) * 100).astype(np.float16)
    x[0, 0, 0] = np.nan
    x[0, 1, 1, 2] = np.inf
    cases["f16_nonfinite_rgba"] = (x, None)
    cases["f64_signed"] = (r.normal(size=(2, 10, 12, 3)) * 1e3, None)
    cases["f64_positive"] = (r.random((1, 20, 30, 1)) * 1e-3, None)
    x = r.random((1, 4, 6, 3))
    x[0, 0, 0, 0] = 1e300  # finite in float64, inf once TF casts min/max to float
    cases["f64_huge_positive"] = (x, None)
    x = r.normal(size=(1, 4, 6, 3))
    x[0, 0, 0, 0] = -1e300
    cases["f64_huge_negative"] = (x, None)
    x = r.random((1, 8, 9, 3))
    x[0, 0, 0, 1] = np.nan
    cases["f64_nan"] = (x, None)
    cases["u8_rgb"] = (r.integers(0, 256, (2, 7, 5, 3), dtype=np.uint8), None)
    cases["u8_gray"] = (r.integers(0, 256, (1, 7, 5, 1), dtype=np.uint8), None)
    x = r.normal(size=(1, 5, 5, 3)).astype(np.float32)
    x[0, 1, 1, 1] = np.nan
    cases["f32_bad_color_custom"] = (x, np.array([10, 200, 30, 40], np.uint8))
    x = r.normal(size=(1, 5, 5, 1)).astype(np.float32)
    x[0, 2, 2, 0] = -np.inf
    cases["f32_bad_color_gray"] = (x, np.array([77, 1, 2], np.uint8))
    return cases


def run_tf1(x: np.ndarray, bad: np.ndarray | None) -> np.ndarray:
    graph = tf.Graph()
    with graph.as_default():
        ph = tf.compat.v1.placeholder(tf.as_dtype(x.dtype), shape=x.shape)
        if bad is None:
            op = tf.compat.v1.summary.image("img", ph, max_outputs=x.shape[0])
        else:
            op = gen_logging_ops.image_summary(
                tag="img",
                tensor=ph,
                max_images=x.shape[0],
                bad_color=tf.make_tensor_proto(bad),
            )
        with tf.compat.v1.Session(graph=graph) as sess:
            blob = sess.run(op, {ph: x})
    summary = summary_pb2.Summary.FromString(blob)
    assert len(summary.value) == x.shape[0]
    images = []
    for value in summary.value:
        img = value.image
        assert (img.height, img.width, img.colorspace) == x.shape[1:]
        images.append(tf.io.decode_png(img.encoded_image_string, channels=0).numpy())
    return np.stack(images)


def main() -> None:
    conv = tf2_convert()
    np.savez_compressed(os.path.join(HERE, "tf2_convert.npz"), **cast(dict[str, Any], conv))
    tf1: dict[str, np.ndarray] = {}
    for name, (x, bad) in tf1_cases().items():
        tf1[f"{name}_in"] = x
        tf1[f"{name}_out"] = run_tf1(x, bad)
        tf1[f"{name}_bad"] = np.array([255, 0, 0, 255], np.uint8) if bad is None else bad
    np.savez_compressed(os.path.join(HERE, "tf1_image.npz"), **cast(dict[str, Any], tf1))
    with open(os.path.join(HERE, "versions.txt"), "w") as f:
        f.write(f"tensorflow {tf.__version__}\nnumpy {np.__version__}\n")


if __name__ == "__main__":
    main()
