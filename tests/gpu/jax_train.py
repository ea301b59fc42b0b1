"""jax_train.py - a small JAX training loop for the GPU machine: an MLP,
jit-compiled step (forward, grad, SGD update), a host-side batch maker
with a known cost (make_batch: numpy, ~3 ms), STEPS steps. Prints the
final loss (rounded) so that runs with and without a profiler compare.
    python3 tests/gpu/jax_train.py --steps 50
"""
import argparse
import time

import numpy as np
import jax
import jax.numpy as jnp


def init(key, sizes):
    params = []
    for a, b in zip(sizes[:-1], sizes[1:]):
        key, k = jax.random.split(key)
        params.append((jax.random.normal(k, (a, b)) / np.sqrt(a), jnp.zeros(b)))
    return params


def forward(params, x):
    for w, b in params[:-1]:
        x = jax.nn.relu(x @ w + b)
    w, b = params[-1]
    return x @ w + b


def loss_fn(params, x, y):
    return jnp.mean((forward(params, x) - y) ** 2)


@jax.jit
def train_step(params, x, y):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    params = jax.tree_util.tree_map(lambda p, g: p - 1e-3 * g, params, grads)
    return params, loss


def make_batch(rng, n, d):
    # the host's share of a step: spins ~3 ms of CPU, as a data loader would
    end = time.process_time() + 0.003
    x = rng.standard_normal((n, d)).astype(np.float32)
    while time.process_time() < end:
        x = x * 1.0
    return x, x[:, :16] * 0.5


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=50)
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    params = init(jax.random.PRNGKey(0), [512, 1024, 1024, 16])
    loss = None
    for _ in range(a.steps):
        x, y = make_batch(rng, 256, 512)
        params, loss = train_step(params, x, y)
    print("loss %.3f" % float(loss))


if __name__ == "__main__":
    main()
