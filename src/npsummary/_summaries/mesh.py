"""Meshes and point clouds for TensorBoard's ``mesh`` plugin, as torch's ``add_mesh`` writes them.

One ``Summary`` holds a value per component given: vertices, faces, colors (in that order),
tagged ``{tag}_VERTEX``, ``{tag}_FACE`` and ``{tag}_COLOR``. Each is a DT_FLOAT ``[B, N, 3]``
tensor in ``float_val`` with plugin ``mesh`` metadata whose content is ``MeshPluginData{version 0,
name=tag, content_type, json_config, shape, components}``; ``components`` is the bitmask
``sum(1 << content_type)`` of the components present, which the plugin needs to pair them.
``json_config`` is ``json.dumps(config_dict, sort_keys=True)``, or ``"{}"``.

tensorboardX 2.6 writes the same tensors tagged ``{tag}_1``/``_2``/``_3`` without the bitmask
(and ``json_config`` ``"null"`` without a ``config_dict``), which TensorBoard's mesh dashboard
cannot pair; torch's form is the one the plugin reads. ``tensorboardx=True`` writes
tensorboardX's form (the tensorboardX flavour of ``SummaryWriter``).

Format notes: docs/FORMAT.md §4.10.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from .._common.convert import as_numeric_array
from .metadata import PLUGIN_MESH
from .tensor import fill_float_tensor

__all__ = ["mesh_summary"]

_VERTEX, _FACE, _COLOR = 1, 2, 3
_NAMES = {_VERTEX: "VERTEX", _FACE: "FACE", _COLOR: "COLOR"}


def _component(tag: str, name: str, data: Any) -> np.ndarray:
    array = as_numeric_array(data, tag, name)
    if array.ndim != 3 or array.shape[2] != 3:
        raise ValueError(f"{tag!r}: {name} must have shape [B, N, 3], got {array.shape}")
    return array


def _check(tag: str, vertices: np.ndarray, colors: Any, faces: Any) -> dict[int, np.ndarray]:
    parts = {_VERTEX: vertices}
    if not np.all(np.isfinite(vertices)):
        raise ValueError(f"{tag!r}: vertices contain NaN or infinity")
    if faces is not None:
        face_array = _component(tag, "faces", faces)
        if face_array.shape[0] != vertices.shape[0]:
            raise ValueError(
                f"{tag!r}: faces and vertices must have the same batch size, got "
                f"{face_array.shape[0]} and {vertices.shape[0]}"
            )
        if face_array.size and (face_array.min() < 0 or face_array.max() >= vertices.shape[1]):
            raise ValueError(
                f"{tag!r}: face indices must lie in [0, {vertices.shape[1]}), the number of "
                f"vertices; got [{face_array.min()}, {face_array.max()}]"
            )
        parts[_FACE] = face_array
    if colors is not None:
        color_array = _component(tag, "colors", colors)
        if color_array.shape != vertices.shape:
            raise ValueError(
                f"{tag!r}: colors must have the shape of vertices {vertices.shape}, got "
                f"{color_array.shape}"
            )
        parts[_COLOR] = color_array
    return parts


def mesh_summary(
    tag: str,
    vertices: Any,
    colors: Any,
    faces: Any,
    config_dict: Any,
    *,
    tensorboardx: bool = False,
) -> bytes:
    """Serialized ``Summary`` of a mesh or point cloud (see the module docstring).

    Raises:
      TypeError: non-numeric data or a ``config_dict`` that JSON cannot encode.
      ValueError: a component is not ``[B, N, 3]``, shapes disagree, vertices are not finite,
        or a face index is outside the vertex range.
    """
    from .. import proto

    parts = _check(tag, _component(tag, "vertices", vertices), colors, faces)
    try:
        if config_dict is None and not tensorboardx:
            json_config = "{}"
        else:
            json_config = json.dumps(config_dict, sort_keys=True)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{tag!r}: config_dict must be JSON-serializable: {exc}") from exc
    components = sum(1 << content_type for content_type in parts)
    summary = proto.Summary()
    for content_type, array in parts.items():
        suffix = str(content_type) if tensorboardx else _NAMES[content_type]
        value = summary.value.add(tag=f"{tag}_{suffix}")
        plugin_data = value.metadata.plugin_data
        plugin_data.plugin_name = PLUGIN_MESH
        plugin_data.content = proto.MeshPluginData(
            version=0,
            name=tag,
            content_type=content_type,
            json_config=json_config,
            shape=list(array.shape),
            components=0 if tensorboardx else components,
        ).SerializeToString()
        fill_float_tensor(value.tensor, array)
    return bytes(summary.SerializeToString())
