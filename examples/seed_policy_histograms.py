"""Per-layer weight, pre-activation and activation histograms of a tanh policy network.

A NumPy port of the network in "Understanding TensorBoard (weight) histograms" (seed 000): four
fully connected layers (tanh, tanh, tanh, softmax) trained with a policy gradient, logging with
the ``tf.summary`` API exactly where the original logged with ``tf.summary``::

    with npsummary.name_scope("layer1"):
        npsummary.histogram("weights", W1)
        npsummary.histogram("layer", layer1)          # pre-activations
        npsummary.histogram("activations", layer1_act)

The task is a contextual bandit generated in code: each observation is a 6x10 "image"; the
rewarded action is 0 when its left half is brighter than its right half, else 1. Weights start
Xavier-uniform (the flat "plateau" the question asks about); as the policy learns, layer 1's
weights spread and the activations move towards ±1 while ``layer4/Qpred`` splits into two
modes. The network has biases, as the accepted answer recommends.

Run:  python examples/seed_policy_histograms.py [--logdir runs/policy] [--steps 500]
Then: tensorboard --logdir runs/policy   (Histograms, Distributions, Scalars, Images tabs)
"""

from __future__ import annotations

import argparse

import numpy as np

import npsummary

INPUT_SHAPE = (6, 10)
INPUT_SIZE = INPUT_SHAPE[0] * INPUT_SHAPE[1]
HIDDEN = 32
OUTPUT = 2


def xavier(rng: np.random.Generator, fan_in: int, fan_out: int) -> np.ndarray:
    """Glorot-uniform initialisation, like ``tf.contrib.layers.xavier_initializer``."""
    limit = np.sqrt(6.0 / (fan_in + fan_out))
    return rng.uniform(-limit, limit, size=(fan_in, fan_out)).astype(np.float32)


def observations(rng: np.random.Generator, batch: int) -> tuple[np.ndarray, np.ndarray]:
    x = rng.uniform(0.0, 1.0, size=(batch, *INPUT_SHAPE)).astype(np.float32)
    best = (x[:, :, :5].mean(axis=(1, 2)) <= x[:, :, 5:].mean(axis=(1, 2))).astype(np.int64)
    return x.reshape(batch, INPUT_SIZE), best


class Adam:
    def __init__(self, params: list[np.ndarray], lr: float) -> None:
        self.params, self.lr, self.t = params, lr, 0
        self.m = [np.zeros_like(p) for p in params]
        self.v = [np.zeros_like(p) for p in params]

    def step(self, grads: list[np.ndarray]) -> None:
        self.t += 1
        for p, g, m, v in zip(self.params, grads, self.m, self.v, strict=True):
            m *= 0.9
            m += 0.1 * g
            v *= 0.999
            v += 0.001 * g * g
            m_hat = m / (1 - 0.9**self.t)
            v_hat = v / (1 - 0.999**self.t)
            p -= self.lr * m_hat / (np.sqrt(v_hat) + 1e-8)


def main(logdir: str, steps: int = 500, batch: int = 64, seed: int = 0) -> dict[str, float]:
    """Train for ``steps`` policy-gradient updates, logging every 10th; return final stats."""
    rng = np.random.default_rng(seed)
    sizes = [(INPUT_SIZE, HIDDEN), (HIDDEN, HIDDEN), (HIDDEN, HIDDEN), (HIDDEN, OUTPUT)]
    weights = [xavier(rng, a, b) for a, b in sizes]
    biases = [np.zeros(b, np.float32) for _, b in sizes]
    optimizer = Adam(weights + biases, lr=1e-3)
    baseline = 0.5
    writer = npsummary.create_file_writer(logdir)
    reward_mean = 0.0
    with writer.as_default():
        for step in range(steps):
            x, best = observations(rng, batch)
            # Forward pass, keeping every layer's pre-activation and activation.
            acts, pres = [x], []
            for i, (w, b) in enumerate(zip(weights, biases, strict=True)):
                pre = acts[-1] @ w + b
                pres.append(pre)
                if i < 3:
                    acts.append(np.tanh(pre))
                else:
                    e = np.exp(pre - pre.max(axis=1, keepdims=True))
                    acts.append(e / e.sum(axis=1, keepdims=True))
            q_pred = acts[-1]
            action = (rng.uniform(size=batch) < q_pred[:, 1]).astype(np.int64)
            y = np.eye(OUTPUT, dtype=np.float32)[action]
            reward = (action == best).astype(np.float32)
            advantages = reward - baseline
            baseline = 0.95 * baseline + 0.05 * float(reward.mean())
            log_lik = -y * np.log(q_pred + 1e-8)
            loss = float(np.mean(np.sum(log_lik * advantages[:, None], axis=1)))

            # Backward pass of loss = mean(sum(-y log softmax(z) * A)).
            grad = (q_pred - y) * advantages[:, None] / batch
            grads_w: list[np.ndarray] = []
            grads_b: list[np.ndarray] = []
            for i in range(3, -1, -1):
                grads_w.insert(0, acts[i].T @ grad)
                grads_b.insert(0, grad.sum(axis=0))
                if i:
                    grad = (grad @ weights[i].T) * (1.0 - acts[i] ** 2)
            optimizer.step(grads_w + grads_b)
            reward_mean = 0.9 * reward_mean + 0.1 * float(reward.mean())

            if step % 10 == 0 or step == steps - 1:
                npsummary.experimental.set_step(step)
                npsummary.image("input", x.reshape(batch, *INPUT_SHAPE, 1), max_outputs=4)
                for i in range(3):
                    with npsummary.name_scope(f"layer{i + 1}"):
                        npsummary.histogram("weights", weights[i])
                        npsummary.histogram("bias", biases[i])
                        npsummary.histogram("layer", pres[i])
                        npsummary.histogram("activations", acts[i + 1])
                with npsummary.name_scope("layer4"):
                    npsummary.histogram("weights", weights[3])
                    npsummary.histogram("Qpred", q_pred)
                npsummary.scalar("Q", float(q_pred.mean()))
                npsummary.scalar("Y", float(y.mean()))
                npsummary.scalar("log_likelihood", float(log_lik.mean()))
                npsummary.scalar("loss", loss)
                npsummary.scalar("reward", reward_mean)
    npsummary.experimental.set_step(None)
    writer.close()
    return {"reward": reward_mean, "loss": loss}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--logdir", default="runs/policy")
    parser.add_argument("--steps", type=int, default=500)
    args = parser.parse_args()
    print(main(args.logdir, steps=args.steps))
