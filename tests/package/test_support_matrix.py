"""pyproject.toml, the README's "Supported versions" table and the CI stages state the same
ranges (issue 14): a change to one that is not made to the others fails here."""

from __future__ import annotations

import re

from paths import ROOT

ROOT = ROOT
PYPROJECT = (ROOT / "pyproject.toml").read_text()
README = (ROOT / "README.md").read_text()
MATRIX = (ROOT / ".ci" / "stages" / "20-matrix.sh").read_text()
PROTOBUF_STAGE = (ROOT / ".ci" / "stages" / "10-protobuf-3.20.sh").read_text()


def _floor(package: str) -> str:
    floor: str
    (floor,) = re.findall(rf'"{package}>=([\d.]+)"', PYPROJECT)
    return floor


def _readme_row(name: str) -> str:
    (row,) = [line for line in README.splitlines() if line.startswith(f"| {name} |")]
    return row


def _matrix(name: str) -> list[str]:
    """A bash array of the matrix stage, e.g. PYTHONS=(3.10.13 3.11.7 ...)."""
    body: str
    (body,) = re.findall(rf"^{name}=\((.*)\)$", MATRIX, re.M)
    return body.split()


def _classifier_pythons() -> list[str]:
    return re.findall(r'"Programming Language :: Python :: (3\.\d+)"', PYPROJECT)


def test_python_range() -> None:
    (minimum,) = re.findall(r'requires-python = ">=(3\.\d+)"', PYPROJECT)
    pythons = _classifier_pythons()
    assert pythons[0] == minimum
    row = _readme_row("Python")
    assert f"{pythons[0]} – {pythons[-1]}" in row
    for version in pythons:
        assert version in row.split("|")[3], f"README does not say CI tests Python {version}"
        # Every supported Python has a cell in the matrix stage.
        cells = [".".join(v.split(".")[:2]) for v in _matrix("PYTHONS")]
        assert version in cells, f"no CI cell for Python {version}"


def test_numpy_floor() -> None:
    floor = _floor("numpy")
    row = _readme_row("NumPy")
    assert f"≥ {floor}" in row and f"{floor} (the floor)" in row
    assert re.search(r"numpy\\s\*>=\\s\*", MATRIX), "the matrix reads the floor from pyproject"
    specs = dict(zip(_matrix("PYTHONS"), _matrix("SPECS"), strict=True))
    floor_cells = [py for py, spec in specs.items() if spec == '"numpy==$NUMPY_FLOOR"']
    assert [py[:5] for py in floor_cells] == ["3.11."], "the floor is tested on Python 3.11"


def test_protobuf_floor() -> None:
    floor = _floor("protobuf")
    assert f"≥ {floor}" in _readme_row("protobuf")
    assert f"protobuf=={floor}" in PROTOBUF_STAGE
