"""Values on a mesh of Auto axes typed as JAX 0.10.2 types them (issue #15): an aval carries
its Auto mesh (spec all None), so grad's seed is a `reshard 1.0` to an output's Auto mesh
other than the context's, a reshard to an Auto mesh types its result on that mesh (eagerly
and under jit; JAX's ValueError when it then meets a value typed on another mesh's Explicit
axes), a cond whose branches reshard there is typed, named and laid out as JAX's, and under a
set_mesh a value on one device is typed on no mesh while what operations make of it is on
the context mesh. Each program runs on real JAX (8 CPU devices; recorded) and on refjax; what
it shows (jaxprs, jax.typeof, shardings, layouts shard by shard, values, errors' classes and
texts) is compared."""
import re

import numpy as np
import pytest
from jax_recordings import on_jax

import refjax

pytestmark = pytest.mark.backends("numpy_ref", "xla")


def _mesh(jax, kinds, names=("x", "y"), devices=None):
    types = tuple(getattr(jax.sharding.AxisType, k) for k in kinds)
    if devices is None:
        return jax.make_mesh((2, 4), names, axis_types=types)
    devices = np.array([jax.devices()[i] for i in devices]).reshape(2, 4)
    return jax.sharding.Mesh(devices, names, axis_types=types)


def _layout(a):
    """(device id, (start, stop) per dimension) of each shard, by device."""
    return sorted((s.device.id, tuple(sl.indices(d)[:2] for sl, d in zip(s.index, a.shape)))
                  for s in a.addressable_shards)


def _shown(jax, run):
    """What `run(show)` shows through `show(thunk)`: per thunk its result's sharding, type,
    type's mesh, layout and values, or its error's class and message."""
    out = []

    def show(thunk):
        try:
            r = thunk()
        except Exception as e:  # the error JAX raises is part of what is compared
            # (without the lines of this file its message quotes, which edits above move)
            out.append((type(e).__name__, re.sub(r"(test_auto_mesh_types\.py):\d+", r"\1",
                                                 str(e))))
            return
        if isinstance(r, str):
            out.append(r)
            return
        t = jax.typeof(r)
        out.append((repr(r.sharding), str(t), repr(t.sharding), _layout(r),
                    np.asarray(r).tolist()))
    run(show)
    return out


def _same_as_jax(program):
    assert _shown(refjax, program(refjax)) == on_jax(lambda jax: _shown(jax, program(jax)))


# ---------------------------------------------------------------- 1. grad's seed


def _grads(jax):
    P, NS = jax.P, jax.NamedSharding
    mesh = _mesh(jax, ("Auto", "Auto"))

    def smap(x):
        return jax.shard_map(lambda a: a * 2, mesh=mesh, in_specs=P("x"),
                             out_specs=P("x"))(x).sum()

    def psummed(x):
        return jax.shard_map(lambda a: jax.lax.psum(a.sum(), "x"), mesh=mesh,
                             in_specs=P("x"), out_specs=P())(x)

    def run(show):
        plain = jax.numpy.arange(8.0)
        put = jax.device_put(plain, NS(mesh, P("x")))
        for f in (smap, psummed, lambda x: (x * x).sum()):
            for x in (plain, put):
                show(lambda: str(jax.make_jaxpr(jax.grad(f))(x)))
                show(lambda: str(jax.make_jaxpr(lambda x: jax.vjp(f, x)[1](1.0))(x)))
                show(lambda: str(jax.make_jaxpr(lambda x: jax.linearize(f, x)[1](x))(x)))
                show(lambda: jax.grad(f)(x))
                show(lambda: jax.jit(jax.grad(f))(x))
                with jax.set_mesh(mesh):  # on the context mesh: no reshard
                    show(lambda: str(jax.make_jaxpr(jax.grad(f))(x)))
        ones = jax.numpy.ones
        for f in (lambda a: (a[:, None] * ones((8, 3))).sum(),  # transposes typed on the mesh
                  lambda a: jax.numpy.broadcast_to(a, (2, 8)).sum(),
                  lambda a: (a.reshape(2, 4) @ ones((4, 3))).sum(),
                  lambda a: (a + ones((2, 8))).sum()):
            show(lambda: str(jax.make_jaxpr(jax.grad(f))(put)))
    return run


def test_grads_seed_is_resharded_to_an_outputs_auto_mesh():
    """make_jaxpr of grad (and of vjp/linearize, which take no seed) of a shard_map on an
    Auto mesh, and of a function of an Array committed to one: JAX's `reshard 1.0` outside
    set_mesh, none under it; transposes (reduce_sum, reshape) naming the cotangent's Auto
    type as their out_sharding; the gradients' values, types and layouts eagerly and
    jitted."""
    _same_as_jax(_grads)


# ---------------------------------------------------------------- 2. reshard to Auto meshes


def _reshards(jax):
    P, NS, reshard = jax.P, jax.NamedSharding, jax.sharding.reshard
    auto = _mesh(jax, ("Auto", "Auto"))
    other = _mesh(jax, ("Auto", "Auto"), ("a", "b"), range(7, -1, -1))
    explicit = _mesh(jax, ("Explicit", "Explicit"))
    small = jax.sharding.Mesh(np.array(jax.devices()[4:]).reshape(2, 2), ("a", "b"),
                              axis_types=(jax.sharding.AxisType.Auto,) * 2)
    host = np.arange(32.0, dtype=np.float32).reshape(8, 4)

    def inside(m, show):
        def f(v):
            r = reshard(v, NS(m, P()))
            show(lambda: f"{jax.typeof(r)} {jax.typeof(r).sharding!r} "
                         f"{jax.sharding.get_abstract_mesh()}")
            return r
        return f

    def run(show):
        xs = [jax.device_put(host, NS(auto, P("x"))),
              jax.device_put(host, NS(explicit, P("x", "y"))), jax.numpy.asarray(host),
              jax.device_put(host, jax.devices()[3])]
        for x in xs:
            for m in (auto, other, small):
                show(lambda: reshard(x, NS(m, P())))
                show(lambda: jax.jit(inside(m, show))(x))
                show(lambda: jax.jit(lambda v: reshard(v, NS(m, P())) + v)(x))
                show(lambda: reshard(x, NS(m, P())) + x)
    return run


