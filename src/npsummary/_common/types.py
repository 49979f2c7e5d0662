"""Type aliases of the public signatures: what each kind of argument may be.

They document intent for readers and type checkers; the checks themselves are in
:mod:`npsummary._common.convert`, which accepts anything that converts at run time.
"""

from __future__ import annotations

from typing import Literal, SupportsFloat, SupportsIndex, SupportsInt, TypeAlias

import numpy.typing as npt

__all__ = [
    "ArrayLike",
    "DataFormats",
    "GlobalStepLike",
    "KernelLayout",
    "NonFinitePolicy",
    "NormalizeMode",
    "ScalarLike",
    "StepLike",
]

#: Anything ``numpy.asarray`` accepts: NumPy arrays and scalars, nested sequences, and objects
#: with ``__array__`` (torch, JAX and CuPy-on-host tensors).
ArrayLike: TypeAlias = npt.ArrayLike
#: A real number: Python or NumPy numbers, 0-d or size-1 array-likes, objects with ``__float__``.
ScalarLike: TypeAlias = "SupportsFloat | npt.ArrayLike"
#: An integer step: ``int``, NumPy integers, 0-d integer arrays, objects with ``__index__``;
#: ``None`` means the default step where one exists.
StepLike: TypeAlias = "SupportsIndex | None"
#: A ``global_step`` as torch's and tensorboardX's writers and TF1's ``FileWriter`` take it:
#: anything ``int()`` converts (floats are truncated toward zero); ``None`` means the default.
GlobalStepLike: TypeAlias = "SupportsInt | SupportsIndex | str | None"
#: What happens to NaN and ±Inf in histogram data: warn once per tag, raise, or drop silently.
NonFinitePolicy: TypeAlias = Literal["warn", "raise", "ignore"]
#: Axis letters of an image array, e.g. ``"CHW"``, ``"HWC"``, ``"HW"``, ``"NCHW"``, ``"NHWC"``.
DataFormats: TypeAlias = str
#: How a grid of filter or feature-map tiles is scaled to [0, 1].
NormalizeMode: TypeAlias = Literal["tile", "filter", "layer", "none"]
#: Axis order of a conv kernel: TF/Keras ``[kh, kw, in, out]`` or torch ``[out, in, kh, kw]``.
KernelLayout: TypeAlias = Literal["HWIO", "OIHW"]
