"""Mesh contexts as JAX 0.10 has them, each scenario run on refjax (both backends) and on
real JAX side by side: `with mesh:` (the seeds' pjit resource environment) versus
jax.set_mesh, bare PartitionSpecs in device_put / jit / pjit / with_sharding_constraint and
JAX's errors without a mesh, get_mesh / get_abstract_mesh / AbstractMesh, the seed's
pjit-under-`with mesh:` example, and jax.typeof of arrays on Explicit, mixed and Auto meshes."""
import numpy as np
import pytest
from jax_recordings import on_jax
from side_by_side import both, outcome

import jax as real_jax

import refjax

pytestmark = [pytest.mark.backends("numpy_ref", "xla"),
              # `with mesh:` and pjit warn as deprecated, in JAX as here (tested below)
              pytest.mark.filterwarnings("ignore::DeprecationWarning")]


def grid(jax):
    return jax.sharding.Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y"))


def seed_pjit_scenario(jax, jnp):
    """The seed document's jax.experimental.maps.Mesh example, with JAX 0.10's names (Mesh from
    jax.sharding; pjit's *_axis_resources are gone, as the last thunk shows)."""
    import importlib
    pjit = importlib.import_module(f"{jax.__name__}.experimental.pjit").pjit
    P = jax.sharding.PartitionSpec
    inp = np.arange(16).reshape((8, 2))
    Mesh = jax.sharding.Mesh
    devices = np.array(jax.devices()).reshape(4, 2)
    outs = []
    global_mesh = Mesh(devices, ("x", "y"))
    with global_mesh:
        outs.append(pjit(lambda x: x, in_shardings=None, out_shardings=None)(inp))
    with Mesh(devices, ("x", "y")) as global_mesh:
        outs.append(pjit(lambda x: x, in_shardings=None, out_shardings=None)(inp))
    with global_mesh as m:
        outs.append(pjit(lambda x: x * 2, in_shardings=P("x", "y"), out_shardings=P("y"))(inp))
        f = pjit(lambda x: x @ x.T, out_shardings=P("y", "x"))
        outs.append(f(inp))
    return [lambda: [(o, o.sharding, o.shape) for o in outs], lambda: m is global_mesh,
            lambda: outs[3].addressable_shards[0].data.shape,
            lambda: pjit(lambda x: x, in_axis_resources=None)(inp),
            lambda: pjit(lambda x: x * 2, in_shardings=P("x", "y"))(inp)]


def test_seed_pjit_under_with_mesh_as_jax():
    theirs, ours = both(seed_pjit_scenario)
    assert ours == theirs
    assert ours[0][0] == "ok" and ours[-1][0] == "RuntimeError"


def context_checks(jax, jnp, mesh):
    """(tag, thunk) pairs whose outcome depends on the mesh context they run in."""
    P = jax.P
    inp = np.arange(16.0).reshape(8, 2)
    wsc = jax.lax.with_sharding_constraint
    pjit = __import__(f"{jax.__name__}.experimental.pjit", fromlist=["pjit"]).pjit
    return [
        ("jit-in", lambda: jax.jit(lambda x: x * 2, in_shardings=P("x", "y"))(inp).sharding),
        ("jit-out", lambda: jax.jit(lambda x: x * 2, out_shardings=P("x"))(inp).sharding),
        ("pjit", lambda: pjit(lambda x: x * 2, in_shardings=P("x"), out_shardings=P("y"))(inp)
         .sharding),
        ("put", lambda: jax.device_put(inp, P("x")).sharding),
        ("put-tree", lambda: [a.sharding for a in jax.device_put([inp, inp], P("y"))]),
        ("wsc", lambda: jax.jit(lambda x: wsc(x * 2, P("x", "y")))(inp).sharding),
        ("wsc-eager", lambda: wsc(jnp.asarray(inp), P(None, "y")).sharding),
        ("get_mesh", lambda: jax.sharding.get_mesh()),
        ("abstract", lambda: jax.sharding.get_abstract_mesh()),
        ("typeof", lambda: jax.typeof(jax.device_put(inp, jax.NamedSharding(mesh, P("x"))))),
        ("smap", lambda: jax.jit(jax.shard_map(lambda a: a * 2, in_specs=P("x"),
                                               out_specs=P("x")))(inp).sharding)]


