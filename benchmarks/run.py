"""Ratio benchmarks of refjax against JAX and NumPy, printed as a table (lower ratio = faster).
Run: python benchmarks/run.py [--quick]"""
import sys
import timeit

import numpy as np

import jax as real_jax
import jax.numpy as real_jnp

# refjax's xla backend runs on as many JAX CPU devices as refjax has virtual devices (8);
# JAX fixes the count when it starts, so set it before the first JAX computation.
real_jax.config.update("jax_num_cpu_devices", 8)

import refjax as jax  # noqa: E402  (after JAX's device count is fixed)
import refjax.numpy as jnp  # noqa: E402


def best_times(ours, theirs, number, repeat=15):
    """best_time of both, their runs interleaved so that a slow spell of the machine
    weighs on both sides alike."""
    t_ours, t_theirs = [], []
    for _ in range(repeat):
        t_ours.append(timeit.timeit(ours, number=number))
        t_theirs.append(timeit.timeit(theirs, number=number))
    return min(t_ours) / number, min(t_theirs) / number


def row(name, ours, theirs, against, goal):
    ratio = ours / theirs
    status = "ok" if ratio <= goal else "over goal"
    print(f"{name:<48} {ours * 1e6:>12.1f} us {theirs * 1e6:>12.1f} us  {ratio:6.2f}x "
          f"(vs {against}, goal <= {goal}) {status}")
    return ratio


def bench_eager_dispatch(n):
    x, y = jnp.ones((4,)), jnp.ones((4,))
    rx, ry = real_jnp.ones((4,)), real_jnp.ones((4,))
    (rx + ry).block_until_ready()
    ours, theirs = best_times(lambda: jax.lax.add(x, y),
                              lambda: real_jax.lax.add(rx, ry).block_until_ready(), n)
    return row("eager lax.add dispatch (numpy_ref vs jax)", ours, theirs, "jax eager", 1.0)


def chain(np_mod, x, n):
    for i in range(n // 3):
        x = np_mod.sin(x) * 1.5 + x
    return x


def bench_make_jaxpr(n_eqns):
    x = np.ones((3,), np.float32)
    ours, theirs = best_times(lambda: jax.make_jaxpr(lambda v: chain(jnp, v, n_eqns))(x),
                              lambda: real_jax.make_jaxpr(lambda v: chain(real_jnp, v, n_eqns))(x),
                              1, 3)
    assert len(jax.make_jaxpr(lambda v: chain(jnp, v, n_eqns))(x).eqns) >= n_eqns - 3
    return row(f"make_jaxpr of a {n_eqns}-equation function", ours, theirs, "jax.make_jaxpr", 1.0)


def mlp_loss(mod, params, x, y):
    w1, b1, w2 = params
    h = mod.tanh(x @ w1 + b1)
    return mod.mean((h @ w2 - y) ** 2)


def _mlp_data(batch=128):
    rng = np.random.default_rng(0)
    w1 = rng.normal(size=(256, 512)).astype(np.float32) * 0.05
    b1 = np.zeros(512, np.float32)
    w2 = rng.normal(size=(512, 10)).astype(np.float32) * 0.05
    x = rng.normal(size=(batch, 256)).astype(np.float32)
    y = rng.normal(size=(batch, 10)).astype(np.float32)
    return (w1, b1, w2), x, y


def numpy_mlp_grad(params, x, y):
    """The same gradient by hand in NumPy (the baseline for numpy_ref's interpreter)."""
    w1, b1, w2 = params
    pre = x @ w1 + b1
    h = np.tanh(pre)
    out = h @ w2 - y
    g_out = 2 * out / out.size
    g_w2 = h.T @ g_out
    g_h = g_out @ w2.T
    g_pre = g_h * (1 - h * h)
    return x.T @ g_pre, g_pre.sum(0), g_w2


def bench_numpy_ref_step(n):
    params, x, y = _mlp_data()
    step = jax.jit(jax.grad(lambda p, a, b: mlp_loss(jnp, p, a, b)))
    p, a, b = jax.device_put((params, x, y))
    step(p, a, b)
    ours, theirs = best_times(lambda: [g.block_until_ready() for g in step(p, a, b)],
                              lambda: numpy_mlp_grad(params, x, y), n)
    return row("numpy_ref jit(grad(mlp)) step vs hand NumPy", ours, theirs, "NumPy", 1.5)


def bench_xla(n):
    params, x, y = _mlp_data()
    rows = []
    with jax.backend("xla"):
        f = jax.jit(lambda v: v * 2.0 + 1.0)
        v = jax.device_put(np.ones(3, np.float32))
        f(v)
        rf = real_jax.jit(lambda v: v * 2.0 + 1.0)
        rv = real_jnp.ones(3)
        rf(rv).block_until_ready()
        rows.append(row("xla: jit call overhead (tiny function)",
                        *best_times(lambda: f(v).block_until_ready(),
                                    lambda: rf(rv).block_until_ready(), n), "jax.jit", 1.5))
        p, a, b = jax.device_put((params, x, y))
        rp, ra, rb = real_jax.device_put((params, x, y))

        def ours_first():
            jax.clear_caches()
            g = jax.jit(jax.grad(lambda p, a, b: mlp_loss(jnp, p, a, b)))
            [t.block_until_ready() for t in g(p, a, b)]

        def theirs_first():
            real_jax.clear_caches()
            g = real_jax.jit(real_jax.grad(lambda p, a, b: mlp_loss(real_jnp, p, a, b)))
            [t.block_until_ready() for t in g(rp, ra, rb)]

        rows.append(row("xla: first call of jit(grad(mlp)) (trace+compile)",
                        *best_times(ours_first, theirs_first, 1, 3), "jax.jit", 1.5))
        g = jax.jit(jax.grad(lambda p, a, b: mlp_loss(jnp, p, a, b)))
        rg = real_jax.jit(real_jax.grad(lambda p, a, b: mlp_loss(real_jnp, p, a, b)))
        g(p, a, b)
        rg(rp, ra, rb)
        rows.append(row("xla: steady jit(grad(mlp)) step 256x512/512x10",
                        *best_times(lambda: [t.block_until_ready() for t in g(p, a, b)],
                                    lambda: [t.block_until_ready() for t in rg(rp, ra, rb)], n),
                        "jax.jit", 1.05))
    return rows


def main():
    quick = "--quick" in sys.argv
    n = 200 if quick else 2000
    print(f"refjax benchmarks (numpy {np.__version__}, jax {real_jax.__version__})")
    # First, before any JAX computation: once XLA's runtime runs in the process, glibc
    # serves NumPy's 256 KiB temporaries with fresh mmaps (page faults on every op), which
    # doubles the interpreter's time (measured 0.73 -> 1.55 ms) but not hand NumPy's. A
    # numpy_ref user's process does not start XLA.
    bench_numpy_ref_step(20 if quick else 100)
    bench_eager_dispatch(n)
    bench_make_jaxpr(3000)
    try:
        bench_xla(50 if quick else 300)
    except ImportError as e:
        print(f"xla backend unavailable: {e}")


if __name__ == "__main__":
    main()
