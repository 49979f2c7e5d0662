"""Bad-input errors that are also the exception tensorboardX or torch raises for the same input.

npsummary's rule is that bad input raises ``TypeError`` or ``ValueError`` naming the tag. Code
written for tensorboardX or ``torch.utils.tensorboard`` sometimes catches the type those libraries
raise instead, for example skorch's ``TensorBoard`` callback::

    try:
        self.writer.add_scalar(tag=tag, scalar_value=val, global_step=step)
    except NotImplementedError:  # torch raises it for a list, tuple or dict value
        pass

Each class below is one such case. It derives from npsummary's documented type first and from
the replaced library's type second, so ``except TypeError`` and ``except NotImplementedError``
(or ``except AssertionError``, for the checks tensorboardX and torch make with ``assert``) both
catch it. Nothing else about the error changes: the message still names the tag.
"""

from __future__ import annotations

__all__ = [
    "AudioShapeError",
    "DataformatsError",
    "EmbeddingShapeError",
    "HparamValueTypeError",
    "MarginChartError",
    "MetadataMissingError",
    "MetadataNestingError",
    "ScalarSequenceError",
    "ScalarShapeError",
    "ScalarTypeError",
]


class ScalarTypeError(TypeError, NotImplementedError):
    """A scalar value of a type neither library converts (a list, tuple, dict or other object):
    their ``make_np`` raises ``NotImplementedError``."""


class ScalarSequenceError(ValueError, NotImplementedError, AssertionError):
    """A scalar value given as a list or tuple of several numbers: torch's ``make_np`` raises
    ``NotImplementedError`` for any list or tuple, tensorboardX turns a list into an array and
    checks with ``assert`` that it is 0-d."""


class ScalarShapeError(ValueError, AssertionError):
    """A scalar value holding more than one number: both libraries ``assert`` a 0-d value."""


class EmbeddingShapeError(ValueError, AssertionError):
    """``add_embedding``: ``mat`` not 2-D, metadata, header or label images not matching it,
    non-square label images or a sprite too large; tensorboardX and torch ``assert`` these."""


class MarginChartError(ValueError, AssertionError):
    """A margin chart whose series is not exactly three tags (value, lower, upper)."""


class DataformatsError(ValueError, AssertionError):
    """A ``dataformats`` string that repeats a letter or does not match the array's rank."""


class AudioShapeError(ValueError, AssertionError):
    """Audio that is not ``(L,)``, ``(1, L)`` or ``(L, C)`` with one or two channels."""


class HparamValueTypeError(TypeError, ValueError):
    """A hyperparameter value that is no bool, number or str: torch raises ``ValueError``."""


class MetadataNestingError(RuntimeError, AssertionError):
    """``use_metadata`` entered while another ``use_metadata`` block of the writer is active."""


class MetadataMissingError(ValueError, AssertionError):
    """``use_metadata`` given neither a step nor a wall time."""
