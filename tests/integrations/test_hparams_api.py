"""``npsummary.hparams``: TensorBoard's HParams API (``tensorboard.plugins.hparams.api``)
without TensorFlow, compared with the golden files TensorBoard 2.21's API wrote through
TensorFlow 2.21 (``golden_tf/gen_golden.py``). Needs only tensorboard to read them back."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

import npsummary
from integrations._golden import assert_same_logdir, golden, observations
from integrations.golden_tf import programs
from npsummary import hparams as hp

pytestmark = pytest.mark.tf_free


def test_same_files_and_protos_as_tensorboard(tmp_path: Path) -> None:
    logdir = tmp_path / "logs"
    result = programs.hparams_api(hp, npsummary, str(logdir))
    # Every time is given explicitly, so the start/creation times are compared too.
    assert_same_logdir(logdir, golden("hparams_api"), hparams_times=True)
    assert result == observations("hparams_api")


def test_returns_false_without_writer_and_when_not_recording(tmp_path: Path) -> None:
    assert hp.hparams({"a": 1}) is False
    assert hp.hparams_config([hp.HParam("a")], []) is False
    writer = npsummary.create_file_writer(str(tmp_path))
    with writer.as_default(), npsummary.record_if(False):
        assert hp.hparams({"a": 1}) is False
    with writer.as_default():
        assert hp.hparams({"a": 1}) is True
    writer.close()


def test_hashed_group_name_and_default_time() -> None:
    import hashlib
    import time

    before = time.time()
    pb = hp.hparams_pb({"b": np.float32(0.5), hp.HParam("a"): np.int32(2)})
    (value,) = pb.value
    from npsummary import proto

    start = proto.HParamsPluginData.FromString(value.metadata.plugin_data.content)
    start = start.session_start_info
    expected = hashlib.sha256(b'{"a":2,"b":0.5}').hexdigest()
    assert start.group_name == expected
    assert before <= start.start_time_secs <= time.time()
    assert dict(start.hparams)["a"].number_value == 2


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: hp.IntInterval(1.0, 2), TypeError, "min_value must be an int"),
        (lambda: hp.IntInterval(3, 2), ValueError, "3 > 2"),
        (lambda: hp.RealInterval(1, 2.0), TypeError, "min_value must be a float"),
        (lambda: hp.RealInterval(0.0, 2), TypeError, "max_value must be a float"),
        (lambda: hp.Discrete([]), ValueError, "Empty domain"),
        (lambda: hp.Discrete([1, "a"]), TypeError, "dtype mismatch"),
        (lambda: hp.Discrete([1j]), ValueError, "Unknown dtype"),
        (
            lambda: hp.HParam("x", domain=[1, 2]),  # type: ignore[arg-type]
            ValueError,
            "not a domain",
        ),
        (lambda: hp.Metric("m", dataset_type=7), ValueError, "invalid dataset type"),
        (lambda: hp.hparams_pb({"a": [1]}), TypeError, "unsupported type"),
        (lambda: hp.hparams_pb({"a": 1, hp.HParam("a"): 2}), ValueError, "multiple values"),
        (
            lambda: hp.hparams_pb({"a": 1}, trial_id=3),  # type: ignore[arg-type]
            TypeError,
            "trial_id",
        ),
        (lambda: hp.hparams_pb([("a", 1)]), TypeError, "dict"),  # type: ignore[arg-type]
        (
            lambda: hp.hparams_config_pb(["a"], []),  # type: ignore[list-item]
            TypeError,
            "HParam objects",
        ),
        (
            lambda: hp.hparams_config_pb([], ["m"]),  # type: ignore[list-item]
            TypeError,
            "Metric objects",
        ),
    ],
)
def test_bad_input_raises_type_or_value_error(call: object, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        call()  # type: ignore[operator]


def test_bad_input_writes_nothing(tmp_path: Path) -> None:
    writer = npsummary.create_file_writer(str(tmp_path))
    with writer.as_default():
        with pytest.raises(TypeError):
            hp.hparams({"a": object()})
        assert hp.hparams({"a": 1}) is True  # the writer stays usable
    writer.close()
    from integrations._golden import read_runs

    (groups,) = read_runs(tmp_path).values()
    assert list(groups) == [("_hparams_/session_start_info", 0)]


def test_domains_sample_and_describe() -> None:
    rng = random.Random(0)
    assert 2 <= hp.IntInterval(2, 4).sample_uniform(rng) <= 4
    assert 0.5 <= hp.RealInterval(0.5, 0.75).sample_uniform(rng) <= 0.75
    assert hp.Discrete(["b", "a"]).values == ["a", "b"]
    assert hp.Discrete(["b", "a"]).sample_uniform(rng) in ("a", "b")
    assert str(hp.Discrete([2, 1])) == "{1, 2}"
    assert repr(hp.IntInterval(1, 2)) == "IntInterval(1, 2)"
    assert str(hp.HParam("lr", hp.RealInterval(0.0, 1.0))) == "<HParam 'lr': [0.0, 1.0]>"
    assert repr(hp.HParam("lr", display_name="LR")) == "HParam(name='lr', display_name='LR')"
    assert hp.Discrete([], dtype=bool).dtype is bool


def test_import_is_light() -> None:
    import subprocess
    import sys

    code = (
        "import sys, npsummary.hparams, npsummary.integrations.flax;"
        "heavy = {'tensorflow', 'keras', 'jax', 'torch', 'optuna', 'clu', 'flax'};"
        "heavy &= set(sys.modules);"
        "assert not heavy, heavy"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_comparison_sees_a_changed_value(tmp_path: Path) -> None:
    """The golden comparison is not vacuous: one scalar off by one float32 step fails it."""

    class Nudged:
        def __getattr__(self, name: str) -> object:
            return getattr(npsummary, name)

        @staticmethod
        def scalar(name: str, data: float, step: int) -> bool:
            if data == 0.75:
                data = float(np.nextafter(np.float32(data), np.float32(1)))
            return npsummary.scalar(name, data, step=step)

    programs.hparams_api(hp, Nudged(), str(tmp_path))
    with pytest.raises(AssertionError, match="run 'trial-1' tag 'score' step 1"):
        assert_same_logdir(tmp_path, golden("hparams_api"), hparams_times=True)
