"""Deterministic inputs for the conformance programs.

Built from integer arithmetic and one division, so every NumPy version on every platform gives
bit-identical arrays (the golden files were written by TensorFlow from these same arrays).
"""

from __future__ import annotations

import numpy as np


def pseudo(shape: tuple[int, ...], seed: int, low: float = -1.0, high: float = 1.0) -> np.ndarray:
    """float64 values spread over [low, high) from a 31-bit linear congruential generator."""
    n = int(np.prod(shape))
    state = (seed * 2654435761 + 12345) % (1 << 31)
    out = np.empty(n, dtype=np.int64)
    for i in range(n):
        state = (state * 1103515245 + 12345) % (1 << 31)
        out[i] = state >> 8
    unit = out / float(1 << 23)
    return (low + (high - low) * unit).reshape(shape)


def pseudo32(shape: tuple[int, ...], seed: int, low: float = -1.0, high: float = 1.0) -> np.ndarray:
    return pseudo(shape, seed, low, high).astype(np.float32)
