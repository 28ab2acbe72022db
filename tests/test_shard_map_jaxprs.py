"""shard_map's partial evaluation, linearization and transpose against real JAX's printed
jaxprs: residuals that are the body's inputs or outputs forwarded, the others output first
(scalars with a leading dimension of 1, split over the axes they vary over), the transposed
shard_map reading the cotangents first (and only the residuals they need); under vjp,
linearize, grad and vjp of a pullback, with check_vma on and off, in a jit (partial
evaluation of the equation)."""
from functools import partial

import jax as real_jax
import jax.numpy as real_jnp
import numpy as np
import pytest

import refjax
import refjax.numpy as rjnp

pytestmark = pytest.mark.backends("numpy_ref")  # printed jaxprs do not depend on the backend


def _programs(jax, jnp, axis_type):
    """{name: (scalar function, args)}: shard_maps on a mesh of 2 devices."""
    P = jax.P
    mesh = jax.make_mesh((2,), ("x",), axis_types=(axis_type(jax),), devices=jax.devices()[:2])
    sm = partial(jax.shard_map, mesh=mesh)

    def one(x):  # residuals: a body intermediate (cos) and the input
        return jnp.sum(sm(lambda b: jnp.sin(b) * b, in_specs=P("x"), out_specs=P("x"))(x))

    def replicated(a, w, check_vma=True):  # w's pvary is a residual; its cotangent summed
        body = sm(lambda a, w: jnp.tanh(a * w), in_specs=(P("x"), P()), out_specs=P("x"),
                  check_vma=check_vma)
        return jnp.sum(body(a, w))

    def scalar(x):  # scalar residuals get a leading dimension of 1
        return jnp.sum(sm(lambda b: jnp.sin(jnp.sum(b)) * b, in_specs=P("x"),
                          out_specs=P("x"))(x))

    def psum(x):  # without check_vma: the cotangent divided, then psum's transpose
        return sm(lambda b: jax.lax.psum(jnp.sum(b * b), "x"), in_specs=P("x"), out_specs=P(),
                  check_vma=False)(x)

    def out_fwd(x):  # a residual that is also an output
        y, z = sm(lambda b: (jnp.sin(b), jnp.sin(b) * jnp.cos(b)), in_specs=P("x"),
                  out_specs=(P("x"), P("x")))(x)
        return jnp.sum(y) + jnp.sum(z)

    def jitted(x):  # partial evaluation of a shard_map equation
        return jnp.sum(jax.jit(sm(lambda b: jnp.exp(b) * b, in_specs=P("x"),
                                  out_specs=P("x")))(x))

    x, w = jnp.arange(4.0) + 1, jnp.arange(2.0) + 0.5
    if axis_type(jax) == jax.sharding.AxisType.Explicit:
        x = jax.device_put(x, jax.NamedSharding(mesh, P("x")))
        w = jax.device_put(w, jax.NamedSharding(mesh, P()))
    return mesh, {"one": (one, (x,)), "replicated": (replicated, (x, w)),
                  "unchecked": (partial(replicated, check_vma=False), (x, w)),
                  "scalar": (scalar, (x,)), "psum": (psum, (x,)), "out_fwd": (out_fwd, (x,)),
                  "jitted": (jitted, (x,))}


def _auto(jax):
    return jax.sharding.AxisType.Auto


def _explicit(jax):
    return jax.sharding.AxisType.Explicit


def _vjp_and_linearize(jax, jnp):
    _, programs = _programs(jax, jnp, _auto)
    printed = []
    for name in ("one", "replicated", "unchecked", "scalar", "psum", "jitted"):
        f, args = programs[name]
        printed.append(str(jax.make_jaxpr(lambda *a: jax.vjp(f, *a)[1](1.0))(*args)))
        printed.append(str(jax.make_jaxpr(lambda p, t: jax.linearize(f, *p)[1](*t))(args, args)))
    return printed


def test_vjp_and_linearize_jaxprs_are_jaxs():
    """Auto mesh axes: the forward and tangent shard_maps linearize stages and the transposed
    one vjp stages, for residuals of every kind, print as JAX's."""
    ours, theirs = _vjp_and_linearize(refjax, rjnp), _vjp_and_linearize(real_jax, real_jnp)
    for a, b in zip(ours, theirs):
        assert a == b
    assert len(ours) == len(theirs) == 12


