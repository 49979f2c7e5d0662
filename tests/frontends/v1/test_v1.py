"""npsummary.v1: TF1-style summaries, tags, merge/merge_all and FileWriter."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

import npsummary
from conftest import event_files, read_events
from npsummary import MemorySink, v1
from npsummary import proto as P
from npsummary._format.wav import encode_wav
from npsummary._frontends import context as _context
from npsummary._frontends.v1 import api as v1_api


@pytest.fixture(autouse=True)
def _fresh_round() -> None:
    v1.merge_all()
    for key in list(_context.v1_state.collections):
        _context.v1_state.collections.pop(key)


def values(summary: bytes | None) -> list[Any]:
    assert summary is not None
    return list(P.Summary.FromString(summary).value)


def test_scalar_is_simple_value_without_metadata() -> None:
    (value,) = values(v1.scalar("loss", np.float64(0.1)))
    assert value.tag == "loss" and value.WhichOneof("value") == "simple_value"
    assert value.simple_value == np.float32(0.1)
    assert not value.HasField("metadata")


def test_tags_clean_uniquify_scope_and_family() -> None:
    tags = [
        values(v1.scalar("loss", 1))[0].tag,
        values(v1.scalar("loss", 1))[0].tag,
        values(v1.scalar("LOSS", 1))[0].tag,
        values(v1.scalar("loss_1", 1))[0].tag,
        values(v1.scalar("bad name!", 1))[0].tag,
        values(v1.scalar("/lead", 1))[0].tag,
        values(v1.scalar("x", 1, family="fam"))[0].tag,
    ]
    with npsummary.name_scope("layer1"):
        tags.append(values(v1.scalar("loss", 1))[0].tag)
        tags.append(values(v1.scalar("y", 1, family="f"))[0].tag)
    assert tags == [
        "loss",
        "loss_1",
        "LOSS_2",
        "loss_1_1",
        "bad_name_",
        "lead",
        "fam/fam/x",
        "layer1/loss",
        "f/layer1/f/y",
    ]


def test_merge_all_collects_and_resets_names() -> None:
    assert v1.merge_all() is None
    for step in range(2):
        v1.scalar("a", step)
        v1.text("t", "hello")
        v1.scalar("kept_out", 1, collections=[])
        v1.scalar(f"other{step}", 1, collections=["mine"])
        merged = v1.merge_all()
        assert [v.tag for v in values(merged)] == ["a", "t"]
    assert [v.tag for v in values(v1.merge_all("mine"))] == ["other0", "other1"]
    assert v1.merge_all("mine") is None


def test_train_and_test_collections(tmp_path: Path) -> None:
    with v1.FileWriter(tmp_path / "train") as train, v1.FileWriter(tmp_path / "test") as test:
        for step in range(2):  # both built first: one graph in TF1, so the second is loss_1
            v1.scalar("loss", step, collections=["train"])
            v1.scalar("loss", -step, collections=["test"])
            train.add_summary(v1.merge_all("train"), step)
            test.add_summary(v1.merge_all("test"), step)
        for step in range(2, 4):  # one after the other: the same tag in both runs
            v1.scalar("loss", step, collections=["train"])
            train.add_summary(v1.merge_all("train"), step)
            v1.scalar("loss", -step, collections=["test"])
            test.add_summary(v1.merge_all("test"), step)
    for run, sign, first in (("train", 1, "loss"), ("test", -1, "loss_1")):
        events = read_events(event_files(tmp_path / run)[0])
        points = [(e.step, v.tag, v.simple_value) for e in events for v in e.summary.value]
        tags = [first, first, "loss", "loss"]
        assert points == [(s, tags[s], sign * s) for s in range(4)]


def test_summaries_never_merged_expire() -> None:
    with v1.FileWriter(MemorySink()) as writer:
        for step in range(5):
            writer.add_summary(v1.scalar("loss", step), step)
        assert len(_context.v1_state.collections[v1.SUMMARIES]) <= 2
        assert [v.simple_value for v in values(v1.merge_all())] == [4.0]


def test_merge_all_scope_filter() -> None:
    with npsummary.name_scope("train"):
        v1.scalar("a", 1)
    v1.scalar("b", 2)
    assert [v.tag for v in values(v1.merge_all(scope="train/"))] == ["train/a"]


def test_merge_concatenates_and_rejects_duplicate_tags() -> None:
    a = v1.scalar("a", 1)
    b = v1.scalar("b", 2)
    proto_summary = P.Summary.FromString(v1.scalar("c", 3))
    assert [v.tag for v in values(v1.merge([a, b, proto_summary]))] == ["a", "b", "c"]
    with pytest.raises(ValueError, match="Duplicate tag a"):
        v1.merge([a, a])


def test_text_and_tensor_summary() -> None:
    (txt,) = values(v1.text("notes", np.array(["x", "y"])))
    assert txt.metadata.plugin_data.plugin_name == "text"
    assert list(txt.tensor.string_val) == [b"x", b"y"]
    md = P.SummaryMetadata()
    md.plugin_data.plugin_name = "custom"
    (ten,) = values(
        v1.tensor_summary("t", np.eye(2), summary_description="desc", summary_metadata=md)
    )
    assert ten.tensor.dtype == P.DT_DOUBLE and len(ten.tensor.tensor_content) == 32
    assert ten.metadata.plugin_data.plugin_name == "custom"
    assert ten.metadata.summary_description == "desc"
    (bare,) = values(v1.tensor_summary("u", [1, 2]))
    assert bare.tensor.dtype == P.DT_INT32 and bare.HasField("metadata")


def test_audio_values_and_tags() -> None:
    clips = np.linspace(-1, 1, 30, dtype=np.float32).reshape(3, 5, 2)
    several = values(v1.audio("snd", clips, 8000, max_outputs=2))
    assert [v.tag for v in several] == ["snd/audio/0", "snd/audio/1"]
    first = several[0].audio
    assert (first.sample_rate, first.num_channels, first.length_frames) == (8000, 2, 5)
    assert first.content_type == "audio/wav"
    assert first.encoded_audio_string == encode_wav(clips[0], 8000)
    (one,) = values(v1.audio("mono", clips[:, :, 0], 8000, max_outputs=1))
    assert one.tag == "mono/audio" and one.audio.num_channels == 1


def test_file_writer_writes_events_and_strips_repeated_metadata(tmp_path: Path) -> None:
    logdir = tmp_path / "train"
    writer = v1.FileWriter(str(logdir))
    assert logdir.is_dir() and event_files(logdir) == []  # file created on first event
    assert writer.get_logdir() == str(logdir)
    for step in range(3):
        v1.scalar("loss", 1.0 / (step + 1))
        v1.text("note", f"step {step}")
        writer.add_summary(v1.merge_all(), global_step=step)
    writer.add_summary(None, 3)  # an empty merge_all is ignored
    writer.add_session_log(v1.SessionLog(status=v1.SessionLog.STOP), 3)
    writer.add_run_metadata(b"\x0a\x00", "step000", 0)
    writer.close()
    (path,) = event_files(logdir)
    events = read_events(path)
    assert events[0].file_version == "brain.Event:2"
    summaries = [e for e in events if e.HasField("summary")]
    assert [e.step for e in summaries] == [0, 1, 2]
    notes = [v for e in summaries for v in e.summary.value if v.tag == "note"]
    assert [v.HasField("metadata") for v in notes] == [True, False, False]
    assert events[-2].session_log.status == 2 and events[-2].step == 3
    assert events[-1].tagged_run_metadata.tag == "step000"


def test_file_writer_reopen_close_and_context_manager(tmp_path: Path) -> None:
    with v1.FileWriter(tmp_path, filename_suffix=".sfx") as writer:
        (first,) = event_files(tmp_path)  # a suffix makes the file at once, as in TF1
        assert first.name.endswith(".sfx")
        writer.add_summary(v1.scalar("a", 1), 0)
    with pytest.warns(RuntimeWarning, match="closed"):
        writer.add_summary(v1.scalar("a", 2), 1)
    writer.reopen()
    writer.add_summary(v1.scalar("a", 3), 2)
    writer.close()
    files = event_files(tmp_path)
    assert len(files) == 2
    steps = [[e.step for e in read_events(f) if e.HasField("summary")] for f in files]
    assert sorted(steps) == [[0], [2]]


def test_file_writer_accepts_graph_def_bytes(tmp_path: Path) -> None:
    writer = v1.FileWriter(tmp_path, graph=b"\x0a\x03\x0a\x01x")
    writer.close()
    (path,) = event_files(tmp_path)
    assert read_events(path)[1].graph_def == b"\x0a\x03\x0a\x01x"


def test_histogram_is_legacy_proto_and_rejects_non_finite() -> None:
    (value,) = values(v1.histogram("h", [0.0, 0.5, 1.0, 1.0, -2.0, 100.0, 1e-13, -0.0]))
    histo = value.histo
    assert (histo.min, histo.max, histo.num, histo.sum_squares) == (-2.0, 100.0, 8.0, 10006.25)
    assert len(histo.bucket_limit) == len(histo.bucket) == 11  # docs/FORMAT.md §5a example
    assert histo.bucket_limit[-1] == np.finfo(np.float64).max
    with pytest.raises(ValueError, match="Nan in summary histogram for: nan"):
        v1.histogram("nan", [1.0, np.nan])
    with pytest.raises(ValueError, match="Infinity in summary histogram for: inf"):
        v1.histogram("inf", [-np.inf])


def test_image_tags_colorspace_and_normalisation() -> None:
    import io

    from PIL import Image

    floats = np.zeros((3, 2, 2, 1), np.float32)
    floats[:, 0, 0, 0] = [1.0, 2.0, -1.0]
    several = values(v1.image("img", floats, max_outputs=2))
    assert [v.tag for v in several] == ["img/image/0", "img/image/1"]
    assert (several[0].image.height, several[0].image.width, several[0].image.colorspace) == (
        2,
        2,
        1,
    )
    pixels = np.asarray(Image.open(io.BytesIO(several[1].image.encoded_image_string)))
    assert pixels.tolist() == [[255, 0], [0, 0]]  # scaled by 255 / max
    rgb = np.full((1, 1, 3, 3), 7, np.uint8)
    (one,) = values(v1.image("rgb", rgb, max_outputs=1))
    assert one.tag == "rgb/image" and one.image.colorspace == 3
    with pytest.raises(ValueError, match="shape"):
        v1.image("bad", np.zeros((2, 2, 2)))
    with pytest.raises(
        TypeError, match=r"^'bad_\d+': images must be uint8 or float, got an array of dtype int32$"
    ):
        v1.image("bad", np.zeros((1, 2, 2, 1), np.int32))


def test_writing_one_by_one_keeps_tags_stable(tmp_path: Path) -> None:
    with v1.FileWriter(tmp_path) as writer:
        for step in range(3):
            writer.add_summary(v1.scalar("loss", step), step)
            writer.add_summary(v1.merge([v1.scalar("a", 1), v1.scalar("b", 2)]), step)
    tags = {v.tag for e in read_events(event_files(tmp_path)[0]) for v in e.summary.value}
    assert tags == {"loss", "a", "b"}


def test_unmerged_summaries_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(v1_api, "MAX_PENDING", 5)
    monkeypatch.setattr(_context.v1_state, "warned_overflow", False)
    with pytest.warns(RuntimeWarning, match="oldest are dropped"):
        for i in range(8):
            v1.scalar(f"s{i}", i)
    assert [v.tag for v in values(v1.merge_all())] == ["s3", "s4", "s5", "s6", "s7"]


def _text_metadata_flags(path: Path) -> list[bool]:
    return [
        v.HasField("metadata")
        for e in read_events(path)
        for v in e.summary.value
        if v.tag.startswith("note")
    ]


def test_file_writer_sends_metadata_again_in_every_new_file(tmp_path: Path) -> None:
    # Metadata is stripped per file, not per writer (issue 13, item 7): after the logdir is
    # removed (the sink starts a new file) or after reopen(), the first value of a tag in the new
    # file carries its metadata again, or TensorBoard shows nothing for it.
    import shutil

    from npsummary import EventWriteError

    logdir = tmp_path / "run"
    writer = v1.FileWriter(str(logdir))
    writer.add_summary(v1.text("note", "one"), 1)
    writer.add_summary(v1.text("note", "two"), 2)
    writer.flush()
    (first,) = event_files(logdir)
    assert _text_metadata_flags(first) == [True, False]
    shutil.rmtree(logdir)
    writer.add_summary(v1.text("note", "three"), 3)
    with pytest.raises(EventWriteError):  # ENOENT, once: logging goes on in a new file
        writer.flush()
    writer.add_summary(v1.text("note", "four"), 4)
    writer.flush()
    (second,) = event_files(logdir)
    assert _text_metadata_flags(second) == [True, False]
    writer.close()
    writer.reopen()
    writer.add_summary(v1.text("note", "five"), 5)
    writer.close()
    third = next(p for p in event_files(logdir) if p != second)
    assert _text_metadata_flags(third) == [True]


def test_file_writer_refused_summary_marks_nothing_sent(tmp_path: Path) -> None:
    writer = v1.FileWriter(str(tmp_path / "run"))
    with pytest.raises(ValueError):
        writer.add_summary(v1.text("note", "refused"), float("nan"))
    writer.add_summary(v1.text("note", "kept"), 2)
    writer.close()
    assert _text_metadata_flags(event_files(tmp_path / "run")[0]) == [True]