def contexts_scenario(jax, jnp):
    """Every check run with no mesh, under `with mesh:`, under set_mesh, and under set_mesh
    inside `with mesh:` (pjit then takes the `with mesh:` one, as JAX's does)."""
    mesh = grid(jax)
    other = jax.sharding.Mesh(np.array(jax.devices()[:4]).reshape(2, 2), ("x", "y"))
    checks = context_checks(jax, jnp, mesh)
    results = [("none", [(t, outcome(f)) for t, f in checks])]
    with mesh:
        results.append(("with", [(t, outcome(f)) for t, f in checks]))
        with jax.set_mesh(other):
            results.append(("both", [(t, outcome(f)) for t, f in checks]))
    with jax.set_mesh(mesh):
        results.append(("set", [(t, outcome(f)) for t, f in checks]))
    return [lambda r=r: r for r in results]


def test_mesh_contexts_as_jax():
    theirs, ours = both(contexts_scenario)
    assert ours == theirs


def test_set_mesh_repr_as_jax():
    """A notebook cell ending in `jax.set_mesh(mesh)` shows the object's repr: JAX's text, with
    the object's own address."""
    shown = []
    for jax in (real_jax, refjax):
        with jax.set_mesh(None):  # restores the empty mesh on exit
            setter = jax.set_mesh(grid(jax))
            shown.append(repr(setter).replace(hex(id(setter)), "0x"))
    assert shown[1] == shown[0] == "<jax._src.sharding_impls.set_mesh object at 0x>"


def pspec_errors_scenario(jax, jnp):
    P = jax.P
    inp = np.ones((8, 2))
    return [lambda: jax.jit(lambda x: x * 2, in_shardings=P("x", "y"))(inp),
            lambda: jax.jit(lambda x: x * 2, out_shardings=P("x", "y"))(inp),
            lambda: jax.jit(lambda x: jax.lax.with_sharding_constraint(x, P("x")))(inp),
            lambda: jax.lax.with_sharding_constraint(jnp.ones(8), P("x")),
            lambda: jax.device_put(inp, P("x")),
            lambda: jax.device_put([inp], [P("x")]),
            lambda: jax.set_mesh(grid(jax).abstract_mesh),
            lambda: jax.set_mesh("x")]


def test_partition_spec_without_mesh_errors_as_jax():
    theirs, ours = both(pspec_errors_scenario)
    assert ours[:6] == theirs[:6] and ours[7:] == theirs[7:]
    assert ours[6][1].split("<class")[0] == theirs[6][1].split("<class")[0]  # the class' path
    assert [c for c, _ in ours] == ["RuntimeError"] * 4 + ["ValueError"] * 4


def jit_cache_scenario(jax, jnp):
    """One jitted function with spec shardings, called under two meshes: each call resolves
    against its own context mesh (the trace cache keys on it)."""
    f = jax.jit(lambda x: x + 1, out_shardings=jax.P("x"))
    m1 = grid(jax)
    m2 = jax.sharding.Mesh(np.array(jax.devices()[::-1]).reshape(2, 4), ("x", "y"))
    x = np.arange(8.0)
    out = []
    for mesh in (m1, m2, m1):
        with jax.set_mesh(mesh):
            r = f(x)
            out.append((r, r.sharding, sorted((s.device.id, str(s.index)) for s in
                                              r.addressable_shards)))
    return [lambda: out]


def test_jit_cache_follows_context_mesh_as_jax():
    theirs, ours = both(jit_cache_scenario)
    assert ours == theirs


