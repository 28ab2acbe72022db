"""pshuffle, pswapaxes and pbroadcast; partial-manual shard_map on Explicit meshes; unreduced
and reduced PartitionSpecs; jit's ctx_mesh in printed jaxprs: each program run on real JAX
0.10.2 (8 CPU devices) and on refjax and compared (values, typeof text, layouts, errors,
jaxpr text)."""
import jax as real_jax
import numpy as np
import pytest
from jax_recordings import on_jax
from test_explicit_sharding import put, same_as_jax

import refjax

pytestmark = pytest.mark.backends("numpy_ref", "xla")


def _pbroadcast(lib):
    """lax.pbroadcast, or on real JAX its documented meaning (JAX 0.10.2 has no CPU lowering
    of pbroadcast, and its vmap rule fails on a list index)."""
    if lib is refjax:
        return lib.lax.pbroadcast

    def documented(x, axis_name, source):
        lax = lib.lax
        return lax.psum(lib.numpy.where(lax.axis_index(axis_name) == source, x, 0), axis_name)
    return documented


def test_pshuffle_pswapaxes_pbroadcast_under_shard_map_jit_vmap_and_grad():
    def program(lib, show):
        lax, P = lib.lax, lib.P
        sm = lambda f: lib.shard_map(f, in_specs=P("X"), out_specs=P("X"))  # noqa: E731
        bcast = _pbroadcast(lib)
        x, y = put(lib, (8, 2), "X"), put(lib, (8, 8), "X")
        perm = [3, 0, 1, 2, 7, 4, 5, 6]
        shuffled = lib.jit(sm(lambda a: lax.pshuffle(a, "X", perm)))(x)
        swapped = lib.jit(sm(lambda a: lax.pswapaxes(a, "X", 1)))(y)
        broadcast = lib.jit(sm(lambda a: bcast(a, "X", 5)))(x)
        loss = lambda f: lambda v: (sm(f)(v) ** 2 * np.arange(16.).reshape(8, 2)).sum()  # noqa
        grads = [lib.jit(lib.grad(loss(f)))(x) for f in (
            lambda a: lax.pshuffle(a, "X", perm), lambda a: bcast(a, "X", 2))]
        vmapped = [lib.vmap(f, axis_name="i")(lib.numpy.arange(64.).reshape(8, 8)) for f in (
            lambda a: lax.pshuffle(a, "i", perm), lambda a: lax.pswapaxes(a, "i", 0),
            lambda a: bcast(a, "i", 6))]
        return (shuffled, swapped, broadcast, *grads, *vmapped)
    shown = same_as_jax(program, sizes=(8,), names=("X",))
    assert shown[2][0] == "float32[8@X,2]" and shown[2][1].array[0, 0] == 10.


def test_pshuffle_pbroadcast_errors_and_jaxpr():
    def program(lib, show):
        mesh = lib.make_mesh((8,), ("x",), axis_types=(lib.sharding.AxisType.Auto,))
        sm = lambda f: lib.shard_map(f, mesh=mesh, in_specs=lib.P("x"),  # noqa: E731
                                     out_specs=lib.P("x"))
        x = np.zeros((8, 2), np.float32)
        show(lib.make_jaxpr(sm(lambda a: lib.lax.pbroadcast(a, "x", 2)))(x))
        try:
            sm(lambda a: lib.lax.pshuffle(a, "x", [1, 1, 2, 3, 4, 5, 6, 7]))(x)
        except ValueError as e:
            show(e)
        return sm(lambda a: lib.lax.pshuffle(a, "x", range(7, -1, -1)))(np.arange(8.))
    ours, theirs = unmeshed(refjax, program), unmeshed(real_jax, program)
    assert ours[0] == theirs[0] and "pbroadcast[axis_name=x source=2]" in ours[0]
    # refjax's lax errors name the function (core/errors.naming_errors)
    assert ours[1] == "lax.pshuffle: " + theirs[1] == ("lax.pshuffle: `perm` does not represent "
                                                       "a permutation: [1, 1, 2, 3, 4, 5, 6, 7]")
    assert ours[2:] == theirs[2:]


