"""Blank embedding labels keep their rows (issue 20, item 13).

TensorBoard's projector parses ``metadata.tsv`` in the browser: it skips every line whose
JavaScript ``trim()`` is empty and reads the first line as a header only if it holds a tab. A
blank label therefore shifted every later label onto the wrong point. ``_projector_rows`` below
follows the installed front end's parser (checked against its source), and judges our files.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import examples
from npsummary import SummaryWriter
from npsummary._summaries import embedding
from npsummary._summaries.embedding import BLANK_MARK, metadata_tsv

_JS_TRIM = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"  # noqa: E501


def _projector_rows(text: str) -> tuple[list[str], list[dict[str, str | None]]]:
    """Columns and rows as the projector's metadata parser builds them (see module docstring):
    lines split on "\\n"; a line that trims to nothing is skipped; the first kept line is the
    header if it holds a tab; an empty cell is null."""
    columns, rows, seen = ["label"], [], 0
    for line in text.split("\n"):
        if not line.strip(_JS_TRIM):
            continue
        if seen == 0 and "\t" in line:
            columns = line.split("\t")
            seen += 1
            continue
        seen += 1
        cells = line.split("\t")
        rows.append(
            {c: (cells[i] or None) if i < len(cells) else None for i, c in enumerate(columns)}
        )
    return columns, rows


def test_trim_is_javascripts() -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    script = (
        'let w = ""; for (let c = 0; c < 0x10000; c++) {'
        " const ch = String.fromCharCode(c); if (ch.trim() === '') w += ch; }"
        " console.log(JSON.stringify(w));"
    )
    done = subprocess.run([node, "-e", script], capture_output=True, text=True, check=True)
    assert set(json.loads(done.stdout)) == set(_JS_TRIM) == set(embedding._JS_WHITESPACE)


def test_the_parser_above_is_the_installed_projectors() -> None:
    binary = pytest.importorskip("tensorboard.plugins.projector").__path__[0]
    source = (Path(binary) / "tf_projector_plugin" / "projector_binary.js").read_text("utf-8")
    parser = re.search(r'Parsing metadata\.\.\.".{0,400}', source)
    assert parser is not None, "the projector's metadata parser moved: re-check _projector_rows"
    body = parser.group(0)
    assert ".trim().length===0)return" in body
    assert 'indexOf("\t")>=0' in body
    assert 'p===""?null:p' in body


@pytest.mark.parametrize(
    "labels",
    [
        ["a", "", "c"],
        ["", " ", "\t", "\u3000", "\ufeff", "\u00a0"],
        ["x", "\r\n", "y", "  \u2028 "],
    ],
)
def test_blank_labels_stay_on_their_points(labels: list[str]) -> None:
    text = metadata_tsv("emb", labels, None, len(labels)).decode("utf-8")
    columns, rows = _projector_rows(text)
    assert columns == ["label"]
    assert len(rows) == len(labels)
    for label, row in zip(labels, rows, strict=True):
        shown = row["label"]
        assert shown is not None
        if label.strip(_JS_TRIM):
            assert shown == label.replace("\t", " ").replace("\r", " ").replace("\n", " ")
        else:
            assert shown.endswith(BLANK_MARK)
            assert not shown.replace(BLANK_MARK, "").strip(_JS_TRIM)


def test_blank_multi_column_rows_and_headers_are_kept() -> None:
    rows_in = [["a", "1"], ["", ""], [" ", "\t"], ["b", ""]]
    text = metadata_tsv("emb", rows_in, ["name", "n"], 4).decode("utf-8")
    columns, rows = _projector_rows(text)
    assert columns == ["name", "n"]
    assert [r["name"] for r in rows][0::3] == ["a", "b"]
    assert len(rows) == 4
    assert rows[3]["n"] is None  # an empty cell in a row that has others is the projector's null
    text = metadata_tsv("emb", [["a", "b"]], ["", " "], 1).decode("utf-8")
    columns, rows = _projector_rows(text)
    assert len(columns) == 2 and len(rows) == 1 and rows[0][columns[0]] == "a"


def test_one_column_header_does_not_become_a_label() -> None:
    text = metadata_tsv("emb", [["p"], ["q"]], ["class"], 2).decode("utf-8")
    _, rows = _projector_rows(text)
    assert [r["label"] for r in rows] == ["p", "q"]


@pytest.mark.fuzz
@settings(max_examples=examples(200), deadline=None)
@given(
    st.lists(
        st.text(alphabet=st.sampled_from([*_JS_TRIM, "a", "\u200b", "\x85", "\x1c"]), max_size=4),
        min_size=1,
        max_size=12,
    )
)
def test_any_labels_give_one_row_per_point(labels: list[str]) -> None:
    text = metadata_tsv("emb", labels, None, len(labels)).decode("utf-8")
    assert len(_projector_rows(text)[1]) == len(labels)


def test_add_embedding_with_blank_labels(tmp_path: Path) -> None:
    with SummaryWriter(tmp_path) as writer:
        writer.add_embedding(np.eye(3), metadata=["first", "", "third"])
    text = (tmp_path / "00000" / "default" / "metadata.tsv").read_text("utf-8")
    labels = [r["label"] for r in _projector_rows(text)[1]]
    assert labels == ["first", BLANK_MARK, "third"]
