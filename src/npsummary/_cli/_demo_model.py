"""The demo's model: a two-layer NumPy network that learns to separate three spirals."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["Net", "spirals"]

CLASS_COLOURS = np.array([[230, 80, 60], [60, 160, 80], [70, 110, 220]], np.uint8)


def spirals(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``n`` points per class on three interleaved noisy spirals: ``(x [3n, 2], labels [3n])``."""
    r = np.tile(np.linspace(0.05, 1.0, n), 3)
    labels = np.repeat(np.arange(3), n)
    theta = labels * (2 * np.pi / 3) + r * 4.0 + rng.normal(0, 0.2, 3 * n)
    x = np.column_stack([r * np.sin(theta), r * np.cos(theta)])
    return x.astype(np.float64), labels


@dataclass
class Net:
    """``softmax(relu(x @ w1 + b1) @ w2 + b2)`` trained by SGD with momentum."""

    hidden: int
    rng: np.random.Generator
    params: dict[str, np.ndarray] = field(default_factory=dict)
    grads: dict[str, np.ndarray] = field(default_factory=dict)
    _velocity: dict[str, np.ndarray] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.params = {
            "w1": self.rng.normal(0, 1.0, (2, self.hidden)),
            "b1": np.zeros(self.hidden),
            "w2": self.rng.normal(0, 1.0 / np.sqrt(self.hidden), (self.hidden, 3)),
            "b2": np.zeros(3),
        }
        self._velocity = {k: np.zeros_like(v) for k, v in self.params.items()}

    def forward(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Hidden activations and class probabilities."""
        p = self.params
        h = np.maximum(x @ p["w1"] + p["b1"], 0)
        logits = h @ p["w2"] + p["b2"]
        e = np.exp(logits - logits.max(axis=1, keepdims=True))
        return h, e / e.sum(axis=1, keepdims=True)

    def step(self, x: np.ndarray, y: np.ndarray, lr: float) -> tuple[float, float]:
        """One SGD step on the batch; returns (loss, accuracy) before the update."""
        h, probs = self.forward(x)
        n = len(y)
        loss = float(-np.log(probs[np.arange(n), y] + 1e-12).mean())
        acc = float((probs.argmax(axis=1) == y).mean())
        d = probs.copy()
        d[np.arange(n), y] -= 1
        d /= n
        p = self.params
        dh = (d @ p["w2"].T) * (h > 0)
        self.grads = {"w2": h.T @ d, "b2": d.sum(0), "w1": x.T @ dh, "b1": dh.sum(0)}
        for k, g in self.grads.items():
            self._velocity[k] = 0.9 * self._velocity[k] - lr * g
            p[k] += self._velocity[k]
        return loss, acc

    def probability_maps(self, size: int = 48) -> np.ndarray:
        """Each class's probability over the plane: ``[3, size, size, 1]`` floats in [0, 1]."""
        grid = np.linspace(-1.1, 1.1, size)
        gx, gy = np.meshgrid(grid, grid[::-1])
        _, probs = self.forward(np.column_stack([gx.ravel(), gy.ravel()]))
        maps: np.ndarray = probs.T.reshape(3, size, size, 1)
        return maps

    def boundary_image(self, x: np.ndarray, y: np.ndarray, size: int = 96) -> np.ndarray:
        """An RGB picture ``[size, size, 3]`` of the decision regions with the points on it."""
        grid = np.linspace(-1.1, 1.1, size)
        gx, gy = np.meshgrid(grid, grid[::-1])
        _, probs = self.forward(np.column_stack([gx.ravel(), gy.ravel()]))
        shade = (CLASS_COLOURS[probs.argmax(1)] * (0.35 + 0.4 * probs.max(1))[:, None]).astype(
            np.uint8
        )
        image: np.ndarray = shade.reshape(size, size, 3)
        cols = np.clip(((x[:, 0] + 1.1) / 2.2 * (size - 1)).round().astype(int), 0, size - 1)
        rows = np.clip(((1.1 - x[:, 1]) / 2.2 * (size - 1)).round().astype(int), 0, size - 1)
        image[rows, cols] = CLASS_COLOURS[y]
        return image
