"""Autodiff and vmap through the public API, checked against real JAX on composite functions."""
import dataclasses

import jax as real_jax
import jax.numpy as real_jnp
import numpy as np
import pytest
from jax_recordings import on_jax

import refjax as jax
import refjax.numpy as jnp

pytestmark = pytest.mark.backends("numpy_ref", "xla")

RNG = np.random.default_rng(0)
X = RNG.normal(size=(3,)).astype(np.float32)
M = RNG.normal(size=(3, 3)).astype(np.float32)


def composites(np_mod):
    return {
        "poly": lambda x: np_mod.sum(x ** 3 - 2 * x ** 2 + x),
        "trig": lambda x: np_mod.sum(np_mod.sin(x) * np_mod.cos(2 * x)),
        "exp_log": lambda x: np_mod.sum(np_mod.log1p(np_mod.exp(x))),
        "matvec": lambda x: np_mod.sum(np_mod.tanh(M @ x) ** 2),
        "max": lambda x: np_mod.max(x * np_mod.sin(x)),
        "prod": lambda x: np_mod.prod(1.5 + np_mod.tanh(x)),
        "div": lambda x: np_mod.sum(x / (1.0 + x ** 2)),
        "where": lambda x: np_mod.sum(np_mod.where(x > 0, x ** 2, -x)),
        "sqrt": lambda x: np_mod.sum(np_mod.sqrt(x ** 2 + 1.0)),
        "concat_slice": lambda x: np_mod.sum(np_mod.concatenate([x[1:], x[:1] * 3]) * x),
    }


NAMES = sorted(composites(np))


def _close(a, b, tol=2e-5):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


@pytest.mark.parametrize("name", NAMES)
def test_grad_matches_jax(name):
    ours, theirs = composites(jnp)[name], on_jax(_grad, name)
    _close(jax.grad(ours)(X), theirs)
    _close(jax.jit(jax.grad(ours))(X), theirs)
    _close(jax.grad(jax.jit(ours))(X), theirs)


def _grad(jax, name):
    return jax.grad(composites(jax.numpy)[name])(X)


@pytest.mark.parametrize("name", NAMES)
def test_second_derivatives_match_jax(name):
    (hessian, hvp), (their_hessian, their_hvp) = _second(jax, name), on_jax(_second, name)
    _close(hessian, their_hessian, 1e-4)
    _close(hvp, their_hvp, 1e-4)


def _second(jax, name):
    """The Hessian and a Hessian-vector product by grad of grad."""
    f, v = composites(jax.numpy)[name], np.ones(3, np.float32)
    return jax.hessian(f)(X), jax.grad(lambda x: jax.grad(f)(x) @ v)(X)


@pytest.mark.parametrize("name", NAMES)
def test_jacobians_jvp_vjp_linearize_match_jax(name):
    ours = lambda x: composites(jnp)[name](x) * jnp.sin(x)  # noqa: E731
    jacfwd, jacrev, ry, rjt, rpulled = on_jax(_jacobians, name)
    _close(jax.jacfwd(ours)(X), jacfwd, 1e-4)
    _close(jax.jacrev(ours)(X), jacrev, 1e-4)
    y, jt = jax.jvp(ours, (X,), (_T,))
    _close(y, ry)
    _close(jt, rjt, 1e-4)
    y, f_lin = jax.linearize(ours, X)
    _close(f_lin(_T), rjt, 1e-4)
    _, pullback = jax.vjp(ours, X)
    _close(pullback(_T)[0], rpulled, 1e-4)


_T = np.linspace(-1, 1, 3).astype(np.float32)


def _jacobians(jax, name):
    """JAX's jacfwd, jacrev, jvp (primal and tangent) and pullback of `name` times sin."""
    f = lambda x: composites(jax.numpy)[name](x) * jax.numpy.sin(x)  # noqa: E731
    return [jax.jacfwd(f)(X), jax.jacrev(f)(X), *jax.jvp(f, (X,), (_T,)),
            jax.vjp(f, X)[1](_T)[0]]


@dataclasses.dataclass
class Params:
    w: object
    b: object


jax.tree_util.register_dataclass(Params, data_fields=["w", "b"], meta_fields=[])
real_jax.tree_util.register_dataclass(Params, data_fields=["w", "b"], meta_fields=[])


def test_grad_over_pytrees_argnums_and_aux():
    ours, theirs = _pytree_grads(jax), on_jax(_pytree_grads)
    (val, aux), (rval, raux) = ours[:2], theirs[:2]
    _close(val, rval)
    assert aux == raux
    for a, b in zip(ours[2:], theirs[2:], strict=True):  # by dict, argument, dataclass field
        _close(a, b)