def test_reshard_to_an_auto_mesh_eagerly_and_under_jit():
    """Same and other (reversed) devices, from an Auto mesh, an Explicit one, one device
    (uncommitted and committed): the value left where it is, named on the target mesh (by
    axis position; on a mesh of another size JAX's GSPMDSharding, named by its HLO
    sharding), typed on it; inside jit its type and the (empty) abstract mesh; `+ v`
    typed on another mesh's Explicit axes is JAX's ValueError, on another Auto mesh untyped;
    eagerly on other devices JAX's wording (a jit of `reshard` on the mesh's devices)."""
    _same_as_jax(_reshards)


def _eager_reshards(jax):
    P, NS, reshard = jax.P, jax.NamedSharding, jax.sharding.reshard
    reversed_ = range(7, -1, -1)
    meshes = [_mesh(jax, kinds, ("a", "b"), reversed_) for kinds in
              (("Explicit", "Explicit"), ("Explicit", "Auto"), ("Auto", "Auto"))]
    host = np.arange(32.0, dtype=np.float32).reshape(8, 4)

    def run(show):
        for x in (jax.device_put(host, NS(_mesh(jax, ("Auto", "Auto")), P("x"))),
                  jax.device_put(host, jax.devices()[3]), host):
            for m in meshes:
                show(lambda: reshard(x, NS(m, P())))
    return run


def test_eager_reshard_words_device_errors_as_jax():
    """Eagerly, onto meshes of Explicit, mixed and Auto axes on other devices: JAX's
    ValueError naming `args[0] of reshard` and the mesh's devices as jit's context mesh (a
    with_sharding_constraint's `_identity_fn` wording before, off all-Explicit meshes)."""
    _same_as_jax(_eager_reshards)


def _conds(jax):
    P, NS, reshard, lax = jax.P, jax.NamedSharding, jax.sharding.reshard, jax.lax
    auto = _mesh(jax, ("Auto", "Auto"))
    other = _mesh(jax, ("Auto", "Auto"), ("a", "b"), range(7, -1, -1))
    explicit = _mesh(jax, ("Explicit", "Explicit"))
    host = np.arange(32.0, dtype=np.float32).reshape(8, 4)

    def run(show):
        for x in (jax.device_put(host, NS(auto, P("x"))),
                  jax.device_put(host, NS(explicit, P("x", "y"))), jax.numpy.asarray(host)):
            for m in (auto, other):
                to = NS(m, P())
                both = lambda p, v: lax.cond(  # noqa: E731
                    p, lambda v: reshard(v, to), lambda v: reshard(v * 2, to), v)
                one = lambda p, v: lax.cond(  # noqa: E731
                    p, lambda v: reshard(v, to), lambda v: v * 2, v)
                for f in (both, one):
                    show(lambda: str(jax.make_jaxpr(f)(True, x)))
                    show(lambda: jax.jit(f)(True, x))
                    show(lambda: jax.jit(f)(False, x))
    return run


def test_cond_whose_branches_reshard_to_an_auto_mesh():
    """The result is typed on the branches' Auto mesh (the first branch's where they differ
    in Auto meshes only; JAX's TypeError against an Explicit type), named there and laid out
    where the branches leave the value (refjax replicated it before)."""
    _same_as_jax(_conds)


# ---------------------------------------------------------------- 3. typeof under set_mesh


def _types(jax):
    P, NS, jnp = jax.P, jax.NamedSharding, jax.numpy
    mesh = _mesh(jax, ("Auto", "Auto"))

    def described(v):
        t = jax.typeof(v)
        return f"{t} {t.sharding.mesh.axis_names} {t.sharding.spec}"

    def run(show):
        on_one = jnp.arange(8.0)
        committed = jax.device_put(jnp.arange(8.0), NS(mesh, P("x")))

        def h(a, b):
            for v in (a, b, a * 2, a + b, a.sum(), b.sum(), jnp.ones(3), jnp.asarray(1.0),
                      jnp.asarray(1.0) * a, jnp.broadcast_to(1.0, (3,)), on_one):
                show(lambda: described(v))
            return a + b

        show(lambda: jax.jit(h)(on_one, committed))  # outside set_mesh
        with jax.set_mesh(mesh):
            made = jnp.arange(8.0)
            for v in (on_one, made, committed):
                show(lambda: described(v))
            show(lambda: jax.jit(h)(on_one, made))
            jax.grad(lambda a: (show(lambda: described(a)), a.sum())[1])(on_one)
            jax.vmap(lambda a: (show(lambda: described(a)), a)[1])(on_one)
            jax.vmap(lambda a: (show(lambda: described(a)), a)[1])(committed)
    return run


def test_types_of_values_on_and_off_an_auto_mesh():
    """jax.typeof inside and outside jit, grad and vmap: Arrays committed to an Auto mesh
    and what operations make of them carry it (also without set_mesh); under set_mesh a
    value on one device and constants are on no mesh, operations' results on the context
    mesh."""
    _same_as_jax(_types)
