"""jax.custom_derivatives' helpers against real JAX 0.10.2: custom_gradient (its documented
examples, under grad, jit, vmap), closure_convert (hoisted values, JAX's structure error, the
documented custom_vjp pattern), SymbolicZero and zero_from_primal; on both backends."""
import functools

import jax as real_jax
import numpy as np
import pytest

import refjax
from jax_compare import assert_same_error, outcome

pytestmark = pytest.mark.backends("numpy_ref", "xla")


def _custom_gradient_programs(jax):
    jnp = jax.numpy

    @jax.custom_gradient
    def square(x):
        return x ** 2, lambda g: (g * x,)

    @jax.custom_gradient
    def prod(x, y):
        return x * y, lambda g: (g * y, g * x)

    @jax.custom_gradient
    def clip_gradient(x):
        return x, lambda g: (jnp.clip(g, -1.0, 1.0),)

    @jax.custom_gradient
    def log1pexp(x):
        e = jnp.exp(x)
        return jnp.log1p(e), lambda g: (g * (1 - 1 / (1 + e)),)

    @jax.custom_gradient
    def tree_fn(d):
        return d["a"] * d["b"], lambda g: ({"a": g * d["b"], "b": g * d["a"]},)
    return {
        "value": lambda: square(3.0),
        "grad": lambda: jax.grad(square)(3.0),
        "jit_grad": lambda: jax.jit(jax.grad(square))(3.0),
        "vmap_grad": lambda: jax.vmap(jax.grad(square))(jnp.arange(3.0)),
        "two_args": lambda: jax.grad(prod, argnums=(0, 1))(3.0, 4.0),
        "clip": lambda: jax.grad(lambda x: 5 * clip_gradient(x))(2.0),
        "stable_at_100": lambda: jax.grad(log1pexp)(100.0),
        "jit_log1pexp": lambda: jax.jit(jax.grad(log1pexp))(3.0),
        "pytree_arg": lambda: jax.grad(tree_fn)({"a": 2.0, "b": 5.0}),
        "jaxpr": lambda: str(jax.make_jaxpr(jax.grad(square))(3.0)),
        "jvp_raises_type": lambda: _error(lambda: jax.jvp(square, (1.0,), (1.0,))),
    }


def _error(fn):
    return outcome(fn, lambda _: None).split(":")[0]


def _same(actual, expected):
    assert refjax.tree.structure(actual) == refjax.tree.structure(expected)
    for a, e in zip(refjax.tree.leaves(actual), real_jax.tree.leaves(expected)):
        if isinstance(e, str) or e is None:
            assert a == e
        else:
            np.testing.assert_allclose(np.asarray(a), np.asarray(e), rtol=1e-6)
            assert np.asarray(a).dtype == np.asarray(e).dtype
            assert getattr(a, "weak_type", False) == getattr(e, "weak_type", False)


@pytest.mark.parametrize("name", sorted(_custom_gradient_programs(real_jax)))
def test_custom_gradient_as_jax(name):
    _same(_custom_gradient_programs(refjax)[name](), _custom_gradient_programs(real_jax)[name]())


def _closure_programs(jax):
    jnp = jax.numpy

    def convert(a):
        return jax.closure_convert(lambda x: jnp.sum((x - a) ** 2), jnp.ones(3))

    def through_convert(a):
        converted, hoisted = convert(a)
        return converted(jnp.zeros(3), *hoisted)

    @functools.partial(jax.custom_vjp, nondiff_argnums=(0,))
    def apply(fn, x, *args):
        return fn(x, *args)

    def apply_fwd(fn, x, *args):
        return fn(x, *args), (x, args)

    def apply_bwd(fn, res, g):
        x, args = res
        return jax.vjp(fn, x, *args)[1](g)
    apply.defvjp(apply_fwd, apply_bwd)

    def user(x, a, n):
        converted, hoisted = jax.closure_convert(lambda x: jnp.sin(x * a) + n, x)
        return apply(converted, x, *hoisted)
    return {
        "concrete_nothing_hoisted": lambda: (len(convert(jnp.arange(3.0))[1]),
                                             convert(jnp.arange(3.0))[0](jnp.ones(3))),
        "grad_through": lambda: jax.grad(through_convert)(jnp.arange(3.0)),
        "hoisted_under_jit": lambda: jax.jit(lambda a: len(convert(a)[1]) * 1.0)(jnp.arange(3.0)),
        "custom_vjp_pattern": lambda: jax.grad(user, argnums=(0, 1))(0.5, 2.0, 1),
        "custom_vjp_pattern_jit": lambda: jax.jit(jax.grad(user, argnums=(0, 1)))(0.5, 2.0, 3),
        "int_values_not_hoisted": lambda: jax.jit(lambda n: len(jax.closure_convert(
            lambda x: x * n, 1.0)[1]) * 1.0)(3),
    }


@pytest.mark.parametrize("name", sorted(_closure_programs(real_jax)))
def test_closure_convert_as_jax(name):
    _same(_closure_programs(refjax)[name](), _closure_programs(real_jax)[name]())


def test_closure_convert_structure_error_as_jax():
    def call(jax):
        converted, _ = jax.closure_convert(lambda x: x * 2, jax.numpy.ones(3))
        converted(jax.numpy.ones(3), jax.numpy.ones(3))
    assert_same_error(call, refjax, real_jax, TypeError)


def test_symbolic_zeros_and_zero_from_primal():
    def program(jax):
        cd, jnp = jax.custom_derivatives, jax.numpy
        seen = []

        @jax.custom_jvp
        def mul(x, y):
            return x * y

        def mul_jvp(primals, tangents):
            (x, y), (tx, ty) = primals, tangents
            seen.append((isinstance(tx, cd.SymbolicZero), isinstance(ty, cd.SymbolicZero)))
            tx = jnp.zeros_like(x) if isinstance(tx, cd.SymbolicZero) else tx
            ty = jnp.zeros_like(y) if isinstance(ty, cd.SymbolicZero) else ty
            return x * y, tx * y + x * ty
        mul.defjvp(mul_jvp, symbolic_zeros=True)
        zeros = cd.zero_from_primal({"a": 1.0, "b": jnp.ones(2, jnp.float32)})
        return (jax.grad(mul)(2.0, 3.0), seen,
                isinstance(cd.zero_from_primal(1.0, symbolic_zeros=True), cd.SymbolicZero),
                zeros)
    _same(program(refjax), program(real_jax))
