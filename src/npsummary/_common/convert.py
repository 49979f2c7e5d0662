"""Coercion and validation of user input at the API boundary.

Values may be Python numbers, NumPy scalars or arrays, or any object exposing ``__array__``
(torch, JAX, CuPy-on-host tensors) or ``__float__``; no framework is ever imported. Every error
is a ``TypeError`` (wrong kind of thing) or ``ValueError`` (right kind, bad value) whose message
names the tag, the value received and what was expected.

The data and every argument that may be a user's object (bins and bucket edges, steps, wall
times, scalars, sequences of summaries) are converted here, before any core sees them, because a
user's ``__array__``, ``__float__``, ``__index__``, ``__len__`` or ``__iter__`` can raise
anything: such an exception becomes a ``TypeError`` naming the tag and the argument, chained to
the original.
"""

from __future__ import annotations

import math
import numbers
import operator
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeVar, overload

import numpy as np

__all__ = [
    "INT64_MAX",
    "INT64_MIN",
    "REAL",
    "REAL_NOT_BOOL",
    "UINT8_OR_FLOAT",
    "Dtypes",
    "as_array",
    "as_data_array",
    "as_float64_array",
    "as_list",
    "as_native_array",
    "as_numeric_array",
    "as_real_array",
    "check_choice",
    "check_filename_suffix",
    "check_flag",
    "check_int",
    "check_numeric",
    "check_process_group",
    "check_tag",
    "check_text",
    "dtype_error",
    "is_dtensor",
    "is_numeric",
    "real_dtype",
    "scalar_dict",
    "tagged",
    "to_duration",
    "to_float",
    "to_float32_range",
    "to_positive_float",
    "to_step",
    "to_walltime",
]

T = TypeVar("T")

INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1
# Smallest magnitude a float32 cast rounds to infinity: halfway between float32's largest finite
# value (2**128 - 2**104) and 2**128; the tie rounds to the even neighbour, infinity.
_FLOAT32_OVERFLOW = 2.0**128 - 2.0**103


def _describe(value: Any) -> str:
    """A short description of ``value`` for an error message; never raises."""
    kind = type(value).__name__
    try:  # a user's object may raise from __repr__ or from a shape property too
        shape = getattr(value, "shape", None)
        if shape is not None:
            return f"{kind} of shape {tuple(shape)}"
        text = repr(value)
    except Exception:
        return f"a {kind} object"
    if len(text) > 80:
        text = text[:77] + "..."
    return f"{text} ({kind})"


def _refused(subject: str, value: Any, expected: str, exc: Exception) -> TypeError:
    """The TypeError for ``value``, whose conversion hook raised ``exc``."""
    return TypeError(
        f"{subject}: cannot convert {_describe(value)} to {expected}: {type(exc).__name__}: {exc}"
    )


def _who(tag: str | None, name: str) -> str:
    """The subject of an error message: ``'loss': max_outputs`` or just ``max_outputs``."""
    return name if tag is None else f"{tag!r}: {name}"


@overload
def check_int(
    value: Any,
    name: str,
    *,
    tag: str | None = ...,
    minimum: int | None = ...,
    maximum: int | None = ...,
    allow_none: Literal[False] = ...,
) -> int: ...


@overload
def check_int(
    value: Any,
    name: str,
    *,
    tag: str | None = ...,
    minimum: int | None = ...,
    maximum: int | None = ...,
    allow_none: bool,
) -> int | None: ...


def check_int(
    value: Any,
    name: str,
    *,
    tag: str | None = None,
    minimum: int | None = None,
    maximum: int | None = None,
    allow_none: bool = False,
) -> int | None:
    """Return ``value`` as a Python int, or raise naming ``tag`` and the argument ``name``.

    Python ints, NumPy integers, 0-d integer arrays and objects with ``__index__`` (integer
    torch tensors) are accepted; ``None`` only with ``allow_none`` (it is returned as is).
    ``bool`` (Python, NumPy, or a 0-d bool array/tensor), floats, strings, timedeltas and
    anything else are a ``TypeError``, and so is any exception a user's ``__index__`` raises.
    A value outside ``[minimum, maximum]`` (inclusive) is a ``ValueError``.
    """
    if type(value) is int:
        number = value
    elif value is None and allow_none:
        return None
    else:
        number = _index(value, _who(tag, name), allow_none)
    if minimum is not None and number < minimum:
        raise ValueError(f"{_who(tag, name)} must be >= {minimum}, got {number}")
    if maximum is not None and number > maximum:
        raise ValueError(f"{_who(tag, name)} must be <= {maximum}, got {number}")
    return number


