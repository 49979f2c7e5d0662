"""Model graphs for ``add_graph``, ``add_onnx_graph`` and ``add_openvino_graph``.

A ``GraphDef`` is passed through; a ``torch.nn.Module`` is traced by torch's own tracer (the one
``torch.utils.tensorboard`` uses), so the graph equals torch's; ONNX and OpenVINO IR models are
converted to a ``GraphDef`` the way tensorboardX does (one node per operation, inputs as edges,
the operation's attributes as text). torch and onnx are imported only inside these calls.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from .._format.wire import encode_length_delimited, encode_varint

__all__ = ["encode_graph_def", "model_graph", "onnx_graph", "openvino_graph"]

_GRAPH_PRODUCER = 22  # VersionDef.producer as tensorboardX writes it


def _attr_value(value: bytes | tuple[int, list[int]]) -> bytes:
    """AttrValue with ``s`` (bytes) or ``type`` + ``shape`` (an ONNX input's dtype and dims)."""
    if isinstance(value, bytes):
        return encode_length_delimited(2, value)
    dtype, dims = value
    shape = b"".join(encode_length_delimited(2, b"\x08" + encode_varint(d)) for d in dims)
    return b"\x30" + encode_varint(dtype) + encode_length_delimited(7, shape)


def encode_graph_def(nodes: list[tuple[str, str, list[str], dict[str, Any]]]) -> bytes:
    """Serialized ``GraphDef`` of ``(name, op, inputs, attrs)`` nodes; attribute values are
    bytes (``AttrValue.s``) or ``(dtype, dims)`` (``AttrValue.type`` and ``.shape``)."""
    out = []
    for name, op, inputs, attrs in nodes:
        node = encode_length_delimited(1, name.encode()) + encode_length_delimited(2, op.encode())
        node += b"".join(encode_length_delimited(3, i.encode()) for i in inputs)
        for key, value in attrs.items():
            entry = encode_length_delimited(1, key.encode())
            entry += encode_length_delimited(2, _attr_value(value))
            node += encode_length_delimited(5, entry)
        out.append(encode_length_delimited(1, node))
    versions = encode_length_delimited(4, b"\x08" + encode_varint(_GRAPH_PRODUCER))
    return b"".join(out) + versions


def _well_formed(data: bytes) -> bytes:
    """``data`` if it parses as protobuf wire format (its fields are not checked)."""
    from google.protobuf import empty_pb2
    from google.protobuf.message import DecodeError

    try:
        empty_pb2.Empty.FromString(data)
    except DecodeError as exc:
        raise ValueError(f"add_graph: the bytes are not a serialized GraphDef: {exc}") from exc
    return data


def _torch_module(model: Any) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(model, torch.nn.Module)


def _trace_torch(model: Any, inputs: Any, verbose: bool, strict: bool) -> Any:
    import importlib

    try:
        tracer = importlib.import_module("torch.utils.tensorboard._pytorch_graph")
    except ImportError as exc:
        try:
            tracer = importlib.import_module("tensorboardX.pytorch_graph")
        except ImportError:
            raise TypeError(
                "add_graph: tracing a torch.nn.Module uses torch's tracer, which needs the "
                "tensorboard package: pip install tensorboard"
            ) from exc
    return tracer.graph(model, inputs, verbose, strict)


def model_graph(model: Any, inputs: Any, verbose: bool, strict: bool) -> Any:
    """What ``add_graph`` writes for ``model``: GraphDef bytes/message or a (GraphDef,
    RunMetadata) pair from torch's tracer."""
    if isinstance(model, (bytes, bytearray, memoryview)):
        return _well_formed(bytes(model))
    descriptor = getattr(model, "DESCRIPTOR", None)
    if getattr(descriptor, "name", None) == "GraphDef":
        return model
    if callable(getattr(model, "as_graph_def", None)):
        return model.as_graph_def()
    if _torch_module(model):
        return _trace_torch(model, inputs, verbose, strict)
    if type(model).__module__.startswith("torch"):
        raise TypeError("add_graph: got a torch object but torch is not importable here")
    raise TypeError(
        "add_graph: expected a GraphDef (message or bytes), an object with as_graph_def(), or a "
        f"torch.nn.Module, got {type(model).__module__}.{type(model).__name__}"
    )


def _check_file(path: Any, what: str) -> str:
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"{what}: expected a file path, got {type(path).__name__}")
    text = str(os.fspath(path))
    if not os.path.isfile(text):
        raise ValueError(f"{what}: no such file: {text!r}")
    return text


def onnx_graph(path: Any) -> bytes:
    """GraphDef of an ONNX model file: its inputs and outputs as ``Variable`` nodes with dtype
    and shape, each operation as a node named by its first output."""
    path = _check_file(path, "add_onnx_graph")
    import importlib

    try:
        onnx = importlib.import_module("onnx")
    except ImportError as exc:
        raise ImportError("add_onnx_graph needs the onnx package: pip install onnx") from exc
    graph = onnx.load(path).graph
    nodes: list[tuple[str, str, list[str], dict[str, Any]]] = []
    for value in [*graph.input, *graph.output]:
        tensor_type = value.type.tensor_type
        dims = [d.dim_value for d in tensor_type.shape.dim]
        nodes.append((value.name, "Variable", [], {"shape": (tensor_type.elem_type, dims)}))
    for node in graph.node:
        text = ", ".join(
            " = ".join(str(field[1]) for field in attribute.ListFields())
            for attribute in node.attribute
        )
        name = node.output[0] if node.output else node.name
        nodes.append((name, node.op_type, list(node.input), {"parameters": text.encode()}))
    return encode_graph_def(nodes)


def openvino_graph(path: Any) -> bytes:
    """GraphDef of an OpenVINO IR ``.xml`` file: one node per edge target, its source as input
    (the XML is read with the standard library; openvino itself is not needed)."""
    import xml.etree.ElementTree as ET

    path = _check_file(path, "add_openvino_graph")
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as exc:
        raise ValueError(f"add_openvino_graph: {path!r} is not valid XML: {exc}") from exc
    layers, edges = root.find("layers"), root.find("edges")
    if layers is None or edges is None:
        raise ValueError(f"add_openvino_graph: {path!r} has no <layers> and <edges>")
    try:
        names = {layer.attrib["id"]: layer.attrib["name"] for layer in layers}
        nodes: list[tuple[str, str, list[str], dict[str, Any]]] = []
        for edge in edges:
            source, target = edge.attrib["from-layer"], edge.attrib["to-layer"]
            nodes.append((names[target], "op", [names[source]], {"parameters": b""}))
    except KeyError as exc:
        raise ValueError(f"add_openvino_graph: {path!r}: missing layer or attribute {exc}") from exc
    return encode_graph_def(nodes)
