"""A short demonstration of refjax: eager ops, jit, make_jaxpr, grad, vmap and both backends.
Run with `python -m refjax.demo`."""
import numpy as np

import refjax as jax
import refjax.numpy as jnp


def mlp_loss(params, x, y):
    hidden = jnp.tanh(x @ params["w1"] + params["b1"])
    logits = hidden @ params["w2"]
    return jnp.mean((logits - y) ** 2)


def show(title, value):
    print(f"\n== {title}\n{value}")


def main():
    x = jnp.arange(6.0).reshape(2, 3)
    show("eager: jnp.sin(x) * 2 + 1", jnp.sin(x) * 2 + 1)
    f = jax.jit(lambda a, b: a @ b.T + jnp.sum(a))
    show("jit(lambda a, b: a @ b.T + jnp.sum(a))(x, x)", f(x, x))
    show("make_jaxpr", jax.make_jaxpr(f)(x, x))
    show("eval_shape", jax.eval_shape(f, x, jax.ShapeDtypeStruct((2, 3), jnp.float32)))

    rng = np.random.default_rng(0)
    params = {"w1": jnp.asarray(rng.normal(size=(3, 4)), jnp.float32), "b1": jnp.zeros(4),
              "w2": jnp.asarray(rng.normal(size=(4, 1)), jnp.float32)}
    xs = jnp.asarray(rng.normal(size=(5, 3)), jnp.float32)
    ys = jnp.asarray(rng.normal(size=(5, 1)), jnp.float32)
    show("grad(mlp_loss) w.r.t. w2", jax.grad(mlp_loss)(params, xs, ys)["w2"])
    per_example = jax.jit(jax.vmap(jax.grad(mlp_loss), in_axes=(None, 0, 0)))
    show("per-example gradients of b1 (jit(vmap(grad)))", per_example(params, xs, ys)["b1"])
    show("hessian of sum(sin(x)**2) at [0.5, 1.0]",
         jax.hessian(lambda v: jnp.sum(jnp.sin(v) ** 2))(jnp.asarray([0.5, 1.0])))
    try:
        with jax.backend("xla"):
            xla_grad = jax.jit(jax.grad(mlp_loss))(jax.device_put(params), jax.device_put(xs),
                                                   jax.device_put(ys))["w2"]
        show("the same gradient on the xla backend", xla_grad)
        print("max |numpy_ref - xla| =",
              float(np.max(np.abs(np.asarray(xla_grad) - np.asarray(
                  jax.grad(mlp_loss)(params, xs, ys)["w2"])))))
    except ImportError as e:
        show("xla backend unavailable", e)
    show("devices", jax.devices())


if __name__ == "__main__":
    main()
