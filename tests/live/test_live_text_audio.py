"""Text, audio and TF1-style (npsummary.v1) runs read back through a real TensorBoard server,
with both loaders."""

from __future__ import annotations

import functools

import numpy as np
import pytest

import npsummary
from npsummary import v1
from npsummary._format.wav import encode_wav
from tbserver import LOADERS, tensorboard

pytestmark = pytest.mark.live

CLIPS = np.linspace(-1.0, 1.0, 2 * 80 * 1, dtype=np.float32).reshape(2, 80, 1)


@pytest.fixture(scope="module")
def logdir(tmp_path_factory: pytest.TempPathFactory) -> str:
    root = tmp_path_factory.mktemp("live_text_audio")
    writer = npsummary.create_file_writer(str(root / "tf2"))
    with writer.as_default():
        for step in range(3):
            with npsummary.name_scope("notes"):
                assert npsummary.text("md", f"step **{step}**", step=step)
            assert npsummary.text("table", [["a", "b"], ["c", str(step)]], step=step)
            assert npsummary.audio("sound", CLIPS * (step + 1) / 3, 8000, step=step)
    writer.close()
    with v1.FileWriter(str(root / "tf1")) as fw:
        for step in range(3):
            v1.scalar("loss", 1.0 / (step + 1))
            v1.text("note", f"v1 step {step}")
            v1.audio("clip", CLIPS, 8000, max_outputs=1)
            fw.add_summary(v1.merge_all(), step)
    return str(root)


@pytest.mark.parametrize("load_fast", LOADERS)
def test_text_audio_and_v1_runs_are_served(logdir: str, load_fast: str) -> None:
    with tensorboard(logdir, load_fast) as tb:
        text_tags = tb.wait_for(
            lambda: (t := tb.get_json("/data/plugin/text/tags")) and len(t) == 2 and t
        )
        assert set(text_tags["tf2"]) == {"notes/md", "table"}
        assert set(text_tags["tf1"]) == {"note"}

        def rows(run: str, tag: str) -> list[dict[str, object]] | None:
            data = tb.get_json("/data/plugin/text/text", run=run, tag=tag)
            return data if len(data) == 3 else None

        md = tb.wait_for(lambda: rows("tf2", "notes/md"))
        assert [r["step"] for r in md] == [0, 1, 2]
        assert "<strong>2</strong>" in str(md[2]["text"])
        assert "<table" in str(tb.wait_for(lambda: rows("tf2", "table"))[0]["text"])
        # TF1's FileWriter keeps metadata on the first value only; all three steps still show.
        assert "v1 step 2" in str(tb.wait_for(lambda: rows("tf1", "note"))[2]["text"])

        audio_tags = tb.wait_for(
            lambda: (t := tb.get_json("/data/plugin/audio/tags")) and len(t) == 2 and t
        )
        assert set(audio_tags["tf2"]) == {"sound"} and set(audio_tags["tf1"]) == {"clip/audio"}

        def clips(run: str, tag: str) -> list[dict[str, object]] | None:
            data = tb.get_json("/data/plugin/audio/audio", run=run, tag=tag, sample=0)
            return data if len(data) == 3 else None

        for run, tag, scale in (("tf2", "sound", 1 / 3), ("tf1", "clip/audio", 1.0)):
            entry = tb.wait_for(functools.partial(clips, run, tag))[0]
            # The Rust loader serves legacy (TF1) audio as octet-stream; it does the same for
            # the files TensorFlow itself writes (checked on tests/conformance/golden/tf1).
            legacy_rust = run == "tf1" and load_fast == "true"
            expected = "application/octet-stream" if legacy_rust else "audio/wav"
            assert entry["contentType"] == expected, (run, entry)
            wav = tb.get("/data/plugin/audio/individualAudio?" + str(entry["query"]))
            assert wav == encode_wav(
                CLIPS[0] * np.float32(scale) if run == "tf2" else CLIPS[0], 8000
            )

        scalars = tb.wait_for(
            lambda: (
                (d := tb.get_json("/data/plugin/scalars/scalars", run="tf1", tag="loss"))
                and len(d) == 3
                and d
            )
        )
        assert [(p[1], p[2]) for p in scalars] == [
            (s, float(np.float32(1 / (s + 1)))) for s in range(3)
        ]
