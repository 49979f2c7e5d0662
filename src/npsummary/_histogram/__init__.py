"""Exact, streaming histogram cores for TensorBoard's three histogram flavours.

Pure functions: arrays in, arrays and small dataclasses out, with bounded extra memory whatever
the input size. They never know a tag and never warn about data: what a caller must tell the
user (non-finite values left out, bins grouped) is recorded on the result. TF1 and TF2 buckets
of large inputs (about 1e6 values or more) are counted with one short-lived second thread when
a second CPU is free; it has ended when the function returns, and results are the same.

* :mod:`._results` — result types (:class:`LegacyHistogram`, :class:`NonFinite`,
  :class:`VariableStats`) and TF1's bucket limits;
* :mod:`._source` — streaming input: validation, chunking, work dtypes, statistics;
* :mod:`.tf1` — TF1 exponential buckets (:func:`tf1_histogram`, :func:`variable_stats`);
* :mod:`.tf2` — TF2 equal-width buckets (:func:`tf2_buckets`);
* :mod:`.tbx` — tensorboardX's ``np.histogram`` bins (:func:`binned_histogram`);
* :mod:`.bin_rules` — NumPy's bin-rule strings, exact and streamed.
"""

from __future__ import annotations

from ._results import TF1_BUCKET_LIMITS, LegacyHistogram, NonFinite, VariableStats
from .bin_rules import RULE_NAMES
from .tbx import RULE_BIN_CAP, binned_histogram
from .tf1 import tf1_histogram, variable_stats
from .tf2 import DEFAULT_BUCKET_COUNT, tf2_buckets

__all__ = [
    "DEFAULT_BUCKET_COUNT",
    "RULE_BIN_CAP",
    "RULE_NAMES",
    "TF1_BUCKET_LIMITS",
    "LegacyHistogram",
    "NonFinite",
    "VariableStats",
    "binned_histogram",
    "tf1_histogram",
    "tf2_buckets",
    "variable_stats",
]