def abstract_mesh_scenario(jax, jnp):
    mesh = grid(jax)
    am = mesh.abstract_mesh
    T = jax.sharding.AxisType
    AM = jax.sharding.AbstractMesh
    return [lambda: repr(am), lambda: str(am), lambda: am.axis_names, lambda: am.axis_sizes,
            lambda: am.shape_tuple, lambda: dict(am.shape), lambda: am.size, lambda: am.empty,
            lambda: am == mesh.abstract_mesh, lambda: hash(am) == hash(mesh.abstract_mesh),
            lambda: am.abstract_mesh is am, lambda: am == AM((4, 2), ("x", "y")),
            lambda: AM((4, 2), ("x", "y")), lambda: AM((4, 2), ("x", "y"), (T.Explicit, T.Auto)),
            lambda: AM((4, 2), ("x", "y"), (T.Explicit, T.Auto)).explicit_axes,
            lambda: am.update(axis_types=(T.Explicit,) * 2),
            lambda: am.update_axis_types({"y": T.Manual}).manual_axes,
            lambda: am.are_all_axes_auto, lambda: jax.sharding.get_abstract_mesh(),
            lambda: AM((), ()), lambda: AM((2,), ("a", "b"))]


def test_abstract_mesh_as_jax():
    theirs, ours = both(abstract_mesh_scenario)
    assert ours[:-1] == theirs[:-1]
    assert ours[-1][0] == theirs[-1][0] == "ValueError"  # JAX's names its safe_zip only


def typeof_scenario(jax, jnp):
    T = jax.sharding.AxisType
    out = []
    for types in ((T.Explicit, T.Explicit), (T.Explicit, T.Auto), (T.Auto, T.Auto)):
        mesh = jax.make_mesh((4, 2), ("x", "y"), axis_types=types)
        for spec in (jax.P("x", "y"), jax.P(("x", "y")), jax.P(None, "y"), jax.P(),
                     jax.P("y", "x"), jax.P(None, ("y", "x")), jax.P("x")):
            t = jax.typeof(jax.device_put(jnp.ones((8, 8)), jax.NamedSharding(mesh, spec)))
            out.append((str(t), repr(t), str(t.sharding), str(t.sharding.spec)))
    return [lambda: out, lambda: jax.typeof(1.0), lambda: jax.typeof(np.float32(1)),
            lambda: repr(jax.typeof(jnp.ones((2, 3), jnp.int8))), lambda: jax.typeof(True),
            lambda: jax.typeof(jnp.ones(3)).sharding, lambda: jax.typeof([1.0]),
            lambda: jax.typeof(jax.device_put(jnp.ones(3), jax.devices()[2])).sharding,
            lambda: jax.jit(lambda x: str(jax.typeof(x)) and x)(1.0),
            lambda: jax.typeof(jnp.ones(3)) == jax.typeof(jnp.zeros(3))]


def test_typeof_as_jax():
    theirs, ours = both(typeof_scenario)
    assert ours[0] == theirs[0]
    assert [c for c, _ in ours] == [c for c, _ in theirs]
    assert ours[1:6] == theirs[1:6] and ours[7:] == theirs[7:]  # 6: JAX quotes the repr


def test_typeof_of_traced_values_under_explicit_axes():
    """Traced types carry the sharding on Explicit axes (tests/test_explicit_sharding.py);
    an unsharded traced scalar's is replicated on the context's abstract mesh, as JAX's."""
    def seen_in_jit(lib):
        seen = []
        mesh = lib.make_mesh((8,), ("x",), axis_types=(lib.sharding.AxisType.Explicit,))
        with lib.set_mesh(mesh):
            lib.jit(lambda x: seen.append((str(lib.typeof(x)), str(lib.typeof(x).sharding)))
                    or x)(1.0)
        return seen
    assert seen_in_jit(refjax) == on_jax(seen_in_jit)
    assert str(refjax.jit(lambda x: print(refjax.typeof(x)) or x)(1.0)) == "1.0"


