"""Reshards and sharding types inside jit where refjax differed from JAX (issue #15): reshard
to a mesh of Auto axes on other devices, with_sharding_constraint under Explicit and mixed
context meshes, cond branches resharding to other meshes, the layouts and types indexing
gives (slice, dynamic_slice, gather, squeeze, rev; eager indexing of a sharded Array is a
gather in JAX), and scan over xs sharded on the scanned axis. Each program runs on real JAX
0.10.2 (8 CPU devices) and on refjax and is compared: what it prints (typeof, jaxprs),
results' types, shardings, values and layouts shard by shard, errors' classes and texts."""
import jax as real_jax
import numpy as np
import pytest

import refjax

pytestmark = pytest.mark.backends("numpy_ref", "xla")

_JAX = {}  # a program's outcome on real JAX, computed once for both backends' runs


def layout(a):
    """device id -> index (start, stop) pairs: where each shard of `a` lives."""
    return {s.device.id: tuple(sl.indices(d)[:2] for sl, d in zip(s.index, a.shape))
            for s in a.addressable_shards}


def outcome(lib, program):
    """What program(lib, show) shows, then per result its type, sharding, values and layout;
    a raised error as its class and its message's first 160 characters (refjax prefixes
    some with the operation's name, as `lax.scan: `, which is dropped)."""
    shown = []
    try:
        outs = program(lib, lambda *xs: shown.append(" ".join(map(str, xs))))
    except Exception as e:  # the error JAX raises is part of what is compared
        message = str(e).removeprefix("lax.scan: ")
        return shown + [(type(e).__name__, message[:160])]
    return shown + [(str(lib.typeof(o)), str(o.sharding), np.asarray(o).tolist(), layout(o))
                    for o in outs]


def same_as_jax(program):
    key = program.__qualname__
    if key not in _JAX:
        _JAX[key] = outcome(real_jax, program)
    ours = outcome(refjax, program)
    assert ours == _JAX[key]
    return ours


def mesh(lib, kinds, shape=(2, 4), names=("x", "y"), devices=None):
    types = tuple(getattr(lib.sharding.AxisType, k) for k in kinds)
    if devices is None:
        return lib.make_mesh(shape, names, axis_types=types)
    devices = np.array([lib.devices()[i] for i in devices]).reshape(shape)
    return lib.sharding.Mesh(devices, names, axis_types=types)


def arange(lib, m, *spec, shape=(8, 4)):
    x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    return lib.device_put(x, lib.sharding.NamedSharding(m, lib.P(*spec)))


# ---------------------------------------------------------------- 1. reshard to Auto axes

def test_reshard_inside_jit_to_a_mesh_of_auto_axes_on_other_devices():
    """JAX accepts it: the reshard asks for no devices, types its result on no Explicit axis
    and leaves the value where it is, named on that mesh made of the computation's devices
    (here the reversed devices' 2x4 mesh: P('a', 'b'), the operand's own layout)."""
    def program(lib, show):
        other = mesh(lib, ("Auto", "Auto"), names=("a", "b"), devices=range(7, -1, -1))
        m = mesh(lib, ("Explicit", "Explicit"))
        outs = []
        for x in (arange(lib, m, "x", "y"), arange(lib, m)):
            def f(v):  # (the jaxpr shows the types inside)
                r = lib.sharding.reshard(v, lib.NamedSharding(other, lib.P()))
                return r, r * 2
            show(lib.make_jaxpr(f)(x))
            outs += lib.jit(f)(x)
        return outs
    shown = same_as_jax(program)
    assert shown[-4][1].endswith("spec=P('a', 'b'), memory_kind=device)")


