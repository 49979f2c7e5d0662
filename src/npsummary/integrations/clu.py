"""CLU's ``metric_writers`` without TensorFlow.

Change one line::

    # from clu import metric_writers
    from npsummary.integrations import clu as metric_writers

    writer = metric_writers.create_default_writer(workdir)
    writer.write_hparams({"lr": 0.1})
    writer.write_scalars(step, {"loss": loss})

This module has the names of ``clu.metric_writers`` (``MetricWriter``, ``SummaryWriter``,
``create_default_writer``, ``LoggingWriter``, ``MultiWriter``, ``AsyncWriter``,
``AsyncMultiWriter``, ``ensure_flushes``, ``write_values``). Its :class:`SummaryWriter` has
CLU's constructor and every ``MetricWriter`` method and writes the files CLU's TensorFlow
``SummaryWriter`` writes (TF2 tensor summaries); :func:`create_default_writer` has CLU's
signature and combines CLU's own ``LoggingWriter`` / ``MultiWriter`` / ``AsyncMultiWriter``
with it. The other names are CLU's objects.

Why the one line is needed: ``clu.metric_writers`` imports its TensorFlow writer in its
``__init__``, so without TensorFlow the package cannot be imported at all. When this module
is imported before ``clu.metric_writers``, it provides ``clu.metric_writers.summary_writer``
itself (with :class:`SummaryWriter` below), which makes the package importable, with or
without TensorFlow installed, and never imports TensorFlow; ``clu.periodic_actions`` and other
code that does ``from clu import metric_writers`` then work too and write through npsummary.
If ``clu.metric_writers`` was imported earlier (with TensorFlow), it is used as it is.

Without CLU installed, :class:`SummaryWriter` still works (it is then no ``MetricWriter``
subclass); the other names need CLU.

Differences from CLU's ``SummaryWriter``: ``write_pointcloud`` (newer CLU) writes the mesh
plugin's TF2 summaries as ``tensorboard.plugins.mesh.summary_v2.mesh`` does; ``write_videos``
warns once and writes nothing, as CLU's does.

Every process writes, as CLU's writers do through TensorFlow: no rank rule (``RANK``,
``SLURM_PROCID``, ``jax.process_index()``, ... are not read); where processes would log the
same values, pass ``just_logging=jax.process_index() > 0`` to :func:`create_default_writer`, as
CLU's own examples do. ``logdir`` may be a path or any URL npsummary writes (``file://``,
``memory://``, ``s3://``, ...); nothing is created outside it. After ``close()`` the write
methods raise ``RuntimeError`` and ``flush``/``close`` do nothing, as with CLU's TensorFlow
writer.
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import os
import sys
import types
from collections.abc import Mapping
from typing import Any

import numpy as np

import npsummary
from npsummary import hparams as hp

from ._private import every_process_writer, run_path

__all__ = [
    "AsyncMultiWriter",
    "AsyncWriter",
    "LoggingWriter",
    "MetricWriter",
    "MultiWriter",
    "SummaryWriter",
    "create_default_writer",
    "ensure_flushes",
    "write_values",
]

_PACKAGE = "clu.metric_writers"
_logger = logging.getLogger(__name__)


def _load_interface() -> types.ModuleType | None:
    """CLU's ``interface`` module without running ``clu.metric_writers/__init__`` (which needs
    TensorFlow); None when CLU is not installed."""
    package = sys.modules.get(_PACKAGE)
    if package is not None:
        return importlib.import_module(_PACKAGE + ".interface")
    name = _PACKAGE + ".interface"
    if name in sys.modules:
        return sys.modules[name]
    try:
        spec = importlib.util.find_spec(_PACKAGE)
    except ImportError:  # CLU is not installed
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    path = os.path.join(next(iter(spec.submodule_search_locations)), "interface.py")
    module_spec = importlib.util.spec_from_file_location(name, path)
    if module_spec is None or module_spec.loader is None:
        return None
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[name] = module
    try:
        module_spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


_interface = _load_interface()

if _interface is not None:
    _Base: Any = _interface.MetricWriter
else:
    _Base = object


def flatten_dict(d: Mapping[str, Any], prefix: tuple[str, ...] = ()) -> list[tuple[str, Any]]:
    """CLU's flattening for ``write_hparams``: nested mappings and lists/tuples become dotted
    keys (``{"a": [1, {"b": 2}]}`` -> ``a.0``, ``a.1.b``); ``None`` becomes ""."""
    out: list[tuple[str, Any]] = []
    for key, value in d.items():
        if isinstance(value, Mapping) or hasattr(value, "items"):
            out += flatten_dict(value, (*prefix, key))
        elif isinstance(value, (list, tuple)):
            out += flatten_dict({str(i): item for i, item in enumerate(value)}, (*prefix, key))
        else:
            out.append((".".join((*prefix, key)), value if value is not None else ""))
    return out


def _mesh_metadata(
    name: str, content_type: int, components: int, shape: list[int], config: str
) -> Any:
    from npsummary import proto

    content = proto.MeshPluginData(
        version=0,
        name=name,
        content_type=content_type,
        components=components,
        shape=shape,
        json_config=config,
    )
    metadata = proto.SummaryMetadata()
    metadata.plugin_data.plugin_name = "mesh"
    metadata.plugin_data.content = content.SerializeToString()
    return metadata


class SummaryWriter(_Base):  # type: ignore[misc]
    """``MetricWriter`` writing TensorBoard event files into ``logdir`` (CLU's
    ``clu.metric_writers.SummaryWriter``)."""

    def __init__(self, logdir: str | os.PathLike[str]) -> None:
        super().__init__()
        self._summary_writer = every_process_writer(logdir)
        self._warned_videos = False

    def write_summaries(
        self, step: int, values: Mapping[str, Any], metadata: Mapping[str, Any] | None = None
    ) -> None:
        """Write each tensor as a generic summary, with ``metadata[key]`` (a
        ``SummaryMetadata`` proto or its bytes) when given."""
        with self._summary_writer.as_default():
            for key, value in values.items():
                md = metadata.get(key) if metadata is not None else None
                npsummary.write(key, value, step=step, metadata=md)

    def write_scalars(self, step: int, scalars: Mapping[str, Any]) -> None:
        with self._summary_writer.as_default():
            for key, value in scalars.items():
                npsummary.scalar(key, value, step=step)

    def write_images(self, step: int, images: Mapping[str, Any]) -> None:
        """Images ``[N, H, W, C]`` or ``[H, W, C]``; all N are written."""
        with self._summary_writer.as_default():
            for key, value in images.items():
                if np.ndim(value) == 3:
                    value = np.asarray(value)[None]
                npsummary.image(key, value, step=step, max_outputs=max(1, len(value)))

    def write_videos(self, step: int, videos: Mapping[str, Any]) -> None:
        """Not supported, as in CLU's ``SummaryWriter``: warns once, writes nothing."""
        if not self._warned_videos:
            self._warned_videos = True
            _logger.warning("SummaryWriter does not support writing videos.")

    def write_audios(self, step: int, audios: Mapping[str, Any], *, sample_rate: int) -> None:
        """Audio clips ``[N, T, C]`` with values in ``[-1, 1]``; all N are written."""
        with self._summary_writer.as_default():
            for key, value in audios.items():
                npsummary.audio(
                    key, value, sample_rate=sample_rate, step=step, max_outputs=max(1, len(value))
                )

    def write_texts(self, step: int, texts: Mapping[str, str]) -> None:
        with self._summary_writer.as_default():
            for key, value in texts.items():
                npsummary.text(key, value, step=step)

    def write_histograms(
        self,
        step: int,
        arrays: Mapping[str, Any],
        num_buckets: Mapping[str, int] | None = None,
    ) -> None:
        """Histograms with ``num_buckets[key]`` buckets (default 30)."""
        with self._summary_writer.as_default():
            for key, value in arrays.items():
                buckets = None if num_buckets is None else num_buckets.get(key)
                npsummary.histogram(key, value, step=step, buckets=buckets)

    def write_pointcloud(
        self,
        step: int,
        point_clouds: Mapping[str, Any],
        *,
        point_colors: Mapping[str, Any] | None = None,
        configs: Mapping[str, Any] | None = None,
    ) -> None:
        """Point clouds ``[B, N, 3]`` (with colors ``[B, N, 3]`` and a three.js config dict per
        key, both optional) for the mesh plugin: one tensor summary per component, tagged
        ``<key>_VERTEX`` and ``<key>_COLOR``."""
        import json

        with self._summary_writer.as_default():
            for key, vertices in point_clouds.items():
                colors = None if point_colors is None else point_colors.get(key)
                config = None if configs is None else configs.get(key)
                config_json = "{}" if config is None else json.dumps(config, sort_keys=True)
                parts = [(1, "VERTEX", vertices)]  # MeshPluginData.ContentType
                if colors is not None:
                    parts.append((3, "COLOR", colors))
                components = sum(1 << content_type for content_type, _, _ in parts)
                for content_type, label, data in parts:
                    array = np.asarray(data)
                    if array.ndim != 3:
                        raise ValueError(
                            f"write_pointcloud: {key!r}: {label.lower()} must have shape "
                            f"[B, N, 3], got {array.shape}"
                        )
                    md = _mesh_metadata(
                        key, content_type, components, list(array.shape), config_json
                    )
                    npsummary.write(f"{key}_{label}", array, step=step, metadata=md)

    def write_hparams(self, hparams: Mapping[str, Any]) -> None:
        """Hyperparameters (nested mappings flattened to dotted keys) for the HParams
        dashboard."""
        with self._summary_writer.as_default():
            hp.hparams(dict(flatten_dict(hparams)))

    def flush(self) -> None:
        self._summary_writer.flush()

    def close(self) -> None:
        self._summary_writer.close()