def _index(value: Any, who: str, allow_none: bool) -> int:
    """``value.__index__()`` for :func:`check_int`, refusing bools; any failure is TypeError."""
    cause: Exception | None = None
    if not isinstance(value, (bool, np.bool_, float, np.floating, str, bytes, np.timedelta64)):
        try:
            # A 0-d bool array or tensor has __index__ too, but True is not a count.
            if str(getattr(value, "dtype", "")) not in ("bool", "torch.bool"):
                return operator.index(value)
        except Exception as exc:  # a user's __index__ (or dtype) may raise anything: wrong kind
            cause = exc
    expected = "an int or None" if allow_none else "an int"
    raise TypeError(f"{who} must be {expected}, got {_describe(value)}") from cause


def check_choice(value: Any, name: str, choices: tuple[str, ...], *, tag: str | None = None) -> str:
    """Return ``value`` if it is one of the strings ``choices``, else raise ``ValueError``."""
    if isinstance(value, str) and value in choices:
        return value
    text = repr(value)
    text = text if len(text) <= 60 else text[:57] + "..."
    raise ValueError(f"{_who(tag, name)} must be one of {choices}, got {text}")


def check_text(value: Any, name: str, *, tag: str | None = None) -> str | None:
    """Return an optional text argument (description, display name) as a plain ``str``.

    ``None`` passes; anything else must be a ``str`` that UTF-8 can encode.
    """
    if value is None:
        return None
    return check_tag(value, _who(tag, name))


def to_duration(value: Any, name: str, *, scale: float = 1.0) -> float:
    """Return a positive, finite number of seconds (``value * scale``), or raise naming it."""
    if isinstance(value, (bool, np.bool_, str, bytes)):
        raise TypeError(f"{name} must be a number, got {_describe(value)}")
    try:
        seconds = float(value) * scale
    except Exception as exc:
        raise TypeError(f"{name} must be a number, got {_describe(value)}") from exc
    if not 0 < seconds < math.inf:
        raise ValueError(f"{name} must be positive and finite, got {value!r}")
    return seconds


def check_tag(tag: Any, what: str = "tag") -> str:
    """Return ``tag`` if it is a string that UTF-8 can encode, else raise naming it."""
    if not isinstance(tag, str):
        raise TypeError(f"{what} must be a str, got {_describe(tag)}")
    text = str.__str__(tag)  # a str subclass becomes a plain str (its own __str__ is not run)
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ValueError(f"{what} {text!r} is not valid UTF-8 text: {exc.reason}") from None
    return text


def as_array(value: Any, tag: str, name: str | None = None) -> np.ndarray:
    """Return ``value`` as a NumPy array via ``__array__``, without copying when possible.

    Any exception from the conversion (a user's broken ``__array__``, ``__len__`` or
    ``__getitem__``) becomes a ``TypeError`` naming ``tag`` and, if given, the argument
    ``name``. Torch tensors that require grad refuse ``__array__``; like every logger, we log
    their data.
    """
    if type(value) is np.ndarray:
        return value
    try:
        # Subclasses (np.matrix, masked arrays) become plain arrays: every front end then sees
        # the same data, whatever a subclass does to shapes and scalars.
        return np.asarray(value)
    except MemoryError:
        raise
    except Exception as exc:
        detach = getattr(value, "detach", None)
        if callable(detach):  # a torch tensor that requires grad, or is bfloat16
            try:
                tensor = detach().cpu()
                if str(getattr(tensor, "dtype", "")) == "torch.bfloat16":
                    tensor = tensor.float()  # NumPy has no bfloat16: read as float32
                return np.asarray(tensor)
            except Exception:
                pass
        subject = repr(tag) if name is None else f"{tag!r}: {name}"
        raise TypeError(
            f"{subject}: cannot convert {_describe(value)} to a NumPy array: {exc}"
        ) from exc