def placement_scenario(jax, jnp):
    """Under set_mesh, computations run on the mesh (results replicated over it unless laid
    out otherwise, committed); a committed argument on other devices is an error. Under
    `with mesh:` only pjit runs on the mesh."""
    mesh = grid(jax)
    other = jax.sharding.Mesh(np.array(jax.devices()[:4]), ("z",))
    pjit = __import__(f"{jax.__name__}.experimental.pjit", fromlist=["pjit"]).pjit
    a = jnp.arange(8.0)
    on3 = jax.device_put(a, jax.devices()[3])
    s1 = jax.device_put(a, jax.NamedSharding(mesh, jax.P("x")))
    s2 = jax.device_put(a, jax.NamedSharding(other, jax.P("z")))
    checks = [lambda: jax.jit(lambda x: x * 2)(a), lambda: a * 2, lambda: jnp.ones(3),
              lambda: jnp.sin(on3), lambda: jax.jit(lambda x: x + 1)(on3), lambda: s2 + 1,
              lambda: s1 + 1, lambda: jax.jit(lambda x: x.sum())(s1), lambda: a[0],
              lambda: pjit(lambda x: x * 2)(a), lambda: jax.jit(lambda: jnp.zeros(2))(),
              lambda: float(a[1]), lambda: jax.jit(lambda x: (x, x * 2))(a)]

    def run():
        return [outcome(lambda: _placed(f())) for f in checks]
    results = [run()]
    with jax.set_mesh(mesh):
        results.append(run())
    with mesh:
        results.append(run())
    return [lambda r=r: r for r in results]


def _placed(r):
    if isinstance(r, tuple):
        return [_placed(v) for v in r]
    if isinstance(r, float):
        return r
    return np.asarray(r).tolist(), str(r.sharding), r.committed


def test_computations_under_a_context_mesh_as_jax():
    theirs, ours = both(placement_scenario)
    assert ours == theirs


@pytest.mark.backends()
def test_make_mesh_default_axis_types_option():
    """The seeds' Auto by default; JAX 0.10's Explicit with the documented option (compared
    with real JAX's default)."""
    import jax as real_jax
    assert refjax.make_mesh((2,), ("x",)).axis_types == (refjax.sharding.AxisType.Auto,)
    with refjax.config.override(refjax_make_mesh_axis_types="explicit"):
        mesh = refjax.make_mesh((4, 2), ("x", "y"))
    assert str(mesh) == str(real_jax.make_mesh((4, 2), ("x", "y")))
    with pytest.raises(ValueError, match=r"new enum value must be in \[.auto., .explicit.\]"):
        refjax.config.update("refjax_make_mesh_axis_types", "Explicit")


def reshard_scenario(jax, jnp):
    P, T = jax.P, jax.sharding.AxisType
    e = jax.make_mesh((4, 2), ("x", "y"), axis_types=(T.Explicit,) * 2)
    a = jax.make_mesh((4, 2), ("x", "y"), axis_types=(T.Auto,) * 2)
    x = jnp.arange(16.0).reshape(8, 2)
    NS = jax.NamedSharding

    def placed(r):
        return r, r.sharding, jax.typeof(r), sorted((s.device.id, str(s.index))
                                                    for s in r.addressable_shards)
    out = [lambda: jax.reshard(x, P("x")), lambda: jax.reshard(x, NS(a, P("x"))),
           lambda: placed(jax.reshard(x, NS(e, P("x")))),
           lambda: placed(jax.reshard(x, NS(e, P(None, ("y",))))),
           lambda: jax.jit(lambda v: jax.reshard(v, NS(a, P("x"))))(x),
           lambda: placed(jax.jit(lambda v: jax.reshard(v, NS(e, P("y"))) * 2)(
               jax.device_put(x, NS(e, P())))),
           lambda: [placed(r) for r in jax.sharding.reshard([x, x], [NS(e, P("x")),
                                                                  NS(e, P(None, "y"))])]]
    results = [outcome(f) for f in out]
    for mesh in (a, e):
        with jax.set_mesh(mesh):
            results += [outcome(lambda: placed(jax.reshard(x, P("x")))),
                        outcome(lambda: jax.reshard(x, P("x", "y", "x"))),
                        outcome(lambda: jax.reshard(x, P("q")))]
    return [lambda r=r: r for r in results]


def test_reshard_as_jax():
    theirs, ours = both(reshard_scenario)
    # JAX's messages end with the user's source line; and its duplicate-axes error does not
    # list the mesh axes refjax's NamedSharding names
    clip = lambda r: (r[0], r[1][0], r[1][1].split(" This error occurs")[0].split(" (mesh")[0]) \
        if r[1][0] != "ok" else r  # noqa: E731
    assert [clip(o) for o in ours] == [clip(t) for t in theirs]