def _gradient_of(jax, f, rest):
    """y -> the gradient of f(y, *rest), by vjp."""
    return lambda y: jax.vjp(lambda z: f(z, *rest), y)[1](1.0)[0]


def _second_order(jax, jnp):
    _, programs = _programs(jax, jnp, _auto)
    printed = []
    for name in ("one", "replicated", "psum"):
        f, (x, *rest) = programs[name]
        g = _gradient_of(jax, f, rest)
        printed.append(str(jax.make_jaxpr(lambda y, g=g: jax.vjp(g, y)[1](jnp.ones_like(y)))(x)))
    return printed


def test_second_order_jaxprs_are_jaxs():
    """vjp of a pullback: the transposed shard_map reads only the residuals its cotangents
    need (JAX's linear shard_map was pruned of dead outputs first), and none is bound when
    no input gets a cotangent (the psum program without check_vma)."""
    ours, theirs = _second_order(refjax, rjnp), _second_order(real_jax, real_jnp)
    for a, b in zip(ours, theirs):
        assert a == b
    assert len(ours) == len(theirs) == 3


def _grads(jax, jnp):
    mesh, programs = _programs(jax, jnp, _explicit)
    printed, values = [], {}
    with jax.set_mesh(mesh):  # the seed cotangent is typed on the context mesh
        for name in ("replicated", "unchecked", "psum", "out_fwd"):
            f, args = programs[name]
            g = jax.grad(f, argnums=tuple(range(len(args))))
            printed.append(str(jax.make_jaxpr(g)(*args)))
            if jax is refjax:  # (JAX would compile each: ~20 s)
                values[name] = [np.asarray(v) for v in g(*args)]
    return printed, values


def _closed_forms(x, w):
    """The gradients of the programs above, by hand."""
    blocks = np.tile(w, 2)
    dtanh = 1 - np.tanh(x * blocks) ** 2
    replicated = [dtanh * blocks, (dtanh * x).reshape(2, 2).sum(0)]
    return {"replicated": replicated, "unchecked": replicated, "psum": [2 * x],
            "out_fwd": [np.cos(x) + np.cos(2 * x)]}


def test_grad_jaxprs_are_jaxs():
    """Explicit mesh axes under a context mesh: grad's jaxprs print as JAX's (check_vma on
    and off, a replicated input, a residual that is an output), and the gradients are the
    closed forms' (the numpy_ref backend runs them)."""
    (ours, values), (theirs, _) = _grads(refjax, rjnp), _grads(real_jax, real_jnp)
    for a, b in zip(ours, theirs):
        assert a == b
    assert len(ours) == len(theirs) == 4
    x, w = np.arange(4.0, dtype=np.float32) + 1, np.arange(2.0, dtype=np.float32) + 0.5
    for name, expected in _closed_forms(x, w).items():
        for v, e in zip(values[name], expected, strict=True):
            np.testing.assert_allclose(v, e, rtol=2e-5, atol=1e-6)


def _in_scans(jax, jnp):
    """vjp and linearize of shard_maps inside scans and fori_loops: JAX's scan partial
    evaluation hoists each shard_map's loop-invariant known part out of the loop (an empty
    shard_map when no input is loop-invariant)."""
    mesh, _ = _programs(jax, jnp, _auto)
    P, lax = jax.P, jax.lax
    sm = partial(jax.shard_map, mesh=mesh)
    own = sm(lambda b: jnp.sin(b) * b, in_specs=P("x"), out_specs=P("x"))
    mixed = sm(lambda w, c: jnp.sin(w) * jnp.cos(c), in_specs=(P(), P("x")), out_specs=P("x"))

    def scanned(x):
        return jnp.sum(lax.scan(lambda c, _: (own(c), None), x, None, length=2)[0])

    def fori(x):
        return jnp.sum(lax.fori_loop(0, 2, lambda i, c: own(c), x))

    def invariant(x, w):  # sin(w) is hoisted: a known shard_map before the loop
        return jnp.sum(lax.scan(lambda c, _: (mixed(w, c), None), x, None, length=2)[0])

    x, w = jnp.arange(4.0) + 1, jnp.arange(2.0) + 0.5
    printed = [str(jax.make_jaxpr(lambda *a, f=f: jax.vjp(f, *a)[1](1.0))(*args))
               for f, args in ((scanned, (x,)), (fori, (x,)), (invariant, (x, w)))]
    printed.append(str(jax.make_jaxpr(
        lambda x, w: jax.linearize(invariant, x, w)[1](x, w))(x, w)))
    if jax is not refjax:  # (JAX would compile each)
        return printed, None
    return printed, [jax.vjp(f, *a)[1](1.0) for f, a in ((scanned, (x,)), (invariant, (x, w)))]