def _defined_in(value: Any, package: str, names: tuple[str, ...]) -> bool:
    """Whether ``value``'s class, or a base, is one of ``names`` from ``package`` (by module
    name: the library is never imported to ask)."""
    for klass in type(value).__mro__:
        module = getattr(klass, "__module__", "") or ""
        if klass.__name__ in names and (module == package or module.startswith(package + ".")):
            return True
    return False


def is_dtensor(value: Any) -> bool:
    """Whether ``value`` is a ``torch.distributed.tensor.DTensor`` (sharded over processes)."""
    return _defined_in(value, "torch.distributed", ("DTensor",))


def check_process_group(value: Any, tag: str) -> Any:
    """``process_group=``: None, or a ``torch.distributed`` process group (``ProcessGroup``,
    ``dist.group.WORLD``, ``new_group(...)``); else a ``TypeError`` naming ``tag``."""
    if value is None or _defined_in(value, "torch", ("ProcessGroup",)):
        return value
    raise TypeError(
        f"{tag!r}: process_group must be a torch.distributed ProcessGroup (dist.group.WORLD, "
        f"dist.new_group(...)) or None, got {_describe(value)}"
    )


def as_real_array(value: Any, tag: str, name: str) -> np.ndarray:
    """:func:`as_array` for an argument of real numbers (bin edges, bucket limits and counts).

    Where NumPy makes an object array (a list holding a user's number type, or ints beyond
    int64), the elements are converted to float64 here, so that their ``__float__`` runs at
    the boundary; an element that cannot be converted is a ``TypeError``.
    """
    array = as_array(value, tag, name)
    if array.dtype != object:
        return array
    try:
        return array.astype(np.float64)
    except MemoryError:
        raise
    except Exception as exc:
        raise _refused(f"{tag!r}: {name}", value, "real numbers", exc) from exc


def as_float64_array(value: Any, tag: str, name: str) -> np.ndarray:
    """:func:`as_real_array` as float64; elements that are no real numbers (strings, dates)
    are a ``TypeError`` naming ``tag`` and the argument ``name``."""
    array = check_numeric(as_real_array(value, tag, name), name, tag=tag)
    return array.astype(np.float64, copy=False)


def as_list(value: Any, tag: str, name: str) -> list[Any]:
    """The items of an iterable argument as a list; a failing ``__iter__``/``__len__`` (or no
    iterability) is a ``TypeError`` naming ``tag`` and the argument ``name``."""
    if isinstance(value, list):
        return value
    try:
        return list(value)
    except MemoryError:
        raise
    except Exception as exc:
        raise _refused(f"{tag!r}: {name}", value, "a sequence", exc) from exc


def real_dtype(dtype: np.dtype) -> np.dtype | None:
    """The NumPy dtype an extension numeric dtype is read as, or ``None`` for any other dtype.

    Extension dtypes are those registered outside NumPy whose values NumPy can cast to float64
    exactly: ml_dtypes' ``bfloat16``, ``float8_*``, ``float4_*``, ``int4``... (JAX's, and what a
    torch bfloat16 tensor becomes). They are read as float32 (float64 if float32 cannot hold them).
    """
    if (
        dtype.isbuiltin == 2
        and dtype.fields is None
        and dtype.subdtype is None
        and np.can_cast(dtype, np.float64)
    ):
        return np.dtype(np.float32 if np.can_cast(dtype, np.float32) else np.float64)
    return None


def as_native_array(value: Any, tag: str, name: str | None = None) -> np.ndarray:
    """:func:`as_array`, with an extension numeric dtype (:func:`real_dtype`) read as float."""
    array = as_array(value, tag, name)
    target = real_dtype(array.dtype)
    return array if target is None else array.astype(target)


@dataclass(frozen=True)
class Dtypes:
    """A set of array dtypes an argument accepts, and its name in a refusal.

    ``kinds`` are NumPy's dtype kinds: ``"b"`` bool, ``"i"``/``"u"`` integers, ``"f"`` floats
    of any width and byte order, with extension floats (:func:`real_dtype`) counted as floats;
    ``exact`` names dtypes accepted besides (``"uint8"``); ``expected`` is what a refusal
    (:func:`dtype_error`) says the argument must be.
    """

    kinds: str
    expected: str
    exact: tuple[str, ...] = ()

    def accepts(self, dtype: np.dtype) -> bool:
        """Whether an array of ``dtype`` is accepted."""
        if dtype.kind in "biuf":
            return dtype.kind in self.kinds or dtype.name in self.exact
        return "f" in self.kinds and real_dtype(dtype) is not None


