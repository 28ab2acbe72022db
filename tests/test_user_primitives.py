"""Primitives defined outside refjax, the way JAX's "JAX primitives" page defines them
(jax.extend.core.Primitive, def_impl, def_abstract_eval, refjax.interpreters.{ad,batching,
mlir}): the same primitive is built on refjax and on real JAX, and every step (each missing
rule's error, eager, jit through the lowering, jvp, grad, vmap and their jits) must give
what JAX gives."""
import importlib

import jax
import numpy as np
import pytest

import refjax

pytestmark = pytest.mark.backends("numpy_ref", "xla")


def _mods(jx):
    """The modules the page imports, from refjax or from JAX."""
    name = jx.__name__
    get = importlib.import_module
    return (get(f"{name}.extend.core"), get(f"{name}.interpreters.ad"),
            get(f"{name}.interpreters.batching"), get(f"{name}.interpreters.mlir"),
            get(f"{name}._src.lib.mlir.dialects").hlo, get(f"{name}._src.lax").lax)


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 (the class and message are what is compared)
        return type(e), str(e)
    return None


def _steps(jx, name):
    """Build multiply_add as the page does, recording what each call shows on the way."""
    core, ad, batching, mlir, hlo, lax = _mods(jx)
    p = core.Primitive(name)
    ma = p.bind
    sq = (lambda a, b: ma(a, a, b))
    shown = [_error(lambda: sq(2., 10.))]
    p.def_impl(lambda x, y, z: np.add(np.multiply(x, y), z))
    shown += [type(sq(2., 10.)), float(sq(2., 10.)), _error(lambda: jx.jit(sq)(2., 10.))]
    p.def_abstract_eval(lambda x, y, z: jx.core.ShapedArray(x.shape, x.dtype))
    shown.append(_error(lambda: jx.jit(sq)(2., 10.)))
    mlir.register_lowering(p, lambda ctx, x, y, z: [hlo.AddOp(hlo.MulOp(x, y), z).result],
                           platform="cpu")
    shown += [float(jx.jit(sq)(2., 10.)), float(jx.jit(sq, static_argnums=1)(2., 10.)),
              str(jx.make_jaxpr(sq)(2., 10.)), _error(lambda: jx.jvp(sq, (2., 10.), (1., 1.)))]

    def jvp_rule(primals, tangents):
        (x, y, z), zero = primals, (lambda t: lax.full_like(primals[0], 0)
                                    if type(t) is ad.Zero else t)
        xt, yt, zt = map(zero, tangents)
        return ma(x, y, z), ma(xt, y, ma(x, yt, zt))
    ad.primitive_jvps[p] = jvp_rule
    jvp = lambda a, b: jx.jvp(sq, a, b)  # noqa: E731
    eager = jvp((2., 10.), (1., 1.))
    # Known difference: JAX hands jvp's Python float primals to the impl as they are (its
    # NumPy results are float64), refjax converts them to float32 Arrays first
    shown += [tuple(map(float, eager)), jx.jit(jvp)((2., 10.), (1., 1.)),
              _error(lambda: jx.grad(sq)(2., 10.)), ad.primitive_jvps[p] is jvp_rule]

    def transpose(ct, x, y, z):
        if not ad.is_undefined_primal(x):
            return None, ma(x, ct, lax.full_like(x, 0)), ct
        return ma(ct, y, lax.full_like(y, 0)), None, ct
    ad.primitive_transposes[p] = transpose
    xs, ys = np.array([2., 3.], np.float32), np.array([10., 20.], np.float32)
    shown += [float(jx.grad(sq)(2., 10.)), float(jx.jit(jx.grad(sq))(2., 10.)),
              _error(lambda: jx.vmap(sq)(xs, ys))]
    batching.primitive_batchers[p] = lambda vals, dims: (ma(*vals), dims[0])
    shown += [np.asarray(jx.vmap(sq)(xs, ys)).tolist(),
              np.asarray(jx.jit(jx.vmap(sq))(xs, ys)).tolist(),
              np.asarray(jx.vmap(sq, in_axes=(0, None))(xs, np.float32(1))).tolist()]
    return shown


@pytest.mark.backends()  # both backends in every run: the lowering is each backend's jit
def test_the_pages_primitive_shows_what_jax_shows_at_every_step():
    theirs = _steps(jax, "multiply_add")
    for backend in ("numpy_ref", "xla"):
        with refjax.backend(backend):
            ours = _steps(refjax, "multiply_add")
        for i, (a, b) in enumerate(zip(ours, theirs)):
            assert str(a) == str(b), (backend, i, a, b)
    assert ours[0] == (NotImplementedError, "Evaluation rule for 'multiply_add' not implemented")
    assert ours[5] == ours[6] == 14.0 and ours[9] == (14.0, 5.0) and ours[13] == 4.0  # by hand


def test_lower_fun_multiple_results_and_registry_view():
    def build(jx):
        core, ad, _, mlir, _, _ = _mods(jx)
        p = core.Primitive("two")
        p.multiple_results = True
        p.def_impl(lambda x, y: (x * y, x - y))
        p.def_abstract_eval(lambda x, y: [x, x])
        mlir.register_lowering(p, mlir.lower_fun(lambda x, y: [x * y, x - y]))
        out = jx.jit(lambda x, y: p.bind(x, y))(np.arange(3.), np.float32(2) + np.zeros(3))
        rule = lambda primals, tangents: (p.bind(*primals), tangents)  # noqa: E731
        ad.primitive_jvps[p] = rule
        registered = (p in ad.primitive_jvps, ad.primitive_jvps[p] is rule)
        del ad.primitive_jvps[p]
        q = core.Primitive("square")
        q.def_impl(lambda x: x * x)
        q.def_abstract_eval(lambda x: x)
        mlir.register_lowering(q, mlir.lower_fun(lambda x: x * x, multiple_results=False),
                               platform="cuda")  # not for CPU: jit has no lowering yet
        missing = _error(lambda: jx.jit(q.bind)(3.))
        mlir.register_lowering(q, mlir.lower_fun(lambda x: x * x, multiple_results=False))
        return ([np.asarray(o).tolist() for o in out], registered, p in ad.primitive_jvps,
                missing, float(jx.jit(q.bind)(3.)))
    missing = (NotImplementedError,
               "MLIR translation rule for primitive 'square' not found for platform cpu")
    assert build(refjax) == build(jax) == ([[0., 2., 4.], [-2., -1., 0.]], (True, True), False,
                                           missing, 9.0)


def test_a_lowering_refjax_cannot_run_or_mistyped_raises_naming_the_primitive():
    core, _, _, mlir, hlo, _ = _mods(refjax)
    p = core.Primitive("custom")
    p.def_impl(lambda x: x)
    p.def_abstract_eval(lambda x: x)
    mlir.register_lowering(p, lambda ctx, x: [hlo.CustomCallOp([x], x).result])
    # JAX would run its custom call; refjax has no MLIR and says so rather than run the impl
    with pytest.raises(NotImplementedError, match="primitive 'custom' builds hlo.CustomCallOp"):
        refjax.jit(p.bind)(np.ones(3, np.float32))
    q = core.Primitive("mistyped")
    q.def_impl(lambda x: x)
    q.def_abstract_eval(lambda x: refjax.core.ShapedArray(x.shape, np.int32))
    mlir.register_lowering(q, lambda ctx, x: [hlo.AddOp(x, x).result], platform="cpu")
    with pytest.raises(ValueError, match="primitive 'mistyped'.*int32"):  # JAX: ValueError
        refjax.jit(q.bind)(np.ones(3, np.float32))