def unmeshed(lib, program):
    """What program(lib, show) shows, then its result's values, with no mesh set."""
    shown = []
    out = program(lib, lambda x: shown.append(str(x)))
    return shown + [np.asarray(out).tolist()]


def test_pbroadcast_does_better_than_jax_outside_gpus():
    """JAX 0.10.2 cannot run pbroadcast on CPU: no lowering under shard_map, and its vmap
    rule fails (TypeError from take on a list); refjax runs both, over several axes too,
    and refuses a source outside the axis with a ValueError (JAX: AssertionError)."""
    x = np.arange(8.)
    with pytest.raises(TypeError):
        real_jax.vmap(lambda a: real_jax.lax.pbroadcast(a, "i", 2), axis_name="i")(
            real_jax.numpy.asarray(x))
    out = refjax.vmap(lambda a: refjax.lax.pbroadcast(a, "i", 2), axis_name="i")(x)
    np.testing.assert_array_equal(out, np.full(8, 2.))
    two = refjax.vmap(refjax.vmap(lambda a: refjax.lax.pbroadcast(a, ("i", "j"), 5),
                                  axis_name="j"), axis_name="i")(x.reshape(2, 4))
    np.testing.assert_array_equal(two, np.full((2, 4), 5.))
    with pytest.raises(ValueError, match="pbroadcast: source 8 is outside the axes"):
        refjax.vmap(lambda a: refjax.lax.pbroadcast(a, "i", 8), axis_name="i")(x)


def test_partial_manual_shard_map_keeps_the_automatic_explicit_axes():
    """shard_map over 'X' of a mesh with Explicit axes X, Y: the blocks and the results keep
    their Y entries in their types (JAX's), inside and outside jit, whichever dimension they
    end up on. (refjax's typeof in a shard_map body omits JAX's `{V:X}`, here as everywhere:
    the blocks' types are compared without it.)"""
    def program(lib, show):
        P = lib.P
        blocks = set()

        def body(a):
            blocks.add(f"{lib.typeof(a)} {lib.typeof(a * 2)}".replace("{V:X}", ""))
            return a * 2, a.T

        f = lib.shard_map(body, in_specs=P("X"), out_specs=(P("X"), P(None, "X")),
                          axis_names={"X"})
        x, y = put(lib, (8, 8), "X", "Y"), put(lib, (8, 8), "X", None)
        show([str(v.aval) for v in lib.make_jaxpr(f)(x).jaxpr.eqns[0].outvars])
        outs = (*f(x), *lib.jit(f)(x), *lib.jit(f)(y), lib.jit(lib.grad(lambda v: f(v)[1].sum()))(x))
        show(sorted(blocks))
        return outs
    shown = same_as_jax(program)
    assert shown[:2] == ["['float32[8@X,8@Y]', 'float32[8@Y,8@X]']",
                         "['float32[4,8@Y] float32[4,8@Y]', 'float32[4,8] float32[4,8]']"]