#: Real numbers: bool, integers, floats (extension floats too). Not complex, strings, bytes,
#: dates, durations, objects, structured or raw void dtypes.
REAL = Dtypes("biuf", "numeric (real numbers: bool, int or float)")
#: Real numbers but bool, which TensorFlow's image conversion refuses.
REAL_NOT_BOOL = Dtypes("iuf", "numeric (real numbers: int or float, not bool)")
#: TF1's image summary: uint8, or floats normalised per image.
UINT8_OR_FLOAT = Dtypes("f", "uint8 or float", ("uint8",))


def is_numeric(dtype: np.dtype) -> bool:
    """Whether an array of ``dtype`` holds real numbers (:data:`REAL`): bool, integer, float
    (either byte order, any width) or an extension float (:func:`real_dtype`)."""
    return REAL.accepts(dtype)


def dtype_error(
    dtype: object, name: str, *, tag: str | None = None, accepted: Dtypes = REAL
) -> TypeError:
    """The one refusal of an array's dtype, naming ``tag``, the argument ``name`` and what
    ``accepted`` expects; ``dtype`` is any library's (a torch dtype on a device path too)."""
    return TypeError(
        f"{_who(tag, name)} must be {accepted.expected}, got an array of dtype {dtype}"
    )


def check_numeric(
    array: np.ndarray, name: str, *, tag: str | None = None, accepted: Dtypes = REAL
) -> np.ndarray:
    """The one dtype check of an array argument: ``array`` itself if ``accepted`` (real numbers
    by default) takes its dtype, else :func:`dtype_error`. Extension floats pass unchanged, for
    cores that read them in chunks; :func:`as_numeric_array` converts them."""
    if not accepted.accepts(array.dtype):
        raise dtype_error(array.dtype, name, tag=tag, accepted=accepted)
    return array


def as_data_array(value: Any, tag: str, name: str = "values") -> np.ndarray:
    """The data of a histogram: :func:`as_real_array` (an object array of numbers, which
    tensorboardX and torch take, read as float64), then :func:`check_numeric`. Extension floats
    pass unchanged, for the cores that read them in chunks."""
    return check_numeric(as_real_array(value, tag, name), name, tag=tag)


def as_numeric_array(value: Any, tag: str, name: str) -> np.ndarray:
    """The one conversion for an array argument of real numbers (data, rows, boxes, vertices):
    :func:`as_native_array` (extension floats such as bfloat16 read as float32), then
    :func:`check_numeric`."""
    return check_numeric(as_native_array(value, tag, name), name, tag=tag)


def to_float(value: Any, tag: str, name: str | None = None) -> float:
    """Return a scalar value as a Python float, or raise naming ``tag``.

    Accepts Python and NumPy numbers, 0-d or size-1 arrays and array-likes, and objects with
    ``__float__``. Strings, ``None``, complex numbers and arrays of more than one element raise
    a ``TypeError``/``ValueError`` naming ``tag`` (and the argument ``name``, if given).
    """
    subject = repr(tag) if name is None else f"{tag!r}: {name}"
    if type(value) is float:
        return value
    if isinstance(value, (np.timedelta64, np.datetime64)):  # a duration or date is no value
        raise TypeError(f"{subject}: expected a real number, got {_describe(value)}")
    if isinstance(value, (numbers.Real, np.number, np.bool_)) and not isinstance(
        value, (np.complexfloating, complex)
    ):
        if isinstance(value, np.generic) and not isinstance(
            value, (np.integer, np.floating, np.bool_)
        ):
            raise TypeError(f"{subject}: expected a real number, got {_describe(value)}")
        try:
            return float(value)
        except OverflowError:
            # An int (or Fraction) beyond float64's range: saturate, as beyond float32's.
            return math.inf if value > 0 else -math.inf  # type: ignore[operator]
        except Exception as exc:  # a numbers.Real subclass whose __float__ raises
            raise _refused(subject, value, "a real number", exc) from exc
    if isinstance(value, (str, bytes)) or value is None:
        raise TypeError(f"{subject}: expected a real number, got {_describe(value)}")
    if hasattr(value, "__array__") or isinstance(value, (list, tuple)):
        array = as_array(value, tag, name)
        if array.size != 1 and isinstance(value, (list, tuple)):
            from .compat_errors import ScalarSequenceError  # error paths load it (import time)

            # torch's make_np refuses a list or tuple with NotImplementedError (skorch catches it)
            raise ScalarSequenceError(
                f"{subject}: expected a real number, got a {type(value).__name__} of "
                f"{array.size} values"
            )
        if array.size != 1:
            from .compat_errors import ScalarShapeError

            raise ScalarShapeError(
                f"{subject}: expected a scalar (a single value), "
                f"got an array of shape {array.shape}"
            )
        if array.dtype == object and not isinstance(array.reshape(()).item(), np.ndarray):
            return to_float(array.reshape(()).item(), tag, name)  # np.array(0.5, dtype=object)
        if not is_numeric(array.dtype):
            raise TypeError(
                f"{subject}: expected a real number, got an array of dtype {array.dtype}"
            )
        return float(array.reshape(()))
    if hasattr(value, "__float__") and not isinstance(value, complex):
        try:
            return float(value)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{subject}: expected a real number, got {_describe(value)}") from exc
        except Exception as exc:  # a user's __float__ may raise anything
            raise _refused(subject, value, "a real number", exc) from exc
    from .compat_errors import ScalarTypeError

    raise ScalarTypeError(f"{subject}: expected a real number, got {_describe(value)}")