def test_scan_jaxprs_are_jaxs():
    """vjp and linearize of shard_maps in scans and fori_loops print as JAX's (the hoisted
    known shard_maps included), and the gradients are the closed forms'."""
    (ours, values), (theirs, _) = _in_scans(refjax, rjnp), _in_scans(real_jax, real_jnp)
    for a, b in zip(ours, theirs, strict=True):
        assert a == b
    assert sum("in_specs=()" in p for p in ours) == 2  # the empty hoisted shard_maps
    x, w = np.arange(4.0, dtype=np.float32) + 1, np.arange(2.0, dtype=np.float32) + 0.5
    step, dstep = np.sin(x) * x, np.cos(x) * x + np.sin(x)
    np.testing.assert_allclose(values[0][0], (np.cos(step) * step + np.sin(step)) * dstep,
                               rtol=2e-5)
    ws = np.tile(w, 2)  # mixed: c -> sin(w) * cos(c), twice
    c1 = np.sin(ws) * np.cos(x)
    dx = -np.sin(ws) * np.sin(c1) * -np.sin(ws) * np.sin(x)
    dw = np.cos(ws) * np.cos(c1) - np.sin(ws) * np.sin(c1) * np.cos(ws) * np.cos(x)
    np.testing.assert_allclose(values[1][0], dx, rtol=2e-5, atol=1e-6)
    np.testing.assert_allclose(values[1][1], dw.reshape(2, 2).sum(0), rtol=2e-5, atol=1e-6)


def _in_while_loops(jax, jnp):
    """linearize of shard_maps inside while_loops: JAX partially evaluates a while (it has no
    linearize rule) with its JaxprTrace, whose known shard_map outputs its known outputs
    before its residuals, those in its tracers' order."""
    mesh, _ = _programs(jax, jnp, _auto)
    P, lax = jax.P, jax.lax
    mixed = partial(jax.shard_map, mesh=mesh, in_specs=(P(), P("x")), out_specs=P("x"))(
        lambda w, c: jnp.sin(w) * jnp.cos(c) * c)

    def loop(x, w):
        return jnp.sum(lax.while_loop(lambda c: c[1] < 2, lambda c: (mixed(w, c[0]), c[1] + 1),
                                      (x, 0))[0])

    def scanned(x):  # the known loop's scan body named apart from the unknown loop's
        def step(c):
            return lax.scan(lambda a, _: (mixed(w, a), None), c, None, length=2)[0]
        return jnp.sum(lax.while_loop(lambda c: c[1] < 2, lambda c: (step(c[0]), c[1] + 1),
                                      (x, 0))[0])

    x, w = jnp.arange(4.0) + 1, jnp.arange(2.0) + 0.5
    printed = [str(jax.make_jaxpr(lambda x, w: jax.linearize(loop, x, w)[1](x, w))(x, w)),
               str(jax.make_jaxpr(lambda x, w: jax.linearize(
                   lambda x: loop(x, w), x)[1](x))(x, w)),
               str(jax.make_jaxpr(lambda x: jax.linearize(scanned, x)[1](x))(x))]
    return printed, jax.jvp(loop, (x, w), (x, w)) if jax is refjax else None


def test_while_jaxprs_are_jaxs():
    """linearize of a shard_map in a while_loop prints as JAX's (known outputs before
    residuals, residuals in JAX's order, the two loops' bodies named apart), and its jvp is a
    central finite difference's."""
    (ours, (y, dy)), (theirs, _) = _in_while_loops(refjax, rjnp), _in_while_loops(real_jax,
                                                                                  real_jnp)
    for a, b in zip(ours, theirs, strict=True):
        assert a == b
    x, w = np.arange(4.0) + 1, np.arange(2.0) + 0.5

    def loop(x, w):
        for _ in range(2):
            x = np.sin(np.tile(w, 2)) * np.cos(x) * x
        return x.sum()
    eps = 1e-6
    fd = (loop(x + eps * x, w + eps * w) - loop(x - eps * x, w - eps * w)) / (2 * eps)
    np.testing.assert_allclose(y, loop(x, w), rtol=1e-5)
    np.testing.assert_allclose(dy, fd, rtol=1e-4)


