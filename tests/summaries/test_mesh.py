"""add_mesh: torch's tensors and metadata, and clear errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from npsummary import MemorySink, SummaryWriter
from npsummary._summaries.mesh import mesh_summary

pytestmark = pytest.mark.torch

RNG = np.random.default_rng(5)
VERTICES = RNG.standard_normal((2, 5, 3))
COLORS = RNG.integers(0, 256, (2, 5, 3)).astype(np.uint8)
FACES = np.array([[[0, 1, 2], [2, 3, 4]]] * 2)


@pytest.mark.parametrize(
    ("colors", "faces", "config"),
    [(COLORS, FACES, {"camera": {"fov": 75}}), (None, None, None), (COLORS, None, None)],
)
def test_bytes_equal_torch(colors: Any, faces: Any, config: Any) -> None:
    torch = pytest.importorskip("torch")
    torch_summary = pytest.importorskip("torch.utils.tensorboard.summary")

    def as_tensor(a: Any) -> Any:
        return None if a is None else torch.from_numpy(a)

    theirs = torch_summary.mesh(
        "m", as_tensor(VERTICES), as_tensor(colors), as_tensor(faces), config
    ).SerializeToString()
    assert mesh_summary("m", VERTICES, colors, faces, config) == theirs


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"vertices": np.zeros((5, 3))}, ValueError, r"\[B, N, 3\]"),
        ({"vertices": np.zeros((1, 5, 2))}, ValueError, r"\[B, N, 3\]"),
        ({"vertices": np.full((1, 2, 3), np.nan)}, ValueError, "NaN"),
        ({"colors": np.zeros((2, 4, 3))}, ValueError, "colors"),
        ({"faces": np.array([[[0, 1, 9]]] * 2)}, ValueError, "face indices"),
        ({"faces": np.zeros((3, 1, 3), dtype=int)}, ValueError, "batch"),
        ({"config_dict": {"x": object()}}, TypeError, "JSON"),
        ({"vertices": np.array([[["a", "b", "c"]]])}, TypeError, "numeric"),
    ],
)
def test_bad_meshes_raise_naming_the_tag(kwargs: dict[str, Any], error: type, match: str) -> None:
    sink = MemorySink()
    writer = SummaryWriter(sink)
    arguments: dict[str, Any] = {
        "vertices": VERTICES,
        "colors": None,
        "faces": None,
        "config_dict": None,
    }
    arguments.update(kwargs)
    with pytest.raises(error, match=match) as info:
        writer.add_mesh("my_mesh", **arguments)
    assert "my_mesh" in str(info.value)
    assert sink.payloads == []