def to_positive_float(value: Any, tag: str, name: str) -> float:
    """:func:`to_float` for an option that must be positive and finite (fps, rescale, ...)."""
    number = to_float(value, tag, name)
    if not 0 < number < math.inf:
        raise ValueError(f"{tag!r}: {name} must be positive and finite, got {number!r}")
    return number


def check_flag(value: Any, name: str, *, tag: str | None = None) -> bool:
    """The truth of an on/off option, as ``if value:`` reads it; an object whose truth is
    undefined (an array of several values) or raises is a ``TypeError`` naming it."""
    if isinstance(value, bool):
        return value
    try:
        return bool(value)
    except Exception as exc:
        raise _refused(_who(tag, name), value, "True or False", exc) from exc


def check_callback(value: Any, name: str) -> Callable[..., Any] | None:
    """A callable (a progress callback, say), or None."""
    if value is None or callable(value):
        return value  # type: ignore[no-any-return]
    raise TypeError(f"{name} must be a callable or None, got {_describe(value)}")


def to_float32_range(value: float) -> float:
    """Saturate a finite value beyond float32's range to ±inf, as a float32 cast does."""
    if (value >= _FLOAT32_OVERFLOW or value <= -_FLOAT32_OVERFLOW) and math.isfinite(value):
        return math.copysign(math.inf, value)
    return value


def scalar_dict(value: Any, name: str, *, tag: str | None = None) -> list[tuple[str, float]]:
    """The items of a dict of tag -> number (``add_scalars``' ``tag_scalar_dict``,
    ``add_hparams``' ``metric_dict``), in order, each value a float saturated to float32's range
    as ``add_scalar`` stores it; every item is checked before any is returned.

    Raises:
      TypeError: ``value`` is not a mapping, a key is not a str, or a value is not a real number
        (the message names ``tag``, ``name`` and the key).
      ValueError: a value is an array of more than one element.
    """
    who = _who(tag, name)
    if not isinstance(value, Mapping):
        raise TypeError(f"{who} must be a dict of tag -> number, got {type(value).__name__}")
    items = []
    for key, number in value.items():
        key = check_tag(key, f"{who} key")
        subject = key if tag is None else f"{tag}/{key}"
        items.append((key, to_float32_range(to_float(number, subject, f"{name} value"))))
    return items


