"""User objects whose conversion hooks raise or lie, for the fuzzers of the public API."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


class LyingArray:
    """``__array__`` returns ``result``, or raises it if it is an exception."""

    def __init__(self, result: Any) -> None:
        self.result = result

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        if isinstance(self.result, BaseException):
            raise self.result
        return self.result


class LyingFloat:
    """``__float__`` returns ``result``, or raises it if it is an exception."""

    def __init__(self, result: Any) -> None:
        self.result = result

    def __float__(self) -> Any:
        if isinstance(self.result, BaseException):
            raise self.result
        return self.result

    def __repr__(self) -> str:
        return "LyingFloat()"


class LyingIndex:
    """``__index__`` raises."""

    def __index__(self) -> int:
        raise RuntimeError("no index")


class LyingIter:
    """``__iter__`` and ``__len__`` raise."""

    def __iter__(self) -> Iterator[Any]:
        raise RuntimeError("no iteration")

    def __len__(self) -> int:
        raise RuntimeError("no length")


class LyingStr(str):
    """A str whose ``__str__`` raises."""

    def __str__(self) -> str:
        raise RuntimeError("no str")