@pytest.mark.backends()
def test_printed_jit_equations_name_the_context_mesh():
    """Under set_mesh, JAX's jit equations carry `ctx_mesh` (the mesh set when they were
    bound, kept by grad, vmap and linearize's jits); without a mesh, none. A shard_map given
    no mesh prints the context's abstract mesh."""
    def program(lib):
        types = lib.sharding.AxisType
        g = lib.jit(lambda b: lib.numpy.sin(b) * 2)
        x, texts = np.ones((8, 4), np.float32), []
        # (grad's jaxpr on an Explicit mesh differs for another reason: JAX reshards the
        # seed cotangent 1.0 first)
        for kinds, fs in (((types.Explicit,) * 2, (lambda a: g(a) + 1, lib.vmap(g))),
                          ((types.Explicit, types.Auto), (lambda a: g(a) + 1, lib.vmap(g))),
                          ((types.Auto,) * 2, (lib.grad(lambda a: g(a).sum()),
                                               lambda a: lib.linearize(g, a)[1](a),
                                               lib.shard_map(lib.numpy.sin, in_specs=lib.P("x"),
                                                             out_specs=lib.P("x"))))):
            with lib.set_mesh(lib.make_mesh((2, 4), ("x", "y"), axis_types=kinds)):
                texts += [lib.make_jaxpr(f)(x) for f in fs]
        return [str(t) for t in texts + [lib.make_jaxpr(g)(x)]]
    ours, theirs = program(refjax), on_jax(program)
    assert ours == theirs
    assert "ctx_mesh=Mesh('x': 2, 'y': 4, axis_types=(Explicit, Auto))" in ours[2]
    assert ours[4].count("ctx_mesh=Mesh('x': 2, 'y': 4, axis_types=(Auto, Auto))") == 2
    # shard_map without mesh= holds the context's abstract mesh, as JAX prints it
    assert "mesh=AbstractMesh('x': 2, 'y': 4, axis_types=(Auto, Auto), device_kind=cpu" in \
        ours[6]
    assert "ctx_mesh" not in ours[-1]


def _shown_error(show, f):
    try:
        f()
    except Exception as e:  # the class and message are what is compared
        show(f"{type(e).__name__}: {e}")


def test_unreduced_and_reduced_specs_dot_general_reshard_add_mul():
    """PartitionSpec's unreduced/reduced sets (repr, equality, hashing, JAX's errors); a
    dot_general whose out_sharding is unreduced over the contracting axis is typed `{U:Y}`;
    reshard to a plain or reduced spec sums the partial values (`{R:Y}`); add of two
    unreduced values, mul by a reduced one, unary ops on reduced ones, sums and conversions
    are typed as JAX types them, and JAX's ShardingTypeError / NotImplementedError where it
    refuses."""
    def program(lib, show):
        P, jnp = lib.P, lib.numpy
        show(repr(P("X", None, unreduced={"Y"})), repr(P("X", reduced={"Y"})),
             P("X", unreduced={"Y"}) == P("X", unreduced={"Y"}), P("X", unreduced={"Y"}) == P("X"),
             hash(P(unreduced={"Y"})) == hash(P(unreduced=frozenset({"Y"}))))
        for bad in (dict(unreduced={"Y"}, reduced={"Y"}), dict(unreduced={"X"}),
                    dict(unreduced={None}), dict(reduced=["Y"])):
            _shown_error(show, lambda: P("X", **bad))
        a, b = put(lib, (8, 4), "X", "Y"), put(lib, (4, 4), "Y", None)
        dot = lambda a, b, u={"Y"}: jnp.dot(a, b, out_sharding=P("X", None, unreduced=u))  # noqa

        def f(a, b):
            c = dot(a, b)
            e = lib.reshard(c, P("X", None, reduced={"Y"}))
            show(lib.typeof(c), lib.typeof(e), lib.typeof(jnp.sin(e)), lib.typeof(c + c),
                 lib.typeof(c * e), lib.typeof(lib.lax.dot_general(
                     a, b, (((1,), (0,)), ((), ())), out_sharding=P("X", None, unreduced={"Y"}))))
            show(lib.typeof(c.sum(0)), lib.typeof(e.sum(1)), lib.typeof(c.astype(jnp.float16)),
                 lib.typeof(e.astype(jnp.int32)), lib.typeof(jnp.einsum(
                     "ij,jk->ik", a, b, out_sharding=P("X", None, unreduced={"Y"}))))
            for refused in (lambda: c + 2, lambda: c * 2, lambda: jnp.sin(c),
                            lambda: dot(a, b, {"X"}), lambda: dot(c, b)):
                _shown_error(show, refused)
            plain = lambda v: lib.reshard(v, P("X", None))  # noqa: E731
            return (plain(c), e, plain(c + c), plain(c * e), jnp.sin(e),
                    lib.reshard(c.sum(0), P(None)), e.sum(1))
        return lib.jit(f)(a, b)
    shown = same_as_jax(program)
    assert shown[5] == ("float32[8@X,4]{U:Y} float32[8@X,4]{R:Y} float32[8@X,4]{R:Y} "
                        "float32[8@X,4]{U:Y} float32[8@X,4]{U:Y} float32[8@X,4]{U:Y}")
    assert shown[6] == ("float32[4]{U:Y} float32[8@X]{R:Y} float16[8@X,4]{U:Y} "
                        "int32[8@X,4]{R:Y} float32[8@X,4]{U:Y}")
    assert shown[-6][0] == shown[-3][0] == "float32[8@X,4]{R:Y}"


