"""The logging programs behind the integration golden files, run twice: by ``gen_golden.py``
with the originals on TensorFlow 2.21 (Keras's callback, TensorBoard's ``hp`` API, Flax's and
CLU's writers, optuna-integration's callback), and by the tests with npsummary's stand-ins.

Every program takes the library objects it drives as arguments, so the same code writes both
logdirs. Everything that reaches a file is deterministic except wall times, the start/end
times the HParams API stamps (the comparison ignores those fields) and the steps-per-second
values Keras measures (compared by tag and step only).

The Keras model is built so that training is exact in float32 on any backend: constant
initializers, inputs and targets that are small dyadic rationals, and an SGD learning rate of
1/8, so every loss, metric and weight is the same bit for bit on JAX, torch and TensorFlow.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

# -- TensorBoard's HParams API ---------------------------------------------------------------


def hparams_api(hp: Any, summary: Any, logdir: str) -> dict[str, Any]:
    """``hparams_config`` with every domain kind and metric field, three trials (HParam and
    str keys, NumPy values, explicit and hashed trial ids), and the protos the ``*_pb``
    functions return (as dicts, for the comparison)."""
    lr = hp.HParam(
        "lr", hp.RealInterval(0.001, 0.1), display_name="learning rate", description="SGD step"
    )
    units = hp.HParam("units", hp.IntInterval(2, 8))
    optimizer = hp.HParam("optimizer", hp.Discrete(["sgd", "adam"]))
    batch_norm = hp.HParam("batch_norm", hp.Discrete([True, False]))
    dropout = hp.HParam("dropout", hp.Discrete([0.2, 0.1]), description="*rate*")
    seed = hp.HParam("seed")
    empty = hp.HParam("empty", hp.Discrete([], dtype=int))
    metrics = [
        hp.Metric(
            "loss",
            group="validation",
            display_name="validation loss",
            description="mean squared error",
            dataset_type=hp.Metric.VALIDATION,
        ),
        hp.Metric("acc", group="train", dataset_type=hp.Metric.TRAINING),
        hp.Metric("score"),
    ]
    with summary.create_file_writer(logdir).as_default():
        wrote_config = hp.hparams_config(
            hparams=[lr, units, optimizer, batch_norm, dropout, seed, empty],
            metrics=metrics,
            time_created_secs=1_700_000_000.25,
        )
    trials = [
        ({lr: 0.01, units: 4, optimizer: "sgd", batch_norm: True, dropout: 0.1, seed: 7}, "t0"),
        (
            {
                "lr": np.float32(0.05),
                "units": np.int64(8),
                "optimizer": "adam",
                "batch_norm": np.bool_(False),
                "dropout": 0.2,
                "seed": "abc",
            },
            None,
        ),
        ({lr: 0.1, "units": 2}, None),
    ]
    wrote = []
    for i, (values, trial_id) in enumerate(trials):
        with summary.create_file_writer(os.path.join(logdir, f"trial-{i}")).as_default():
            wrote.append(bool(hp.hparams(values, trial_id=trial_id, start_time_secs=1234.5 + i)))
            summary.scalar("score", 0.5 + i / 4, step=1)
        with summary.create_file_writer(
            os.path.join(logdir, f"trial-{i}", "validation")
        ).as_default():
            summary.scalar("loss", 1.0 - i / 8, step=1)
    # Without a default writer nothing is written and False is returned.
    wrote.append(bool(hp.hparams({"lr": 0.5})))
    return {
        "wrote_config": bool(wrote_config),
        "wrote": wrote,
        "hparams_pb": summary_dict(hp.hparams_pb({lr: 0.5, "x": "y"}, start_time_secs=9.0)),
        "hparams_pb_hashed": summary_dict(hp.hparams_pb({"b": True, "a": 3}, start_time_secs=1.0)),
        "hparams_config_pb": summary_dict(
            hp.hparams_config_pb([lr, units, seed], metrics[:1], time_created_secs=2.0)
        ),
    }


def summary_dict(summary: Any) -> dict[str, Any]:
    """A ``Summary`` of hparams plugin values as plain data: the tag, the metadata and the
    tensor, with the plugin content decoded as ``HParamsPluginData``."""
    from google.protobuf import json_format

    out = []
    for value in summary.value:
        entry = json_format.MessageToDict(value, preserving_proto_field_name=True)
        content = value.metadata.plugin_data.content
        entry["metadata"]["plugin_data"].pop("content", None)
        entry["content"] = hparams_content(content)
        out.append(entry)
    return {"value": out}


def hparams_content(content: bytes) -> dict[str, Any]:
    """``HParamsPluginData`` bytes as a dict (TensorBoard's proto class when TensorBoard is
    installed, else npsummary's; both name every field alike)."""
    from google.protobuf import json_format

    try:
        from tensorboard.plugins.hparams import plugin_data_pb2

        message: Any = plugin_data_pb2.HParamsPluginData.FromString(content)
    except ImportError:
        from npsummary import proto

        message = proto.HParamsPluginData.FromString(content)
    return dict(json_format.MessageToDict(message, preserving_proto_field_name=True))


# -- Keras 3 -----------------------------------------------------------------------------------

X = (np.arange(48, dtype=np.float32).reshape(12, 4) % 5) / 4
Y = (X @ np.array([[1.0], [-0.5], [0.25], [0.0]], dtype=np.float32)).astype(np.float32)
X_VAL, Y_VAL = X[:4] / 2, Y[:4]
TOKENS = (np.arange(24).reshape(8, 3) % 6).astype(np.int32)
TOKEN_Y = (TOKENS.sum(axis=1, keepdims=True) / 8).astype(np.float32)
HPARAMS = {"units": 3, "optimizer": "sgd", "lr": 0.125}


def dense_model(keras: Any) -> Any:
    keras.backend.clear_session()  # layer and model names must not depend on earlier models
    model = keras.Sequential(
        [
            keras.Input((4,), name="features"),
            keras.layers.Dense(
                3,
                activation="relu",
                kernel_initializer=keras.initializers.Constant(0.25),
                bias_initializer=keras.initializers.Constant(0.125),
                name="hidden",
            ),
            keras.layers.Dense(
                1,
                kernel_initializer=keras.initializers.Constant(-0.5),
                bias_initializer="zeros",
                name="out",
            ),
        ],
        name="tiny",
    )
    model.compile(optimizer=keras.optimizers.SGD(0.125), loss="mse", metrics=["mae"])
    return model


def keras_epoch(keras: Any, tensorboard: Any, keras_callback: Any, logdir: str) -> None:
    """Epoch-level logging with weight histograms and images, the model summary, validation
    data, a later ``evaluate``, and the HParams Keras callback in the same fit."""
    model = dense_model(keras)
    callbacks = [
        tensorboard(logdir, histogram_freq=1, write_images=True, write_graph=True),
        keras_callback(logdir, HPARAMS, trial_id="keras-trial"),
    ]
    model.fit(
        X,
        Y,
        batch_size=4,
        epochs=2,
        validation_data=(X_VAL, Y_VAL),
        callbacks=callbacks,
        verbose=0,
        shuffle=False,
    )
    model.evaluate(X_VAL, Y_VAL, batch_size=2, callbacks=[tensorboard(logdir)], verbose=0)


def keras_batch(keras: Any, tensorboard: Any, logdir: str) -> None:
    """Batch-level logging (``update_freq=2``) with steps per second, no model summary, and
    validation at every epoch; histograms every second epoch."""
    model = dense_model(keras)
    callback = tensorboard(
        logdir,
        update_freq=2,
        write_steps_per_second=True,
        write_graph=False,
        histogram_freq=2,
    )
    model.fit(
        X,
        Y,
        batch_size=2,
        epochs=3,
        validation_data=(X_VAL, Y_VAL),
        callbacks=[callback],
        verbose=0,
        shuffle=False,
    )


def keras_update_batch(keras: Any, tensorboard: Any, logdir: str) -> None:
    """``update_freq="batch"``: every batch's metrics, no histograms, no model summary."""
    model = dense_model(keras)
    callback = tensorboard(logdir, update_freq="batch", write_graph=False)
    model.fit(
        X,
        Y,
        batch_size=4,
        epochs=2,
        validation_data=(X_VAL, Y_VAL),
        callbacks=[callback],
        verbose=0,
        shuffle=False,
    )


def keras_embeddings(keras: Any, tensorboard: Any, logdir: str) -> list[str]:
    """``embeddings_freq`` with per-layer metadata; returns the files Keras wrote."""
    keras.backend.clear_session()
    model = keras.Sequential(
        [
            keras.Input((3,), dtype="int32", name="tokens"),
            keras.layers.Embedding(
                6, 2, embeddings_initializer=keras.initializers.Constant(0.5), name="emb"
            ),
            keras.layers.Flatten(name="flat"),
            keras.layers.Dense(1, kernel_initializer="ones", name="head"),
        ],
        name="embedder",
    )
    model.compile(optimizer=keras.optimizers.SGD(0.125), loss="mse")
    callback = tensorboard(logdir, embeddings_freq=1, embeddings_metadata={"emb": "tokens.tsv"})
    model.fit(
        TOKENS, TOKEN_Y, batch_size=4, epochs=2, callbacks=[callback], verbose=0, shuffle=False
    )
    return sorted(
        os.path.relpath(os.path.join(root, name), logdir)
        for root, _, names in os.walk(logdir)
        for name in names
        if "tfevents" not in name
    )


# -- Flax --------------------------------------------------------------------------------------

RNG = np.random.default_rng(5)
IMAGE_HW = RNG.random((6, 5)).astype(np.float32)
IMAGES_KHW3 = RNG.integers(0, 256, (2, 4, 3, 3)).astype(np.uint8)
IMAGES_KHW = RNG.random((4, 5, 6)).astype(np.float32)
AUDIO = np.sin(np.linspace(0, 40, 2 * 800 * 1)).reshape(2, 800, 1).astype(np.float32) * 1.5
VALUES = RNG.standard_normal(200)


def flax_writer(writer_class: Any, logdir: str) -> None:
    """Every method of ``flax.metrics.tensorboard.SummaryWriter``."""
    writer = writer_class(logdir)
    for step in range(3):
        writer.scalar("train/loss", 1.0 / (step + 1), step)
        writer.scalar("train/np", np.float32(step) / 3, step)
    writer.image("img/hw", IMAGE_HW, 1)
    writer.image("img/khw3", IMAGES_KHW3, 1)
    writer.image("img/khw", IMAGES_KHW, 2, max_outputs=2)
    writer.audio("sound", AUDIO, 1, sample_rate=8000, max_outputs=1)
    writer.histogram("weights", VALUES.reshape(10, 20), 1)
    writer.histogram("weights_bins", VALUES, 2, bins=7)
    writer.text("notes", "**bold** step", 1)
    writer.text("bytes", b"raw bytes", 2)
    writer.write("custom", np.arange(6, dtype=np.int32).reshape(2, 3), 3)
    writer.hparams(
        {
            "lr": 0.5,
            "model": {"depth": 3, "act": "relu", "norm": {"eps": 1e-5}},
            "flag": True,
            "shape": (2, 3),
            "np": np.float64(0.25),
        }
    )
    writer.flush()
    no_flush = writer_class(os.path.join(logdir, "no_flush"), auto_flush=False)
    no_flush.scalar("x", 2.0, 0)
    no_flush.close()
    writer.close()


# -- CLU ---------------------------------------------------------------------------------------

CLU_HPARAMS = {"lr": 0.1, "model": {"layers": [64, 32], "act": "gelu"}, "seed": None}


def clu_summary_writer(metric_writers: Any, logdir: str) -> None:
    """Every ``MetricWriter`` method of CLU's ``SummaryWriter`` (``write_pointcloud`` is in
    :func:`mesh_pointcloud`: the CLU release on PyPI predates it)."""
    from npsummary import proto as np_proto

    writer = metric_writers.SummaryWriter(logdir)
    writer.write_hparams(CLU_HPARAMS)
    for step in range(3):
        writer.write_scalars(step, {"loss": 1.0 / (step + 1), "acc": np.float32(step / 4)})
    writer.write_images(1, {"one": IMAGES_KHW3[0], "batch": IMAGES_KHW3})
    writer.write_images(2, {"float": IMAGE_HW[None, :, :, None].repeat(3, -1)})
    writer.write_videos(1, {"ignored": np.zeros((1, 2, 3, 3, 3), np.uint8)})
    writer.write_audios(1, {"sound": AUDIO}, sample_rate=8000)
    writer.write_texts(1, {"note": "hello *world*"})
    writer.write_histograms(1, {"h": VALUES, "h7": VALUES}, num_buckets={"h7": 7})
    writer.write_histograms(2, {"h": VALUES / 2})
    metadata = np_proto.SummaryMetadata()
    metadata.plugin_data.plugin_name = "custom_plugin"
    metadata.plugin_data.content = b"\x01\x02"
    writer.write_summaries(
        3,
        {"raw": np.arange(4, dtype=np.float64), "meta": np.ones((2, 2), np.int32)},
        metadata={"meta": metadata.SerializeToString()},
    )
    writer.flush()
    writer.close()


def clu_default_writer(metric_writers: Any, logdir: str) -> None:
    """``create_default_writer`` (asynchronous, and synchronous with a collection) and
    ``write_values`` through it."""
    writer = metric_writers.create_default_writer(logdir)
    writer.write_hparams({"batch": 32})
    for step in range(1, 4):
        writer.write_scalars(step, {"loss": 2.0 / step})
    writer.write_histograms(2, {"w": VALUES})
    writer.flush()
    writer.close()
    sync = metric_writers.create_default_writer(logdir, asynchronous=False, collection="eval")
    sync.write_scalars(5, {"accuracy": 0.75})
    sync.write_texts(5, {"verdict": "good"})
    sync.close()
    just_logging = metric_writers.create_default_writer(logdir, just_logging=True)
    just_logging.write_scalars(6, {"nothing": 1.0})
    just_logging.close()


POINTS = RNG.standard_normal((1, 5, 3)).astype(np.float32)
POINT_COLORS = RNG.integers(0, 256, (1, 5, 3)).astype(np.uint8)
POINT_CONFIG = {"material": {"cls": "PointsMaterial", "size": 0.2}}


def clu_pointcloud_calls() -> list[tuple[int, dict[str, Any], dict[str, Any], dict[str, Any]]]:
    """``write_pointcloud(step, point_clouds, point_colors=..., configs=...)`` calls."""
    return [
        (1, {"cloud": POINTS}, {"cloud": POINT_COLORS}, {"cloud": POINT_CONFIG}),
        (2, {"bare": POINTS * 2}, {}, {}),
    ]


# -- Optuna ------------------------------------------------------------------------------------

OPTUNA_TRIALS: list[dict[str, float | str | bool]] = [
    {"lr": 0.01, "layers": 2, "opt": "adam", "momentum": True},
    {"lr": 0.05, "layers": 4, "opt": "sgd", "momentum": False},
    {"lr": 0.002, "layers": 3, "opt": "adam", "momentum": True},
]


def optuna_study(optuna: Any, callback: Any, logdir: str) -> list[float | None]:
    """A study of three enqueued trials (fixed parameters whatever the sampler) and one that
    is pruned; returns the trial values."""
    optuna.logging.set_verbosity(optuna.logging.WARNING)

    def objective(trial: Any) -> float:
        lr: float = trial.suggest_float("lr", 1e-3, 1e-1, log=True)
        layers = trial.suggest_int("layers", 1, 4)
        opt: str = trial.suggest_categorical("opt", ["adam", "sgd"])
        momentum = trial.suggest_categorical("momentum", [True, False])
        if trial.number == 3:
            raise optuna.TrialPruned()
        return float(layers) * 0.25 + (0.5 if momentum else 0.0) + lr + (opt == "sgd")

    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    for params in [*OPTUNA_TRIALS, OPTUNA_TRIALS[0]]:
        study.enqueue_trial(params)
    study.optimize(objective, n_trials=4, callbacks=[callback(logdir, "score")])
    return [trial.value for trial in study.trials]