def _nested_program(jax, jnp):
    """(mesh, f): a shard_map over y nested in one over x (the inner one without mesh=: it
    holds the context's abstract mesh, x Manual), summed."""
    AT, P = jax.sharding.AxisType, jax.P
    mesh = jax.make_mesh((2, 2), ("x", "y"), axis_types=(AT.Auto, AT.Auto),
                         devices=jax.devices()[:4])
    inner = partial(jax.shard_map, in_specs=P(None, "y"), out_specs=P(None, "y"),
                    axis_names={"y"})
    outer = partial(jax.shard_map, in_specs=P("x"), out_specs=P("x"), axis_names={"x"})
    return mesh, lambda x: jnp.sum(outer(inner(lambda b: jnp.sin(b) * b))(x))


def _nested(jax, jnp):
    """vjp and linearize of the nested program."""
    mesh, f = _nested_program(jax, jnp)
    x = jnp.arange(16.0).reshape(4, 4) / 4
    with jax.set_mesh(mesh):
        printed = [str(jax.make_jaxpr(lambda x: jax.vjp(f, x)[1](1.0))(x)),
                   str(jax.make_jaxpr(lambda x, t: jax.linearize(f, x)[1](t))(x, x))]
        return printed, jax.vjp(f, x)[1](1.0)[0] if jax is refjax else None


def test_nested_jaxprs_are_jaxs():
    """Residuals of nested shard_maps are split over every axis they vary over, the enclosing
    shard_map's too (the inner residual reaches the transposed outer body varying over x, no
    pvary), as JAX's; the gradient is the closed form's."""
    (ours, grad), (theirs, _) = _nested(refjax, rjnp), _nested(real_jax, real_jnp)
    for a, b in zip(ours, theirs, strict=True):
        assert a == b
    assert "out_specs=(P(('x', 'y'),), P(('x', 'y'),), P(None, 'y'))" in ours[0]
    x = np.arange(16.0, dtype=np.float32).reshape(4, 4) / 4
    np.testing.assert_allclose(grad, np.cos(x) * x + np.sin(x), rtol=2e-5, atol=1e-6)


@pytest.mark.backends("xla")
def test_nested_residuals_run_on_xla():
    """The nested residuals' specs name the enclosing x, which JAX's shard_map API refuses:
    the xla backend drops it and tiles/reads back the blocks as numpy_ref does."""
    mesh, f = _nested_program(refjax, rjnp)
    x = np.arange(16.0, dtype=np.float32).reshape(4, 4) / 4
    with refjax.set_mesh(mesh):
        grad = refjax.grad(f)(x)
    np.testing.assert_allclose(grad, np.cos(x) * x + np.sin(x), rtol=2e-5, atol=1e-6)


def _constraints(jax, jnp):
    """with_sharding_constraint's equations: on a NamedSharding without a context mesh, on a
    PartitionSpec under `with mesh:` and under set_mesh (JAX's abstract mesh), transposed
    under grad, UNCONSTRAINED in a jit, on the Auto axis of a mixed mesh (the user's spec),
    inside a shard_map (its context mesh: x Manual)."""
    AT, P, wsc = jax.sharding.AxisType, jax.P, jax.lax.with_sharding_constraint
    mesh = jax.make_mesh((2,), ("x",), axis_types=(AT.Auto,), devices=jax.devices()[:2])
    mixed = jax.make_mesh((2, 2), ("x", "y"), axis_types=(AT.Explicit, AT.Auto),
                          devices=jax.devices()[:4])
    x = jnp.arange(4.0)
    printed = [jax.make_jaxpr(lambda x: wsc(x, jax.NamedSharding(mesh, P("x"))))(x)]
    with pytest.warns(DeprecationWarning, match="set_mesh"), mesh:  # both warn alike
        printed.append(jax.make_jaxpr(lambda x: wsc(x, P("x")))(x))
    with jax.set_mesh(mesh):
        printed.append(jax.make_jaxpr(jax.grad(lambda x: jnp.sum(wsc(x, P("x")) ** 2)))(x))
        printed.append(jax.make_jaxpr(jax.jit(lambda x: wsc(x, P(P.UNCONSTRAINED))))(x))
    with jax.set_mesh(mixed):
        y = jax.device_put(jnp.ones((4, 4)), jax.NamedSharding(mixed, P("x")))
        printed.append(jax.make_jaxpr(lambda y: wsc(y, P(None, "y")))(y))
        printed.append(jax.make_jaxpr(jax.shard_map(
            lambda b: wsc(b, P(None, "y")), in_specs=P("x"), out_specs=P("x"),
            axis_names={"x"}))(y))
    return [str(p) for p in printed]


