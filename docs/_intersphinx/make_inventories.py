"""Write the intersphinx inventories the docs build reads offline: python.inv and numpy.inv.

The build machines reach package registries only, not docs.python.org or numpy.org, so the
inventories are committed: small subsets of the real ones, holding the names our docstrings and
signatures refer to, each with its page on the real site (so the links work). Add a name here
when ``sphinx-build -n`` reports ``reference target not found`` for a Python or NumPy object,
then run ``python docs/_intersphinx/make_inventories.py``. With network access,
``NPSUMMARY_DOCS_ONLINE=1 sphinx-build ...`` checks the build against the full inventories.
"""

from __future__ import annotations

import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent

# (name, role, page#anchor); "$" in an anchor stands for the name, as in Sphinx inventories.
PYTHON = [
    ("collections.abc.Callable", "py:class", "library/collections.abc.html#$"),
    ("collections.abc.Iterable", "py:class", "library/collections.abc.html#$"),
    ("collections.abc.Iterator", "py:class", "library/collections.abc.html#$"),
    ("collections.abc.Mapping", "py:class", "library/collections.abc.html#$"),
    ("collections.abc.Sequence", "py:class", "library/collections.abc.html#$"),
    ("os.PathLike", "py:class", "library/os.html#$"),
    ("re.Pattern", "py:class", "library/re.html#$"),
    ("re.search", "py:function", "library/re.html#$"),
    ("typing.Any", "py:data", "library/typing.html#$"),
    ("typing.Literal", "py:data", "library/typing.html#$"),
    ("typing.NamedTuple", "py:class", "library/typing.html#$"),
    ("OSError", "py:exception", "library/exceptions.html#$"),
    ("TypeError", "py:exception", "library/exceptions.html#$"),
    ("ValueError", "py:exception", "library/exceptions.html#$"),
    ("RuntimeError", "py:exception", "library/exceptions.html#$"),
    ("ImportError", "py:exception", "library/exceptions.html#$"),
    ("NotImplementedError", "py:exception", "library/exceptions.html#$"),
    ("KeyError", "py:exception", "library/exceptions.html#$"),
    ("UserWarning", "py:exception", "library/exceptions.html#$"),
    ("RuntimeWarning", "py:exception", "library/exceptions.html#$"),
    ("bytes", "py:class", "library/stdtypes.html#$"),
    ("dict", "py:class", "library/stdtypes.html#$"),
    ("list", "py:class", "library/stdtypes.html#$"),
    ("str", "py:class", "library/stdtypes.html#$"),
    ("tuple", "py:class", "library/stdtypes.html#$"),
    ("bool", "py:class", "library/functions.html#$"),
    ("float", "py:class", "library/functions.html#$"),
    ("int", "py:class", "library/functions.html#$"),
    ("object", "py:class", "library/functions.html#$"),
]

NUMPY = [
    ("numpy.ndarray", "py:class", "reference/generated/numpy.ndarray.html#$"),
    ("numpy.dtype", "py:class", "reference/generated/numpy.dtype.html#$"),
    ("numpy.float64", "py:class", "reference/arrays.scalars.html#$"),
    ("numpy.float32", "py:class", "reference/arrays.scalars.html#$"),
    ("numpy.int64", "py:class", "reference/arrays.scalars.html#$"),
    ("numpy.uint8", "py:class", "reference/arrays.scalars.html#$"),
    ("numpy.asarray", "py:function", "reference/generated/numpy.asarray.html#$"),
    ("numpy.histogram", "py:function", "reference/generated/numpy.histogram.html#$"),
    (
        "numpy.histogram_bin_edges",
        "py:function",
        "reference/generated/numpy.histogram_bin_edges.html#$",
    ),
    ("numpy.typing.ArrayLike", "py:data", "reference/typing.html#$"),
]


def write(path: Path, project: str, version: str, entries: list[tuple[str, str, str]]) -> None:
    header = (
        "# Sphinx inventory version 2\n"
        f"# Project: {project}\n"
        f"# Version: {version}\n"
        "# The remainder of this file is compressed using zlib.\n"
    ).encode()
    body = "".join(f"{name} {role} 1 {uri} -\n" for name, role, uri in sorted(entries))
    path.write_bytes(header + zlib.compress(body.encode(), 9))


if __name__ == "__main__":
    write(HERE / "python.inv", "Python", "3", PYTHON)
    write(HERE / "numpy.inv", "NumPy", "2", NUMPY)
    print(f"wrote {len(PYTHON)} Python and {len(NUMPY)} NumPy names into {HERE}")