def test_unreduced_values_outside_jit_hold_each_devices_partial_sum():
    """JAX keeps each device's partial sum in an unreduced Array (eager dot_general, or one
    returned by jit): refjax's backends hold them too (tests/test_unreduced.py compares them
    with JAX's); resharded, eagerly or inside jit, they are summed."""
    def program(lib, show):
        P = lib.P
        a, b = put(lib, (8, 4), "X", "Y"), put(lib, (4, 4), "Y", None)
        dot = lambda a, b: lib.numpy.dot(a, b, out_sharding=P("X", None, unreduced={"Y"}))  # noqa
        for f in (lambda: dot(a, b), lambda: lib.jit(dot)(a, b)):
            show(lib.typeof(f()), lib.reshard(f(), P(None, None)))
        return lib.jit(lambda a, b: lib.reshard(dot(a, b), P(None, None)))(a, b)
    same_as_jax(program)


@pytest.mark.backends()
def test_auto_pcast_off_refuses_operands_varying_differently():
    """jax.auto_pcast(False) (or config jax_auto_pcast): shard_map's check_vma refuses an
    operation on values varying over different manual axes (JAX's ValueError), eager and
    under jit; check_vma=False, pcast to varying, and the default (True) accept them."""
    def program(lib):
        P, shown = lib.P, [lib.auto_pcast.value, lib.config.jax_auto_pcast]
        mesh = lib.make_mesh((8,), ("x",), axis_types=(lib.sharding.AxisType.Auto,))
        x, b = np.arange(16.).reshape(8, 2).astype(np.float32), np.ones(2, np.float32)
        sm = lambda f, check=True: lib.shard_map(  # noqa: E731
            f, mesh=mesh, in_specs=(P("x"), P()), out_specs=P("x"), check_vma=check)
        add, scaled = sm(lambda a, c: a + c), sm(lambda a, c: a * 2)
        fixed = sm(lambda a, c: a + lib.lax.pcast(c, "x", to="varying"))
        jitted = lib.jit(add)
        jitted(x, b)  # traced with auto_pcast on: the option is part of jit's cache key
        runs = (add, jitted, scaled, fixed, sm(lambda a, c: a + c, check=False))
        with lib.auto_pcast(False):
            shown.append(lib.config.jax_auto_pcast)
            for f in runs:
                try:
                    shown.append(np.asarray(f(x, b)).tolist())
                except ValueError as e:
                    shown.append(str(e))
        return shown + [np.asarray(add(x, b)).tolist()]
    ours, theirs = program(refjax), on_jax(program)
    assert ours == theirs
    assert ours[:3] == [True, True, False] and ours[3].startswith("Primitive add requires")