def test_reshard_to_a_smaller_auto_mesh_keeps_the_layout_untyped():
    """On a 4-device mesh of Auto axes JAX names the result a GSPMDSharding (its HLO
    sharding's text), typed on that mesh: compared with JAX's with its type and layout."""
    def program(lib, show):
        small = mesh(lib, ("Auto", "Auto"), shape=(2, 2), names=("a", "b"), devices=range(4, 8))
        x = arange(lib, mesh(lib, ("Explicit", "Explicit")), "x", "y")
        r = lib.jit(lambda v: lib.sharding.reshard(v, lib.NamedSharding(small, lib.P())))(x)
        show(lib.typeof(r), repr(lib.typeof(r).sharding), layout(r),
             r.sharding.is_equivalent_to(x.sharding, 2), type(r.sharding).__name__)
        return (r,)
    assert same_as_jax(program)[1][1] == "GSPMDSharding({devices=[2,4]<=[8]}, memory_kind=device)"


def test_reshard_to_an_auto_mesh_of_another_shape_is_named_where_jax_fails():
    """JAX 0.10.2 raises an IndivisibleError from inside its own naming of the result (a
    layout over 4x2 devices named on a 2x4 mesh); refjax keeps the operand's layout, which
    is checked shard by shard against the operand, and types it on no Explicit axis."""
    def program(lib, show):
        other = mesh(lib, ("Auto", "Auto"), names=("a", "b"), devices=range(7, -1, -1))
        x = arange(lib, mesh(lib, ("Auto", "Auto"), shape=(4, 2), names=("a", "b")), "a")
        return x, lib.jit(lambda v: lib.sharding.reshard(v, lib.NamedSharding(other, lib.P())))(x)
    assert outcome(real_jax, program)[0][0] == "IndivisibleError"
    x, r = program(refjax, print)
    assert layout(r) == layout(x) and str(refjax.typeof(r)) == "float32[8,4]"
    np.testing.assert_array_equal(np.asarray(r), np.asarray(x))


def test_reshard_cotangents_take_the_operands_type():
    """grad through a reshard reshards the cotangent to the operand's type (JAX's transpose;
    refjax used the forward target's). Through a reshard to Auto axes JAX 0.10.2 fails with
    a ValueError about a device assignment of length 1; refjax gives the cotangent the
    operand's type, checked by hand (d/dx sum(reshard(x)**2) = 2x)."""
    def program(lib, show):
        m = mesh(lib, ("Explicit", "Explicit"))
        x = arange(lib, m, "x", "y")
        with lib.set_mesh(m):
            f = lambda u: (lib.sharding.reshard(u, lib.P()) ** 2).sum()  # noqa: E731
            show(lib.make_jaxpr(lib.grad(f))(x))
            return (lib.jit(lib.grad(f))(x),)
    same_as_jax(program)
    other = mesh(refjax, ("Auto", "Auto"), names=("a", "b"), devices=range(7, -1, -1))
    x = arange(refjax, mesh(refjax, ("Explicit", "Explicit")), "x", "y")
    g = refjax.jit(refjax.grad(lambda u: (refjax.sharding.reshard(
        u, refjax.NamedSharding(other, refjax.P())) ** 2).sum()))(x)
    assert str(refjax.typeof(g)) == "float32[8@x,4@y]" and layout(g) == layout(x)
    np.testing.assert_array_equal(np.asarray(g), 2 * np.asarray(x))


def test_vjp_cotangents_of_another_sharding_type_are_refused():
    """A pullback given a cotangent typed on the mesh other than its output (replicated for
    f32[8@x]) raises JAX's ValueError; untyped ones (NumPy, made off the mesh) and ones of
    the output's type are taken (refjax took any sharding type)."""
    def program(lib, show):
        m = mesh(lib, ("Explicit",), shape=(8,), names=("x",))
        off_mesh = lib.numpy.ones(8)
        with lib.set_mesh(m):
            x = lib.device_put(np.arange(8.0, dtype=np.float32), lib.P("x"))
            _, pullback = lib.vjp(lib.numpy.sin, x)
            outs = []
            for ct in (np.ones(8, np.float32), off_mesh, lib.numpy.ones(8),
                       lib.device_put(np.ones(8, np.float32), lib.P()),
                       lib.device_put(np.ones(8, np.float32), lib.P("x"))):
                try:
                    outs.append(pullback(ct)[0])
                except ValueError as e:
                    show(str(e))
            return outs
    assert len(same_as_jax(program)) == 2 + 3