def _import_metric_writers() -> types.ModuleType | None:
    """``clu.metric_writers``, made importable without TensorFlow (see the module docstring);
    None when CLU is not installed or its package fails to import for another reason."""
    global _import_error
    if _interface is None:
        return None
    stand_in = None
    if _PACKAGE not in sys.modules:
        stand_in = types.ModuleType(_PACKAGE + ".summary_writer")
        stand_in.__doc__ = "npsummary's SummaryWriter standing in for CLU's TensorFlow one."
        stand_in.SummaryWriter = SummaryWriter  # type: ignore[attr-defined]
        sys.modules.setdefault(stand_in.__name__, stand_in)
    try:
        package = importlib.import_module(_PACKAGE)
    except ImportError as exc:  # a missing dependency of CLU's: SummaryWriter still works
        _import_error = f"{type(exc).__name__}: {exc}"
        if stand_in is not None and sys.modules.get(stand_in.__name__) is stand_in:
            del sys.modules[stand_in.__name__]
        return None
    for child in ("interface", "summary_writer"):
        if not hasattr(package, child) and f"{_PACKAGE}.{child}" in sys.modules:
            setattr(package, child, sys.modules[f"{_PACKAGE}.{child}"])
    return package


_import_error = "CLU is not installed: pip install clu"
_metric_writers = _import_metric_writers()