def test_sharding_constraint_params_are_jaxs():
    """sharding_constraint prints JAX 0.10's context_mesh, layout and unconstrained_dims, and
    its sharding as JAX holds it, in every context JAX records a different one."""
    ours, theirs = _constraints(refjax, rjnp), _constraints(real_jax, real_jnp)
    for a, b in zip(ours, theirs, strict=True):
        assert a == b
    assert "context_mesh=Mesh()" in ours[0] and "unconstrained_dims=frozenset({0})" in ours[3]


def _reductions(jax, jnp):
    """sum, max and mean in shard_map bodies (over every axis and over x alone, the other
    Explicit, Auto, or Explicit beside an Auto x): reduce_sum's out_sharding as JAX's."""
    AT, P = jax.sharding.AxisType, jax.P
    printed = []
    for types in [(AT.Explicit, AT.Explicit), (AT.Auto, AT.Auto), (AT.Auto, AT.Explicit)]:
        mesh = jax.make_mesh((2, 2), ("x", "y"), axis_types=types, devices=jax.devices()[:4])
        with jax.set_mesh(mesh):
            spec = P("x", "y") if types[1] == AT.Explicit else P("x")
            y = jax.device_put(jnp.arange(16.0).reshape(4, 4), jax.NamedSharding(mesh, spec))
            partly = partial(jax.shard_map, in_specs=P("x"), out_specs=P("x"), axis_names={"x"})
            printed += [jax.make_jaxpr(partly(lambda b, r=r: r(b, axis=1)))(y)
                        for r in (jnp.sum, jnp.max, jnp.mean)]
            printed.append(jax.make_jaxpr(jax.shard_map(
                lambda b: jax.lax.psum(jnp.sum(b), ("x", "y")), in_specs=P("x", "y"),
                out_specs=P()))(y))
    return [str(p) for p in printed]


def test_reductions_in_bodies_are_jaxs():
    """Reductions in manual bodies print JAX's params (reduce_sum's out_sharding), on meshes
    whose other axis is Explicit or Auto."""
    ours, theirs = _reductions(refjax, rjnp), _reductions(real_jax, real_jnp)
    for a, b in zip(ours, theirs, strict=True):
        assert a == b
    assert sum("out_sharding=None" in p for p in ours) == 9


def _in_remat(jax, jnp):
    """vjp and linearize of shard_maps under jax.checkpoint (JAX partially evaluates remat
    with partial_eval_jaxpr_custom, the policy applied inside the shard_map too; its
    transpose partially evaluates the rematted body again before transposing)."""
    mesh, _ = _programs(jax, jnp, _auto)
    P = jax.P
    own = partial(jax.shard_map, mesh=mesh, in_specs=P("x"), out_specs=P("x"))(
        lambda b: jnp.sin(b) * b)
    policies = (None, jax.checkpoint_policies.everything_saveable)

    def f(x, policy=None):
        return jnp.sum(jax.checkpoint(lambda x: own(x) * 2.0, policy=policy)(x))

    x = jnp.arange(4.0) + 1
    printed = []
    for policy in policies:
        g = partial(f, policy=policy)
        printed.append(jax.make_jaxpr(lambda x, g=g: jax.vjp(g, x)[1](1.0))(x))
        printed.append(jax.make_jaxpr(lambda x, g=g: jax.linearize(g, x)[1](x))(x))
    printed = [str(p).replace(repr(policies[1]), "everything_saveable") for p in printed]
    if jax is not refjax:
        return printed, None
    return printed, [jax.vjp(partial(f, policy=p), x)[1](1.0)[0] for p in policies]


def test_remat_jaxprs_are_jaxs():
    """The forward shard_map computes only what the policy saves (nothing: the remat body
    recomputes the whole jvp shard_map; everything: residuals, non-input ones first), the
    transposed remat splits its shard_map as JAX's; the gradients are the closed form's."""
    (ours, grads), (theirs, _) = _in_remat(refjax, rjnp), _in_remat(real_jax, real_jnp)
    for a, b in zip(ours, theirs, strict=True):
        assert a == b
    x = np.arange(4.0, dtype=np.float32) + 1
    for g in grads:
        np.testing.assert_allclose(g, 2 * (np.cos(x) * x + np.sin(x)), rtol=2e-5)