def test_checkpoint_keeps_its_arguments_sharding_types():
    """jax.checkpoint traces its function on its arguments' sharding types (refjax dropped
    them: a shard_map inside could not infer its in_specs, and results lost their type)."""
    def program(lib, show):
        m = mesh(lib, ("Explicit",), shape=(4,), names=("x",))
        with lib.set_mesh(m):
            x = lib.device_put(np.arange(8.0, dtype=np.float32), lib.P("x"))
            f = lib.checkpoint(lambda v: lib.shard_map(lambda a: a * 2, out_specs=lib.P("x"))(v))
            g = lib.checkpoint(lambda v: v * 2)
            show(lib.make_jaxpr(g)(x))
            return f(x), lib.jit(f)(x), lib.grad(lambda v: f(v).sum())(x), g(x)
    same_as_jax(program)


# ---------------------------------------------------------------- 2. with_sharding_constraint

SPECS = [(), ("x",), (None, "y"), ("y",)]


@pytest.mark.parametrize("kinds", [("Explicit", "Explicit"), ("Explicit", "Auto"),
                                   pytest.param(("Auto", "Auto"), marks=pytest.mark.thorough)],
                         ids=["explicit", "mixed", "auto"])
def test_with_sharding_constraint_under_explicit_mixed_and_auto_context_meshes(kinds):
    """All Explicit: an assert (x unchanged when its type is the spec, else JAX's
    AssertionError pointing to reshard); mixed: Explicit axes refused (ValueError), the type
    kept and the Auto axes laid out beside it (P(('x', 'y'),)); Auto: a layout."""
    def program(lib, show):
        m = mesh(lib, kinds)
        outs = []
        with lib.set_mesh(m):
            for x in (arange(lib, m, "x", "y"), arange(lib, m)):
                for spec in SPECS:
                    def f(v):
                        r = lib.lax.with_sharding_constraint(v, lib.P(*spec))
                        show("in jit", lib.typeof(r))
                        return r
                    try:
                        outs.append(lib.jit(f)(x))
                    except (AssertionError, ValueError) as e:
                        show(type(e).__name__, str(e)[:200])
        return outs
    program.__qualname__ += str(kinds)
    same_as_jax(program)


def test_results_on_mixed_meshes_are_named_by_their_type():
    """On a mesh of Explicit and Auto axes a result whose layout is its type is named by the
    type's spec, one entry per dimension (P(None, None), P('x', None)), in and out of jit."""
    def program(lib, show):
        m = mesh(lib, ("Explicit", "Auto"))
        outs = []
        with lib.set_mesh(m):
            for spec in [(), ("x",), ("y",)]:
                x = arange(lib, m, *spec)
                outs += [x * 2, lib.jit(lambda v: v * 2)(x)]
        return outs
    same_as_jax(program)


# ---------------------------------------------------------------- 3. cond resharding

def test_cond_branches_resharding_to_other_meshes_keep_the_type():
    """Branches resharding to a 4x2 mesh, to the reversed devices, or to a mesh of other
    axis names: the cond's result has the branches' type, laid out on that mesh's shape over
    the computation's devices (jaxpr, typeof, sharding, layout as JAX's)."""
    def program(lib, show):
        m = mesh(lib, ("Explicit", "Explicit"))
        x = arange(lib, m, "x", "y")
        targets = [(mesh(lib, ("Explicit", "Explicit"), shape=(4, 2)), ("x",)),
                   (mesh(lib, ("Explicit", "Explicit"), devices=range(7, -1, -1)), (None, "y")),
                   (mesh(lib, ("Explicit", "Explicit"), names=("a", "b")), ("a",))]
        outs = []
        for target, spec in targets:
            s = lib.NamedSharding(target, lib.P(*spec))

            def f(p, v):
                return lib.lax.cond(p, lambda v: lib.sharding.reshard(v, s),
                                    lambda v: lib.sharding.reshard(v * 2, s), v)
            show(lib.make_jaxpr(f)(True, x))
            outs += [lib.jit(f)(True, x), lib.jit(f)(False, x)]
        return outs
    same_as_jax(program)