def _pytree_grads(jax):
    jnp = jax.numpy

    def loss(p, x):
        return jnp.sum(jnp.tanh(x @ p["w"] + p["b"]) ** 2), {"n": x.shape[0]}
    (val, aux), (gp, gx) = jax.value_and_grad(loss, argnums=(0, 1), has_aux=True)(
        {"w": M, "b": X}, M)
    dp = jax.grad(lambda q: jnp.sum(q.w @ q.b))(Params(M, X))
    return [val, aux, gp["w"], gp["b"], gx, dp.w, dp.b]


def test_per_example_gradients_any_nesting():
    xs, ys = RNG.normal(size=(5, 3)).astype(np.float32), RNG.normal(size=(5,)).astype(np.float32)

    def loss(mod, w, x, y):
        return (mod.tanh(x @ w) - y) ** 2

    ours = jax.jit(jax.vmap(jax.grad(lambda w, x, y: loss(jnp, w, x, y)), in_axes=(None, 0, 0)))
    per_example, summed = on_jax(_per_example_grads, xs, ys)
    _close(ours(X, xs, ys), per_example)
    _close(jax.vmap(jax.jit(jax.grad(lambda w, x, y: loss(jnp, w, x, y))), (None, 0, 0))(X, xs, ys),
           per_example)
    _close(jax.grad(lambda w: jnp.sum(jax.vmap(lambda x, y: loss(jnp, w, x, y))(xs, ys)))(X),
           summed)


def _per_example_grads(jax, xs, ys):
    """JAX's per-example gradients and the gradient of their loss' sum."""
    def loss(w, x, y):
        return (jax.numpy.tanh(x @ w) - y) ** 2
    per_example = jax.vmap(jax.grad(loss), in_axes=(None, 0, 0))(X, xs, ys)
    return per_example, jax.grad(lambda w: jax.numpy.sum(jax.vmap(
        lambda x, y: loss(w, x, y))(xs, ys)))(X)


def test_closure_over_traced_values_and_python_control_flow():
    def outer(x):
        inner = lambda y: jnp.sin(x * y)  # noqa: E731
        return jax.grad(inner)(2.0 * x)

    def router(x):
        return jnp.sin(x) if x > 0 else x ** 3

    assert np.isclose(float(jax.grad(outer)(0.7)), float(real_jax.grad(
        lambda x: real_jax.grad(lambda y: real_jnp.sin(x * y))(2.0 * x))(0.7)), rtol=1e-5)
    assert np.isclose(float(jax.grad(router)(-2.0)), 12.0)
    assert np.isclose(float(jax.grad(router)(0.5)), np.cos(0.5), rtol=1e-6)


def test_vmap_axes_and_names():
    tree = {"w": M, "b": RNG.normal(size=(4, 3)).astype(np.float32)}
    f = lambda t: t["w"] @ t["b"]  # noqa: E731
    out = jax.vmap(f, in_axes=({"w": None, "b": 0},), out_axes=1)(tree)
    ref = real_jax.vmap(f, in_axes=({"w": None, "b": 0},), out_axes=1)(tree)
    _close(out, ref)
    _close(jax.vmap(lambda x: x * 2, in_axes=-1)(M), real_jax.vmap(lambda x: x * 2, in_axes=-1)(M))
    _close(jax.vmap(lambda x: x.sum(), axis_size=3, in_axes=None)(X),
           np.full(3, X.sum()), 1e-5)
    _close(jax.vmap(lambda x: 1.0, axis_name="batch")(X), np.ones(3))


def test_vmap_errors_like_jax():
    with pytest.raises(ValueError, match="inconsistent sizes"):
        jax.vmap(lambda a, b: a + b)(jnp.ones(3), jnp.ones(4))
    with pytest.raises(ValueError, match="at vmap out_axes, got axis spec None but output was batched on axis 0"):
        jax.vmap(lambda a: a, out_axes=None)(jnp.ones(3))
    with pytest.raises(ValueError, match="len\\(in_axes\\)=2"):
        jax.vmap(lambda a: a, in_axes=(0, 0))(jnp.ones(3))
    with pytest.raises(ValueError, match="tree prefix"):
        jax.vmap(lambda t: t["a"], in_axes=({"b": 0},))({"a": jnp.ones(3)})
    with pytest.raises(ValueError, match="at least one non-None"):
        jax.vmap(lambda a: a, in_axes=None)(jnp.ones(3))


def test_grad_errors_like_jax():
    with pytest.raises(TypeError, match=r"Gradient only defined for scalar-output functions. Output had shape: \(3,\)"):
        jax.grad(lambda x: x * 2)(jnp.ones(3))
    with pytest.raises(TypeError, match="allow_int"):
        jax.grad(lambda x: x * 2)(3)
    g = jax.grad(lambda x, y: jnp.sum(x * y), allow_int=True)(jnp.ones(2, jnp.int32), 2.0)
    assert g.dtype == jax.numpy.float0


def test_float0_tangents_for_integer_outputs():
    y, t = jax.jvp(lambda x: (x > 0).astype(jnp.int32), (X,), (np.ones(3, np.float32),))
    assert t.dtype == jax.numpy.float0
    y, t = jax.jvp(lambda x: jnp.floor(x), (X,), (np.ones(3, np.float32),))
    _close(t, np.zeros(3))


