"""add_embedding: projector files that TensorBoard parses, appends that keep earlier embeddings,
tags that cannot leave the logdir, and checks before anything is written."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from npsummary import MemorySink, SummaryWriter
from npsummary._summaries.embedding import embedding_block, encode_tag


def _projector_config_pb2() -> Any:
    # TensorBoard's own schema reads the config back (skipped where tensorboard is absent).
    return pytest.importorskip("tensorboard.plugins.projector.projector_config_pb2")


def _config(logdir: Path) -> Any:
    from google.protobuf import text_format

    projector_config_pb2 = _projector_config_pb2()
    text = (logdir / "projector_config.pbtxt").read_text()
    return text_format.Parse(text, projector_config_pb2.ProjectorConfig())


@pytest.mark.fuzz
@given(st.text(min_size=0, max_size=300))
def test_encoded_tags_are_one_safe_path_component(tag: str) -> None:
    name = encode_tag(tag)
    assert name not in ("", ".", "..")
    assert "/" not in name and "\\" not in name and "\0" not in name
    assert len(name.encode("utf-8")) <= 200


@pytest.mark.fuzz
@given(st.text(max_size=30), st.integers(-5, 10**6))
def test_blocks_parse_back_to_the_tag(tag: str, step: int) -> None:
    from google.protobuf import text_format

    projector_config_pb2 = _projector_config_pb2()

    block = embedding_block(tag, step, f"{step}/x", True, (4, 4))
    config = text_format.Parse(block, projector_config_pb2.ProjectorConfig())
    assert config.embeddings[0].tensor_name == f"{tag}:{str(step).zfill(5)}"
    assert list(config.embeddings[0].sprite.single_image_dim) == [4, 4]


def test_a_second_writer_keeps_the_first_embedding(logdir: Path) -> None:
    mat = np.arange(12.0).reshape(4, 3)
    with SummaryWriter(str(logdir)) as writer:
        writer.add_embedding(mat, ["a", "b", "c", "d"], tag="first")
        writer.add_embedding(mat, ["a", "b", "c", "d"], tag="first")  # same again: one entry
    with SummaryWriter(str(logdir)) as writer:
        writer.add_embedding(mat * 2, global_step=7, tag="second")
    names = [e.tensor_name for e in _config(logdir).embeddings]
    assert names == ["first:00000", "second:00007"]
    assert (logdir / "00000" / "first" / "metadata.tsv").read_text() == "a\nb\nc\nd\n"
    rows = (logdir / "00007" / "second" / "tensors.tsv").read_text().splitlines()
    assert rows[1] == "6.0\t8.0\t10.0"


@pytest.mark.parametrize("tag", ["..", ".", "../../etc", "a/../../b", "\\..\\x", "x\0y", "é" * 150])
def test_no_tag_leaves_the_logdir(tmp_path: Path, tag: str) -> None:
    logdir = tmp_path / "run"
    with SummaryWriter(str(logdir)) as writer:
        writer.add_embedding(np.zeros((2, 2)), tag=tag)
    assert sorted(os.listdir(tmp_path)) == ["run"]
    (embedding,) = _config(logdir).embeddings
    assert embedding.tensor_name == f"{tag}:00000"
    path = (logdir / embedding.tensor_path).resolve()
    assert path.is_file() and logdir.resolve() in path.parents


def test_labels_with_tabs_and_newlines_stay_one_cell(logdir: Path) -> None:
    with SummaryWriter(str(logdir)) as writer:
        writer.add_embedding(np.zeros((2, 2)), ["a\tb", "c\nd"])
    assert (logdir / "00000" / "default" / "metadata.tsv").read_text() == "a b\nc d\n"


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"mat": np.zeros(3)}, ValueError, "2-D"),
        ({"mat": np.array([["a"]])}, TypeError, "numeric"),
        ({"metadata": ["a"]}, ValueError, "1 entries but mat has 3 rows"),
        ({"metadata": "abc"}, TypeError, "list"),
        ({"metadata": [[1, 2]] * 3, "metadata_header": ["a"]}, ValueError, "1 columns"),
        ({"label_img": np.zeros((2, 3, 4, 4))}, ValueError, "2 images but mat has 3"),
        ({"label_img": np.zeros((3, 3, 4, 5))}, ValueError, "square"),
        ({"label_img": np.zeros((3, 2, 4, 4))}, ValueError, "C = 1, 3 or 4"),
        ({"label_img": np.zeros((3, 4, 4))}, ValueError, r"\[N, C, H, W\]"),
        ({"label_img": np.zeros((3, 1, 5000, 5000), np.uint8)}, ValueError, "8192"),
    ],
)
def test_bad_input_raises_and_writes_nothing(
    logdir: Path, kwargs: dict[str, Any], error: type, match: str
) -> None:
    arguments: dict[str, Any] = {"mat": np.zeros((3, 2)), "tag": "my_emb"}
    arguments.update(kwargs)
    with SummaryWriter(str(logdir)) as writer:
        with pytest.raises(error, match=match) as info:
            writer.add_embedding(**arguments)
        assert "my_emb" in str(info.value)
    assert sorted(p.name for p in logdir.iterdir() if not p.name.startswith("events")) == []


def test_a_writer_without_a_logdir_refuses() -> None:
    with pytest.raises(ValueError, match="logdir"):
        SummaryWriter(MemorySink()).add_embedding(np.zeros((2, 2)))


def test_gray_and_uint8_sprites(logdir: Path) -> None:
    from PIL import Image

    images = np.arange(5 * 4 * 4, dtype=np.uint8).reshape(5, 1, 4, 4)
    with SummaryWriter(str(logdir)) as writer:
        writer.add_embedding(np.zeros((5, 2)), label_img=images)
    sprite = np.asarray(Image.open(logdir / "00000" / "default" / "sprite.png"))
    assert sprite.shape == (12, 12, 3)  # ceil(sqrt(5)) = 3 tiles per row, square
    np.testing.assert_array_equal(sprite[4:8, 0:4, 1], images[3, 0])
    assert not sprite[8:, 4:].any()


def test_files_get_the_usual_permissions(logdir: Path) -> None:
    with SummaryWriter(str(logdir)) as writer:
        writer.add_embedding(np.zeros((2, 2)), ["a", "b"])
    reference = logdir / "reference"
    reference.write_text("x")
    expected = reference.stat().st_mode & 0o777
    for path in (logdir / "projector_config.pbtxt", logdir / "00000" / "default" / "tensors.tsv"):
        assert path.stat().st_mode & 0o777 == expected
    assert not [p for p in logdir.rglob(".tmp-*")]
