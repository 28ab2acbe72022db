"""jax.custom_batching against real JAX 0.10.2: custom_vmap (the rule's arguments, values,
printed jaxprs, pytrees, JAX's errors), sequential_vmap, forward-mode derivatives with a
consistent rule; reverse mode, which JAX lacks, against the analytic derivative."""
import jax as real_jax
import numpy as np
import pytest

import refjax
from jax_compare import outcome

pytestmark = pytest.mark.backends("numpy_ref", "xla")


def _programs(jax, log):
    jnp = jax.numpy
    cb = jax.custom_batching

    @cb.custom_vmap
    def f(x, y):
        return jnp.sin(x) + y

    @f.def_vmap
    def rule(axis_size, in_batched, xs, ys):
        log.append(("rule", axis_size, in_batched, xs.shape, jnp.shape(ys)))
        return jnp.cos(xs) + ys, any(in_batched)

    @cb.custom_vmap
    def good(x):
        return jnp.sin(x)

    @good.def_vmap
    def good_rule(n, batched, x):
        return jnp.sin(x), batched[0]

    @cb.sequential_vmap
    def total(x):
        log.append(("total", x.shape))
        return x.sum()

    @cb.custom_vmap
    def tree_fn(d):
        return {"a": d["x"] * 2}

    @tree_fn.def_vmap
    def tree_rule(n, batched, d):
        log.append(("tree", n, batched))
        return {"a": d["x"] * 3}, {"a": batched[0]["x"]}

    x3 = jnp.arange(3.0)
    return {
        "eager": lambda: f(1.0, 2.0),
        "jaxpr": lambda: str(jax.make_jaxpr(f)(1.0, 2.0)),
        "vmap_uses_rule": lambda: jax.vmap(f, in_axes=(0, None))(x3, 2.0),
        "vmap_jaxpr": lambda: str(jax.make_jaxpr(jax.vmap(f, in_axes=(0, None)))(x3, 2.0)),
        "jit_vmap": lambda: jax.jit(jax.vmap(f))(x3, jnp.ones(3)),
        "jvp": lambda: jax.jvp(good, (1.0,), (1.0,)),
        "vmap_jvp": lambda: jax.vmap(lambda x: jax.jvp(good, (x,), (1.0,)))(x3),
        "sequential_vmap": lambda: jax.vmap(total)(jnp.ones((3, 2))),
        "pytrees": lambda: jax.vmap(tree_fn)({"x": jnp.ones(2)}),
    }


def _outcome(fn):
    return outcome(fn, lambda out: out if isinstance(out, str) else refjax.tree.map(
        lambda a: (np.asarray(a).tolist(), str(np.asarray(a).dtype)), out))


@pytest.mark.parametrize("name", sorted(_programs(real_jax, [])))
def test_as_jax(name):
    ours, theirs = [], []
    assert _outcome(_programs(refjax, ours)[name]) == _outcome(_programs(real_jax, theirs)[name])
    assert ours == theirs  # the rule (or the sequential body) saw the same arguments


def _errors(jax):
    cb = jax.custom_batching
    no_rule = cb.custom_vmap(lambda x: x)

    @cb.custom_vmap
    def mismatched(x):
        return x * 2

    @mismatched.def_vmap
    def mismatched_rule(n, batched, x):
        return x * 2, [True]
    return {"no_rule": lambda: no_rule(1.0),
            "spec_structure": lambda: jax.vmap(mismatched)(jax.numpy.ones(3))}


@pytest.mark.parametrize("name", sorted(_errors(real_jax)))
def test_errors_as_jax(name):
    assert _outcome(_errors(refjax)[name]) == _outcome(_errors(real_jax)[name])


def test_reverse_mode():
    """JAX 0.10.2 cannot take grad of a custom_vmap function (ValueError: Linearization
    failed...); refjax differentiates the function (the rule batches the primal)."""
    @refjax.custom_batching.custom_vmap
    def f(x):
        return refjax.numpy.sin(x)

    @f.def_vmap
    def rule(n, batched, x):
        return refjax.numpy.sin(x), batched[0]
    x = np.linspace(0.0, 2.0, 4).astype(np.float32)
    np.testing.assert_allclose(refjax.vmap(refjax.grad(f))(x), np.cos(x), rtol=1e-6)
    np.testing.assert_allclose(refjax.grad(lambda x: refjax.vmap(f)(x).sum())(x), np.cos(x),
                               rtol=1e-6)
    jax_f = real_jax.custom_batching.custom_vmap(real_jax.numpy.sin)
    jax_f.def_vmap(lambda n, batched, x: (real_jax.numpy.sin(x), batched[0]))
    with pytest.raises(ValueError, match="Linearization failed"):
        real_jax.grad(jax_f)(1.0)