# ---------------------------------------------------------------- 4. indexing

def _indexers(lib):
    i, lax = lib.numpy.int32(2), lib.lax
    return [lambda x: x[0], lambda x: x[:, 0], lambda x: x[1:3], lambda x: x[1:5],
            lambda x: x[:, 2:6], lambda x: x[0, 0], lambda x: x[i], lambda x: x[:, i],
            lambda x: x[np.array([1, 2])], lambda x: x[None, 0], lambda x: x[::-1],
            lambda x: x[::2], lambda x: x[1:4], lambda x: x[0:6],
            lambda x: lax.dynamic_slice(x, (i, 0), (1, 8)),
            lambda x: lax.dynamic_index_in_dim(x, i, 0, keepdims=False),
            lambda x: lax.squeeze(x[0:1], (0,)), lambda x: lax.slice(x, (0, 0), (4, 8)),
            lambda x: lax.slice(x, (0, 0), (8, 8), (2, 1)),
            lambda x: lax.dynamic_slice(x, (i, 0), (4, 8)),  # jit: i a constant, XLA's slice
            lambda x: lax.dynamic_slice_in_dim(x, 2, 2, 1),
            lambda x: x[lib.device_put(np.arange(8) % 8, lib.P("x"))]]


def _indexing(kinds, spec, part):
    def program(lib, show):
        m = mesh(lib, kinds)
        outs = []
        with lib.set_mesh(m):
            x = arange(lib, m, *spec, shape=(8, 8))
            for k in part:
                for g in (_indexers(lib)[k], lib.jit(_indexers(lib)[k])):
                    try:
                        outs.append(g(x))
                    except Exception as e:
                        show(k, type(e).__name__, str(e)[:90])
        return outs
    program.__qualname__ += f"{kinds}{spec}{part}"
    return program


# (the programs come in parts: the default run takes the first, thorough all of them)
PARTS = [(0, 1, 2), (3, 4, 5, 6, 7), (8, 9, 10, 11), (12, 13, 14, 15), (16, 17, 18),
         (19, 20, 21)]
CASES = [(("Auto", "Auto"), ("x", "y")), (("Explicit", "Explicit"), ("x", "y")),
         (("Auto", "Auto"), ("y", "x")), (("Auto", "Auto"), (("x", "y"),)),
         (("Explicit", "Explicit"), ("y", "x")), (("Explicit", "Explicit"), (None, "y"))]


def _case(kinds, spec, part, first):
    name = f"{kinds[0]}-{spec}-{part[0]}".replace(" ", "").replace("'", "")
    return pytest.param(kinds, spec, part, id=name,
                        marks=() if first else pytest.mark.thorough)


# (program 21, an index array sharded over 'x', on Explicit axes: JAX's gather raises its
# internal DuplicateSpecError for an operand P('y', 'x'), refjax JAX's ShardingTypeError
# asking for out_sharding=, as JAX's own for P('x', 'y'); not compared)
@pytest.mark.parametrize("kinds,spec,part", [
    _case(k, s, p if k[0] == "Auto" else p[:2] if 21 in p else p, i == j == 0)
    for i, (k, s) in enumerate(CASES) for j, p in enumerate(PARTS)])
def test_indexing_layouts_and_types_as_jax(kinds, spec, part):
    """Indexing a sharded array eagerly and under jit: on Auto axes each resized dimension
    keeps the mesh axes that still tile it (a static slice; a dynamic_slice at traced start
    indices or a gather keep none; at constant ones XLA folds it into a slice; an index array
    lends the gather its axes), x[0] keeps the other dimension's axis; on Explicit axes
    the same programs' types, or JAX's ShardingTypeErrors (eager ints and partial slices of
    a sharded Array are a gather, an eager lax.slice a dynamic_slice)."""
    same_as_jax(_indexing(kinds, spec, part))