def test_stop_gradient_and_custom_rules():
    _close(jax.grad(lambda x: jnp.sum(jax.lax.stop_gradient(x) * x))(X), X)

    @jax.custom_jvp
    def clip_grad(x):
        return x

    clip_grad.defjvp(lambda p, t: (p[0], t[0] * 0.1))
    _close(jax.grad(lambda x: jnp.sum(clip_grad(x) * 5))(X), np.full(3, 0.5))
    _close(jax.vmap(jax.grad(lambda x: clip_grad(x) * 5))(X), np.full(3, 0.5))

    @jax.custom_vjp
    def scale(x, k):
        return x * k

    scale.defvjp(lambda x, k: (x * k, k), lambda k, g: (g * k * 10, None))
    _close(jax.grad(lambda x: jnp.sum(scale(x, 2.0)))(X), np.full(3, 20.0))
    _close(jax.jit(jax.vmap(jax.grad(lambda x: scale(x, 3.0))))(X), np.full(3, 30.0))

    from functools import partial

    @partial(jax.custom_jvp, nondiff_argnums=(0,))
    def app(f, x):
        return f(x)

    app.defjvp(lambda f, p, t: (app(f, p[0]), 7.0 * t[0]))
    assert float(jax.grad(lambda x: app(jnp.sin, x))(1.0)) == 7.0


_GRAD_PROGRAMS = {
    "tanh_sub_square": lambda m, x, y: m.sum((m.tanh(x) - y) ** 2),
    "cube_add_sub": lambda m, x, y: m.sum(x ** 3 + y - x),
    "sub_of_product": lambda m, x, y: m.sum(y - m.tanh(x) * x),
}


@pytest.mark.parametrize("name", sorted(_GRAD_PROGRAMS))
def test_grad_stages_jaxs_equations_and_values(name):
    """The JVP rules are JAX's (tanh's, integer_pow's, add/sub's handling of symbolic zeros):
    grad stages the same equations, no dead zeros, and the same values (to float32 rounding:
    numpy_ref's tanh is NumPy's and XLA fuses differently)."""
    f = _GRAD_PROGRAMS[name]
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3)
    y = np.cos(x)
    ours = jax.grad(lambda a, b: f(jnp, a, b))
    their_names, their_grad = on_jax(_staged_grad, name, x, y)
    assert [e.primitive.name for e in jax.make_jaxpr(ours)(x, y).eqns] == their_names
    np.testing.assert_allclose(np.asarray(jax.jit(ours)(x, y)), their_grad,
                               rtol=1e-6, atol=1e-7)


def _staged_grad(jax, name, x, y):
    """The primitives JAX's grad of a program stages, and its value."""
    grad = jax.grad(lambda a, b: _GRAD_PROGRAMS[name](jax.numpy, a, b))
    return [e.primitive.name for e in jax.make_jaxpr(grad)(x, y).eqns], grad(x, y)


def test_has_aux_values_leave_the_differentiation_trace():
    """grad/vjp/jvp/jacfwd/jacrev with has_aux return the aux as plain values (JAX lowers them
    out of the JVP trace), eagerly, under jit, vmap and an outer grad. They used to come back
    as tracers, which then failed on use under jit."""
    theirs = on_jax(_aux_values)
    for name, prog in _AUX_PROGRAMS.items():
        got = prog(jax, _with_aux(jnp))["c"]
        assert isinstance(got, jax.Array), name
        np.testing.assert_allclose(got, theirs[name], rtol=1e-6, err_msg=name)


def _with_aux(np_mod):
    return lambda x: (np_mod.sin(x) * 3.0, {"c": np_mod.cos(x) * x})


def _aux_values(jax):
    return {name: prog(jax, _with_aux(jax.numpy))["c"] for name, prog in _AUX_PROGRAMS.items()}


_AUX_PROGRAMS = {
    "grad": lambda j, f: j.grad(f, has_aux=True)(0.5)[1],
    "vjp": lambda j, f: j.vjp(f, 0.5, has_aux=True)[2],
    "jvp": lambda j, f: j.jvp(f, (0.5,), (1.0,), has_aux=True)[2],
    "jit_grad": lambda j, f: j.jit(j.grad(f, has_aux=True))(0.5)[1],
    "jit_jacfwd": lambda j, f: j.jit(lambda x: j.jacfwd(f, has_aux=True)(x)[1])(0.5),
    "jacrev": lambda j, f: j.jacrev(f, has_aux=True)(0.5)[1],
    "vmap_grad": lambda j, f: j.vmap(j.grad(f, has_aux=True))(j.numpy.arange(3.0))[1],
    "grad_of_aux": lambda j, f: {"c": j.grad(lambda x: j.grad(f, has_aux=True)(x)[1]["c"])(
        0.5)},
}