def create_default_writer(
    logdir: str | os.PathLike[str] | None = None,
    *,
    just_logging: bool = False,
    asynchronous: bool = True,
    collection: str | None = None,
) -> Any:
    """CLU's default writer: a ``LoggingWriter`` plus, with a ``logdir``, a
    :class:`SummaryWriter` into ``logdir`` (``logdir/collection`` with a ``collection``),
    combined in an ``AsyncMultiWriter`` (``MultiWriter`` if not ``asynchronous``).
    ``just_logging`` leaves the SummaryWriter out. Needs CLU."""
    if _metric_writers is None:
        raise ImportError(f"create_default_writer needs clu.metric_writers ({_import_error})")
    mw = _metric_writers
    if just_logging:
        writers = [mw.LoggingWriter(collection=collection)]
    else:
        writers = [mw.LoggingWriter(collection=collection)]
        if logdir is not None:
            path = os.fspath(logdir)
            if collection is not None:
                path = run_path(path, collection)
            writers.append(SummaryWriter(path))
    if asynchronous:
        return mw.AsyncMultiWriter(writers)
    return mw.MultiWriter(writers)


_CLU_NAMES = (
    "AsyncMultiWriter",
    "AsyncWriter",
    "LoggingWriter",
    "MetricWriter",
    "MultiWriter",
    "ensure_flushes",
    "write_values",
)

# CLU's own writers and helpers, re-exported.
if _metric_writers is not None:
    AsyncMultiWriter = _metric_writers.AsyncMultiWriter
    AsyncWriter = _metric_writers.AsyncWriter
    LoggingWriter = _metric_writers.LoggingWriter
    MetricWriter = _metric_writers.MetricWriter
    MultiWriter = _metric_writers.MultiWriter
    ensure_flushes = _metric_writers.ensure_flushes
    write_values = _metric_writers.write_values


def __getattr__(name: str) -> Any:
    if name in _CLU_NAMES:  # only reached without CLU
        raise ImportError(f"{name} is CLU's, from clu.metric_writers ({_import_error})")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