def test_remove_size_one_mesh_axis_from_type():
    """jax.remove_size_one_mesh_axis_from_type(True): types drop the mesh axes of size 1
    (Arrays' layouts keep them; jit's results are laid out as typed); off again, they
    return."""
    def program(lib, show):
        P, x = lib.P, np.arange(16.).reshape(8, 2).astype(np.float32)
        a, b = lib.device_put(x, P("X", "Y")), lib.device_put(x, P(("X", "Y"), None))
        with lib.remove_size_one_mesh_axis_from_type(True):
            show(lib.remove_size_one_mesh_axis_from_type.value, lib.typeof(a), lib.typeof(b),
                 a.sharding.spec, lib.typeof(lib.device_put(x, P("X", "Y"))))

            def f(v, w):
                show(lib.typeof(v), lib.typeof(w), lib.typeof(v * 2), lib.typeof(v.T))
                return v * 2, lib.reshard(w, P(None, "Y"))
            outs = lib.jit(f)(a, b)
            show(*[o.sharding.spec for o in outs])
        show(lib.typeof(a), lib.typeof(outs[0]))
        return outs
    shown = same_as_jax(program, sizes=(8, 1))
    assert shown[0] == "True float32[8@X,2] float32[8@X,2] P('X', 'Y') float32[8@X,2]"
    assert shown[3] == "float32[8@X,2@Y] float32[8@X,2]"


@pytest.mark.backends()
def test_ragged_all_to_all_over_several_axes_or_groups_stays_refused():
    """JAX 0.10.2 runs ragged_all_to_all nowhere on CPU (vmap: NotImplementedError; shard_map:
    XLA:CPU has no ragged-all-to-all), so there is no behaviour to match over several axes
    or within axis_index_groups: refjax refuses both with NotImplementedError."""
    op, out = np.arange(16., dtype=np.float32).reshape(2, 2, 4), np.zeros((2, 2, 4), np.float32)
    idx, one = np.zeros((2, 2, 4), np.int32), np.ones((2, 2, 4), np.int32)
    with pytest.raises(NotImplementedError):  # (refjax runs this one: one axis, no groups)
        real_jax.vmap(lambda *a: real_jax.lax.ragged_all_to_all(*a, axis_name="i"),
                      axis_name="i")(*(real_jax.numpy.asarray(v[0])
                                       for v in (op, out, idx, one, idx, one)))
    with pytest.raises(NotImplementedError, match="several axes"):
        refjax.vmap(refjax.vmap(lambda *a: refjax.lax.ragged_all_to_all(*a, axis_name=("i", "j")),
                                axis_name="j"), axis_name="i")(op, out, idx, one, idx, one)
    with pytest.raises(NotImplementedError, match="axis_index_groups"):
        refjax.vmap(lambda *a: refjax.lax.ragged_all_to_all(
            *a, axis_name="i", axis_index_groups=[[0, 1]]), axis_name="i")(
            *(v[0] for v in (op, out, idx, one, idx, one)))


def _manual_axis_types(j):
    """jax.sharding.ManualAxisType (interned, immutable, JAX's errors), the manual_axis_type
    of values in a shard_map body (eager: under jit refjax's staged types lack the varying
    axes, a known gap) and outside one, and an abstract mesh's device."""
    mat = j.sharding.ManualAxisType
    shown = [repr(mat(varying={"x"})), repr(mat()), mat(varying={"x"}) is mat(varying={"x"}),
             repr(mat(varying={"x"}).update(unreduced={"y"}))]
    try:
        mat(varying={"x"}, reduced={"x"})
    except ValueError as e:
        shown.append(str(e))
    mesh = j.make_mesh((2, 2), ("x", "y"), axis_types=(j.sharding.AxisType.Auto,) * 2)

    def body(a):
        shown.extend(repr(j.typeof(v).manual_axis_type) for v in (a, j.lax.psum(a, "x")))
        return a
    j.shard_map(body, mesh=mesh, in_specs=j.P("x"), out_specs=j.P("x"))(np.arange(4.0))
    shown += [repr(j.typeof(np.ones(2, np.float32)).manual_axis_type),
              repr(mesh.abstract_mesh.abstract_device)]
    return shown


@pytest.mark.backends()
def test_manual_axis_type_and_abstract_device_as_jax():
    assert _manual_axis_types(refjax) == on_jax(_manual_axis_types)
