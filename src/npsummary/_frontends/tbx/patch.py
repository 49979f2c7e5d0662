"""``npsummary.patch()``: make frameworks that build their own writer use npsummary's.

In the spirit of ``wandb.tensorboard.patch()``: after ``patch()``, ``torch.utils.tensorboard.
SummaryWriter`` resolves to :class:`npsummary.SummaryWriter` (torch's files) and
``tensorboardX.SummaryWriter`` to :class:`npsummary.TensorboardXSummaryWriter` (tensorboardX's
run and tag names), both on the packages and in every already imported module that bound the
original class to a name (``from torch.utils.tensorboard import SummaryWriter`` at the top of a
framework module, as stable-baselines3 does). ``unpatch()`` restores exactly what ``patch()``
replaced.
"""

from __future__ import annotations

import functools
import importlib
import sys
import threading
from typing import Any

__all__ = ["patch", "unpatch"]

_REPLACED_MODULES = (
    "torch.utils.tensorboard",
    "torch.utils.tensorboard.writer",
    "tensorboardX",
    "tensorboardX.writer",
)
_lock = threading.Lock()
# (module, attribute name, original value), in the order they were replaced.
_replaced: list[tuple[Any, str, Any]] = []


def _originals() -> list[Any]:
    out = []
    for name in _REPLACED_MODULES:
        try:
            module = importlib.import_module(name)
        except Exception:  # not installed, or its own imports fail (torch without tensorboard)
            continue
        cls = getattr(module, "SummaryWriter", None)
        if isinstance(cls, type) and cls not in out:
            out.append(cls)
    return out


# Module-level builders (and tensorboardX's GlobalSummaryWriter): module -> which table of
# npsummary's replaces its names.
_BUILDER_MODULES = (
    ("tensorboardX.summary", "TENSORBOARDX_BUILDERS"),
    ("torch.utils.tensorboard.summary", "TORCH_BUILDERS"),
    ("tensorboardX", "TENSORBOARDX_GLOBALS"),
    ("tensorboardX.global_writer", "TENSORBOARDX_GLOBALS"),
)
# Their own packages keep the originals: their writers need their own Summary protos.
_OWN_PACKAGES = ("tensorboardX", "torch", "npsummary")


def _returning_their_class(ours: Any, summary_class: Any) -> Any:
    """``ours`` returning the library's own ``Summary`` class (``tensorboardX.proto`` or
    TensorBoard's ``compat.proto``) instead of npsummary's, so code that compares or combines
    the result with the library's messages sees the type it expects. Only the patched names
    get these wrappers; :mod:`npsummary.torch_summary` and :mod:`npsummary.tensorboardx_summary`
    keep returning npsummary's class."""
    if not isinstance(summary_class, type) or not hasattr(summary_class, "FromString"):
        return ours

    @functools.wraps(ours)
    def builder(*args: Any, **kwargs: Any) -> Any:
        result = ours(*args, **kwargs)
        if isinstance(result, tuple):  # hparams: (experiment, session start, session end)
            return tuple(summary_class.FromString(part.SerializeToString()) for part in result)
        return summary_class.FromString(result.SerializeToString())

    builder.__npsummary_builder__ = True  # type: ignore[attr-defined]
    return builder


def _patch_builders() -> list[str]:
    """Bind npsummary's builders on the libraries' summary modules and wherever another module
    imported those functions (``from torch.utils.tensorboard.summary import hparams``)."""
    from . import builders

    patched = []
    for module_name, table_name in _BUILDER_MODULES:
        try:
            source = importlib.import_module(module_name)
        except Exception:  # not installed, or torch without tensorboard
            continue
        table = getattr(builders, table_name, None)
        if table is None:  # TENSORBOARDX_GLOBALS
            from .global_writer import GlobalSummaryWriter

            table = {"GlobalSummaryWriter": GlobalSummaryWriter}
        else:
            summary_class = source.__dict__.get("Summary")
            table = {name: _returning_their_class(f, summary_class) for name, f in table.items()}
        replacements = {}  # id(original) -> (original, ours)
        for name, ours in table.items():
            original = source.__dict__.get(name)
            already = original is ours or getattr(original, "__npsummary_builder__", False)
            if callable(original) and not already:
                replacements[id(original)] = (original, ours)
                _replaced.append((source, name, original))
                setattr(source, name, ours)
                patched.append(f"{module_name}.{name}")
        if not replacements:
            continue
        for module in list(sys.modules.values()):
            namespace = getattr(module, "__dict__", None)
            name = getattr(module, "__name__", "") or ""
            if not isinstance(namespace, dict) or name.split(".")[0] in _OWN_PACKAGES:
                continue
            for attribute, current in list(namespace.items()):
                hit = replacements.get(id(current))
                if hit is not None and hit[0] is current:
                    _replaced.append((module, attribute, current))
                    setattr(module, attribute, hit[1])
                    patched.append(f"{name}.{attribute}")
    return patched


def patch() -> list[str]:
    """Make torch's ``SummaryWriter`` resolve to :class:`npsummary.SummaryWriter` and
    tensorboardX's to :class:`npsummary.TensorboardXSummaryWriter`.

    The module-level builders of ``tensorboardX.summary`` and ``torch.utils.tensorboard.summary``
    (``scalar``, ``histogram``, ``image``, ``hparams``, ``tensor_proto``, ...) are replaced by
    those of :mod:`npsummary.tensorboardx_summary` and :mod:`npsummary.torch_summary`, on those
    modules and wherever another module imported them (the libraries' own modules keep theirs);
    patched, they return the library's own ``Summary`` class (the same fields, parsed from
    npsummary's bytes), so ``==`` against the library's messages holds.

    Returns:
      The ``module.name`` names that now refer to npsummary's writers or builders by this call
      (empty when neither torch's tensorboard module nor tensorboardX is installed, or when
      everything was patched already). Calling ``patch()`` again is harmless.
    """
    from .flavours import TensorboardXSummaryWriter
    from .summary_writer import SummaryWriter

    ours = (SummaryWriter, TensorboardXSummaryWriter)
    with _lock:
        # After a first patch() the packages name npsummary's classes; the originals they
        # replaced are still looked for, in modules imported since.
        originals = [c for c in _originals() if c not in ours]
        originals += [
            c for _, _, c in _replaced if isinstance(c, type) and all(c is not o for o in originals)
        ]
        patched = _patch_builders()
        for module in list(sys.modules.values()):
            if not originals:
                break
            namespace = getattr(module, "__dict__", None)
            name = getattr(module, "__name__", "")
            if not isinstance(namespace, dict) or name.startswith("npsummary"):
                continue
            # Any name, so aliases (``import SummaryWriter as TBWriter``) are found too.
            for attribute, current in list(namespace.items()):
                # Identity only: touching attributes of arbitrary module globals can warn.
                if any(current is cls for cls in originals):
                    _replaced.append((module, attribute, current))
                    from_tbx = getattr(current, "__module__", "").startswith("tensorboardX")
                    setattr(module, attribute, ours[1] if from_tbx else ours[0])
                    patched.append(f"{name}.{attribute}")
        return sorted(patched)


def unpatch() -> None:
    """Undo :func:`patch`: every replaced name gets its original class or function back."""
    with _lock:
        while _replaced:
            module, attribute, original = _replaced.pop()
            setattr(module, attribute, original)