def check_filename_suffix(value: Any) -> str:
    """An event file name's suffix: a str (``None`` means ``""``) with no path separator or NUL,
    as every writer and sink appends it to its file names verbatim."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise TypeError(f"filename_suffix must be a str, got {type(value).__name__}")
    if "/" in value or "\\" in value or "\0" in value:
        raise ValueError(f"filename_suffix must not contain a path separator or NUL, got {value!r}")
    return value


def to_step(step: Any, tag: str, *, truncate: bool = False) -> int:
    """Return a step as an int64-range Python int.

    Accepts Python ints, NumPy integers, 0-d integer arrays and objects with ``__index__``
    (integer torch tensors). ``bool`` and floats are refused: a float step is almost always a bug
    (``tf.summary`` refuses them too).

    With ``truncate=True``, the rule of torch's and tensorboardX's writers and TF1's
    ``FileWriter``, which store ``int(step)``: anything ``int()`` takes is accepted and converted
    as ``int()`` converts it: floats of any kind (Python, NumPy, 0-d or one-element arrays, float
    torch tensors) are truncated toward zero, ``True`` is 1, ``"3"`` is 3. A NaN, an infinity or
    a string that is not an integer is a ValueError, as it is for ``int()``.
    """
    if truncate and type(step) is not int:
        return _truncated_step(step, tag)
    if type(step) is int:
        value = step
    elif isinstance(step, (bool, np.bool_)):
        raise TypeError(f"{tag!r}: step must be an integer, got a bool ({step!r})")
    elif isinstance(step, (np.timedelta64, np.datetime64)):
        raise TypeError(f"{tag!r}: step must be an integer, got {_describe(step)}")
    elif isinstance(step, (numbers.Integral, np.integer)):
        value = int(step)
    elif isinstance(step, np.ndarray) and step.shape == () and step.dtype.kind in "iu":
        value = int(step)
    elif hasattr(step, "__index__") and not isinstance(step, (float, np.floating)):
        try:
            value = operator.index(step)
        except TypeError as exc:
            raise TypeError(f"{tag!r}: step must be an integer, got {_describe(step)}") from exc
        except Exception as exc:  # a user's __index__ may raise anything
            raise _refused(f"{tag!r}: step", step, "an integer", exc) from exc
    else:
        raise TypeError(f"{tag!r}: step must be an integer, got {_describe(step)}")
    if not INT64_MIN <= value <= INT64_MAX:
        raise ValueError(f"{tag!r}: step {value} is outside the int64 range")
    return value


def _truncated_step(step: Any, tag: str) -> int:
    """``int(step)``, as torch and tensorboardX compute it, with this module's errors."""
    if isinstance(step, (np.timedelta64, np.datetime64)):
        raise TypeError(f"{tag!r}: step must be a number, got {_describe(step)}")
    if isinstance(step, np.ndarray) and step.size == 1 and step.ndim > 0:
        step = step.reshape(())  # int() of a one-element array is deprecated in NumPy
    try:
        value = int(step)
    except (ValueError, OverflowError) as exc:
        raise ValueError(f"{tag!r}: step must be a finite number, got {_describe(step)}") from exc
    except TypeError as exc:
        raise TypeError(f"{tag!r}: step must be a number, got {_describe(step)}") from exc
    except Exception as exc:  # a user's __int__ or __index__ may raise anything
        raise _refused(f"{tag!r}: step", step, "an integer", exc) from exc
    if not INT64_MIN <= value <= INT64_MAX:
        raise ValueError(f"{tag!r}: step {value} is outside the int64 range")
    return value


def to_walltime(walltime: Any, tag: str) -> float:
    """Return ``walltime`` (seconds since the epoch) as a finite float; ``None`` means now."""
    if walltime is None:
        return time.time()
    try:
        value = float(walltime)
    except OverflowError:
        value = math.inf  # an int beyond float64: refused below as not finite
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"{tag!r}: walltime must be a number of seconds, got {_describe(walltime)}"
        ) from exc
    except Exception as exc:  # a user's __float__ may raise anything
        raise _refused(f"{tag!r}: walltime", walltime, "a number of seconds", exc) from exc
    if not math.isfinite(value):
        # TensorBoard's default (Rust) loader stops reading a file at a NaN wall time.
        raise ValueError(f"{tag!r}: walltime must be finite, got {value}")
    return value


def tagged(tag: str, compute: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Call ``compute``; re-raise its TypeError/ValueError with the tag in the message.

    Errors that already name the tag pass unchanged; anything else (say a RuntimeError from a
    broken ``__array__``) propagates as it is.
    """
    try:
        return compute(*args, **kwargs)
    except (TypeError, ValueError) as exc:
        if repr(tag) in str(exc):
            raise
        kind = TypeError if isinstance(exc, TypeError) else ValueError
        raise kind(f"{tag!r}: {exc}") from exc