def test_lax_index_in_dim_keeps_the_dimension_by_default():
    """lax.index_in_dim(x, i, axis) is x's slice at i with the dimension kept (keepdims=True,
    JAX's default; refjax used to drop it); negative indices count from the end, out of
    bounds is JAX's IndexError."""
    def program(lib, show):
        x = np.arange(64, dtype=np.float32).reshape(8, 8)
        for bad in (8, -9):
            try:
                lib.lax.index_in_dim(x, bad, 0)
            except IndexError as e:
                show(str(e).removeprefix("lax.index_in_dim: "))
        index = lib.lax.index_in_dim
        return index(x, 1, 1), index(x, -1, 0, keepdims=False), index(x, 2, axis=1, keepdims=False)
    assert same_as_jax(program)[2][0] == "float32[8,1]"


# ---------------------------------------------------------------- 5. scan over sharded xs

def test_scan_refuses_xs_sharded_on_the_scanned_axis():
    """Explicit axes: JAX's ValueError naming each xs' type, eagerly and under jit; xs
    sharded along another dimension make the carry's type change (JAX's TypeError, under
    jit too: a carry made inside it is replicated on the context mesh); Auto axes (no type)
    scan as usual, the carry and ys keeping the xs' other axes as XLA lays them out."""
    def program(lib, show):
        outs = []
        for kinds in [("Explicit", "Explicit"), ("Auto", "Auto")]:
            m = mesh(lib, kinds)
            with lib.set_mesh(m):
                for xs in [(arange(lib, m, "x"), arange(lib, m)), (arange(lib, m, None, "y"),) * 2]:
                    def f(xs):
                        return lib.lax.scan(lambda c, v: (c + v[0], v[1] * 2),
                                            lib.numpy.zeros(4), xs)
                    for g in (f, lib.jit(f)):
                        try:
                            outs += g(xs)
                        except (ValueError, TypeError) as e:
                            show(kinds, type(e).__name__, str(e).removeprefix("lax.scan: "))
        return outs
    shown = same_as_jax(program)
    assert shown[0].endswith("0th dimension of all xs should be replicated. Got "
                             "P('x', None), P(None, None)")
    assert [s.split()[2] for s in shown[:4]] == ["ValueError"] * 2 + ["TypeError"] * 2


@pytest.mark.parametrize("part", [(1, 4), pytest.param((0, 2, 3, 5, 6), marks=pytest.mark.thorough)])
def test_control_flow_on_auto_axes_lays_results_out_as_xla(part):
    """cond's result takes the axes its branches agree on (one branch's constraint wins over
    the other's replicated value), while and fori_loop keep their carry's layout, scan its
    carry's and its ys' (replicated along the scanned dimension)."""
    def program(lib, show):
        P, lax, wsc = lib.P, lib.lax, lib.lax.with_sharding_constraint
        m = mesh(lib, ("Auto", "Auto"))
        programs = [
            lambda p, v: lax.cond(p, lambda v: v * 2, lambda v: v + 1, v),
            lambda p, v: lax.cond(p, lambda v: wsc(v * 2, P("x")), lambda v: v + 1, v),
            lambda p, v: lax.cond(p, lambda v: wsc(v * 2, P("y")), lambda v: wsc(v, P("y")), v),
            lambda p, v: lax.cond(p, lambda v: v.sum(0), lambda v: v[0], v),
            lambda p, v: lax.scan(lambda c, a: (c + a, a * 2), v[0] * 0, v),
            lambda p, v: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 2),
                                        (0, v))[1],
            lambda p, v: lax.fori_loop(0, 3, lambda i, c: c * 2, v)]
        outs = []
        with lib.set_mesh(m):
            for x, ks in ((arange(lib, m, "x", "y"), part), (arange(lib, m), part[:1])):
                for f in [programs[k] for k in ks]:
                    out = lib.jit(f)(True, x)
                    outs += out if isinstance(out, tuple) else (out,)
        return outs
    program.__qualname__ += str(part)
    same_as_jax(program)
