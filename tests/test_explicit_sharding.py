"""Sharding in types on Explicit mesh axes: jax.typeof of concrete and traced values, the
types every primitive's sharding rule gives at trace time (and eagerly), JAX's
ShardingTypeErrors, reshard/auto_axes/explicit_axes/use_abstract_mesh and out_sharding=,
each program run on real JAX (8 CPU devices) and on refjax and compared: what it prints,
its errors' classes and messages, its results' values and layouts shard by shard."""
import jax as real_jax
import numpy as np
import pytest
from jax_recordings import on_jax
from hypothesis import given
from hypothesis import strategies as st

import refjax
from refjax.spec.checks import budget

pytestmark = pytest.mark.backends("numpy_ref", "xla")


def layout(a):
    """device id -> index (start, stop) pairs: where each shard of `a` lives."""
    return {s.device.id: tuple(sl.indices(d)[:2] for sl, d in zip(s.index, a.shape))
            for s in a.addressable_shards}


def run(lib, program, sizes=(2, 4), names=("X", "Y")):
    """What `program(lib, show)` shows on an Explicit mesh: the strings it passes to `show`
    (typeof text, printed in and out of jit), then each result's type, values and layout,
    or the class (and a ShardingTypeError's message) of the error it raised."""
    shown = []
    show = lambda *xs: shown.append(" ".join(map(str, xs)))  # noqa: E731
    mesh = lib.make_mesh(sizes, names, axis_types=(lib.sharding.AxisType.Explicit,) * len(sizes))
    with lib.set_mesh(mesh):
        try:
            outs = program(lib, show)
        except Exception as e:  # the error JAX raises is part of what is compared (the
            # message too for sharding type errors; others' wording is not this file's topic)
            name = type(e).__name__
            return shown + [f"{name}: {e}" if name == "ShardingTypeError" else name]
        results = [(str(lib.typeof(o)), Values(o), layout(o))
                   for o in (outs if isinstance(outs, tuple) else (outs,))]
    return shown + results


class Values:
    """A result's values, equal to another's within float32 rounding (sums of products)."""

    def __init__(self, x):
        self.array = np.asarray(x)

    def __eq__(self, other):
        return np.allclose(self.array, other.array, rtol=1e-6, atol=0)

    def __repr__(self):
        return repr(self.array)


def same_as_jax(program, **mesh):
    ours, theirs = run(refjax, program, **mesh), run(real_jax, program, **mesh)
    assert ours == theirs
    return ours


def put(lib, shape, *spec, dtype=np.float32):
    x = np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape)
    return lib.device_put(x, lib.P(*spec))


# ---------------------------------------------------------------- the documentation's examples
# (JAX's docs/new_docs/201/sharding.md, "Explicit sharding")

def test_typeof_outside_and_inside_jit():
    def program(lib, show):
        x = put(lib, (8, 4), "X", "Y")
        show(lib.typeof(x), repr(lib.typeof(x)), lib.typeof(x).sharding)

        @lib.jit
        def f(x):
            show("in", lib.typeof(x), lib.typeof(x).sharding.spec, lib.typeof(x).sharding.mesh)
            y = lib.numpy.sin(x).T
            show(lib.typeof(y), lib.typeof(y.sum(0)), lib.typeof(x * 2.0))
            return y
        return f(x), lib.numpy.sin(x).T
    shown = same_as_jax(program)
    assert shown[0].startswith("float32[8@X,4@Y] ShapedArray(float32[8@X,4@Y])")


def test_broadcasting_puts_each_operands_axes_in_the_result():
    def program(lib, show):
        a, b = put(lib, (4, 1), "X", None, dtype=np.int32), put(lib, (1, 8), None, "Y",
                                                                   dtype=np.int32)
        return a + b, lib.jit(lambda a, b: a + b)(a, b)
    assert same_as_jax(program)[0][0] == "int32[4@X,8@Y]"


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_ambiguous_contraction_is_refused(jit):
    def program(lib, show):
        x, y = put(lib, (8, 4), None, "X"), put(lib, (4, 16), "X", None)
        dot = lib.jit(lib.numpy.dot) if jit else lib.numpy.dot
        return dot(x, y)
    out = same_as_jax(program)
    assert out[0].startswith("ShardingTypeError: Contracting dimensions are sharded")


def test_conflicting_and_illegal_elementwise_operands_are_refused():
    def conflict(lib, show):
        return lib.jit(lambda a, b: a + b)(put(lib, (8, 4), "X", None), put(lib, (8, 4), "Y"))

    def illegal(lib, show):
        return put(lib, (4, 4), "X", None, dtype=np.int32) + put(lib, (4, 4), None, "X",
                                                                 dtype=np.int32)
    assert same_as_jax(conflict) == [
        "ShardingTypeError: add got incompatible shardings for broadcasting: "
        "('X', None), ('Y', None)."]
    assert same_as_jax(illegal) == [
        "ShardingTypeError: add operation with inputs: i32[4@X,4], i32[4,4@X] produces an "
        "illegally sharded result: i32[4@X,4@X]"]


def test_reshape_splits_and_merges_axes_and_refuses_the_rest():
    def program(lib, show):
        x = put(lib, (8, 4), "X", "Y")
        f = lib.jit(lambda x: (x.reshape(32), x.reshape(2, 4, 4), x.reshape(8, 1, 4)))
        return f(x)

    def refused(lib, show):
        return lib.jit(lambda x: x.reshape(4, 8))(put(lib, (8, 4), "X", "Y"))
    types = [t for t, _, _ in same_as_jax(program)]
    assert types == ["float32[32@(X,Y)]", "float32[2@X,4,4@Y]", "float32[8@X,1,4@Y]"]
    assert same_as_jax(refused)[0].startswith("ShardingTypeError: This reshape is not supported")


def test_traced_types_under_vmap_grad_and_their_compositions():
    def program(lib, show):
        x = put(lib, (8, 4), "X", "Y")
        probe = lambda tag: lambda r: show(tag, lib.typeof(r)) or r.sum()  # noqa: E731
        lib.vmap(probe("vmap"))(x)
        lib.grad(probe("grad"))(x)
        lib.jit(lib.grad(probe("jit-grad")))(x)
        lib.jit(lib.vmap(probe("jit-vmap")))(x)
        return lib.grad(lambda x: (x * x).sum())(x)
    shown = same_as_jax(program)
    assert shown[:4] == ["vmap float32[4@Y]", "grad float32[8@X,4@Y]",
                         "jit-grad float32[8@X,4@Y]", "jit-vmap float32[4@Y]"]


def test_jaxpr_shows_the_types():
    def program(lib, show):
        x = put(lib, (8, 4), "X", "Y")
        show(lib.make_jaxpr(lambda x: (x * 2.0).sum(0) + x.T.sum(1))(x))
        return x
    assert "b:f32[8@X,4@Y] = mul a 2.0:f32[]" in same_as_jax(program)[0]


def test_abstract_arguments_carry_their_sharding_type():
    def program(lib, show):
        mesh = lib.sharding.get_mesh()
        s = lib.ShapeDtypeStruct((8, 4), np.float32,
                                 sharding=lib.sharding.NamedSharding(mesh, lib.P("X", "Y")))
        show(lib.make_jaxpr(lambda x: x.sum(0))(s))
        show(lib.jit(lambda x: show(lib.typeof(x)) or x).trace(s).jaxpr)
        return put(lib, (2,), "X")
    assert same_as_jax(program)[0].startswith("{ lambda ; a:f32[8@X,4@Y]. let")


def test_gradient_of_a_sharded_matmul_is_typed_as_its_primals():
    def program(lib, show):
        x, w = put(lib, (8, 4), "X", None), put(lib, (4, 16), None, "Y")
        loss = lambda x, w: (x @ w).sum()  # noqa: E731
        gx, gw = lib.jit(lib.grad(loss, argnums=(0, 1)))(x, w)
        return gx, gw
    same_as_jax(program)


# ---------------------------------------------------------------- reshard, axis types, meshes

def test_reshard_inside_jit_and_auto_and_explicit_axes():
    def program(lib, show):
        S = lib.sharding
        x = put(lib, (8, 4), "X", "Y")

        @lib.jit
        def f(x):
            y = S.reshard(x, lib.P(None, "X"))
            show("reshard", lib.typeof(y))
            inner = lambda a: show("auto", lib.typeof(a), S.get_abstract_mesh()) or a * 2  # noqa
            return y, S.auto_axes(inner, out_sharding=lib.P("X", None))(x)
        return f(x)
    shown = same_as_jax(program)
    assert shown[0] == "reshard float32[8,4@X]"

    def explicit(lib, show):
        S = lib.sharding
        auto = lib.make_mesh((2, 4), ("X", "Y"), axis_types=(S.AxisType.Auto,) * 2)
        with lib.set_mesh(auto):
            w = put(lib, (8, 4), "X", "Y")
            inner = lambda a: show("in", lib.typeof(a)) or a.sum(0)  # noqa: E731
            out = lib.jit(lambda w: S.explicit_axes(inner, in_sharding=lib.P("X", None))(w))(w)
            show(lib.typeof(out), out.sharding.spec)
            return out
    same_as_jax(explicit)


def test_axis_type_decorators_refuse_what_jax_refuses():
    def no_out_sharding(lib, show):
        return lib.sharding.auto_axes(lambda a: a)(put(lib, (8,), "X"))

    def no_mesh(lib, show):
        with lib.set_mesh(None):
            return lib.sharding.explicit_axes(lambda a: a, in_sharding=lib.P())(np.ones(2))
    assert same_as_jax(no_out_sharding) == ["TypeError"]
    assert same_as_jax(no_mesh) == ["ValueError"]
    with pytest.raises(TypeError, match="Missing required keyword argument: 'out_sharding'"):
        refjax.sharding.auto_axes(lambda a: a)(np.ones(2))
    with pytest.raises(ValueError, match="Context mesh cannot be empty"):
        refjax.sharding.explicit_axes(lambda a: a, in_sharding=refjax.P())(np.ones(2))


def test_use_abstract_mesh():
    def program(lib, show):
        S = lib.sharding
        m = S.AbstractMesh((2, 4), ("X", "Y"), (S.AxisType.Auto, S.AxisType.Explicit))
        with S.use_abstract_mesh(m):
            show(S.get_abstract_mesh())
        show(S.get_abstract_mesh().axis_types)
        for bad in (S.AbstractMesh((2,), ("X",)), "mesh"):
            try:
                S.use_abstract_mesh(bad).__enter__()
            except ValueError as e:
                show(type(e).__name__, str(e).split(".")[0])
        return put(lib, (8,), "X")
    same_as_jax(program)


# ---------------------------------------------------------------- out_sharding=

@pytest.mark.parametrize("case", ["dot", "matmul", "einsum", "tensordot", "dot_general",
                                  "lax_reshape", "jnp_reshape", "broadcast_to",
                                  "broadcast_in_dim"])
def test_out_sharding(case):
    def program(lib, show):
        jnp, lax, P = lib.numpy, lib.lax, lib.P
        args = (put(lib, (8, 4), None, "X"), put(lib, (4, 8), "X", None),
                put(lib, (8, 4), "X", "Y"), put(lib, (4,), "Y"))
        f = {
            "dot": lambda a, b, x, v: jnp.dot(a, b, out_sharding=P("X", "Y")),
            "matmul": lambda a, b, x, v: jnp.matmul(a, b, out_sharding=P(None, "Y")),
            "einsum": lambda a, b, x, v: jnp.einsum("ij,jk->ik", a, b,
                                                    out_sharding=P("X", None)),
            "tensordot": lambda a, b, x, v: jnp.tensordot(a, b, 1, out_sharding=P("Y", "X")),
            "dot_general": lambda a, b, x, v: lax.dot_general(
                a, b, (((1,), (0,)), ((), ())), out_sharding=P("X", None)),
            "lax_reshape": lambda a, b, x, v: lax.reshape(x, (4, 8), out_sharding=P("X", None)),
            "jnp_reshape": lambda a, b, x, v: jnp.reshape(x, (4, 8), out_sharding=P(None, "Y")),
            "broadcast_to": lambda a, b, x, v: jnp.broadcast_to(v, (8, 4),
                                                                out_sharding=P("X", "Y")),
            "broadcast_in_dim": lambda a, b, x, v: lax.broadcast_in_dim(
                v, (2, 4), (1,), out_sharding=P("X", None)),
        }[case]
        return lib.jit(f)(*args), f(*args)
    same_as_jax(program)


def test_slices_pads_reversals_concatenations_and_scans():
    def program(lib, show):
        jnp, lax = lib.numpy, lib.lax
        x = put(lib, (8, 4), "X", None)
        f = lambda x: (x[:, 1:3], x[2:6], jnp.flip(x, 0), jnp.pad(x, ((0, 0), (1, 1))),  # noqa
                       jnp.concatenate([x, x], 1), lax.cumsum(x, 1))
        return lib.jit(f)(x)  # (JAX's eager indexing gathers: a known difference)

    def refused(lib, show):
        x = put(lib, (8, 4), "X", None)
        for f in (lambda x: x[1:4], lambda x: lax_cumsum(lib)(x, 0),
                  lambda x: lib.numpy.concatenate([x, lib.sharding.reshard(x, lib.P())])):
            try:
                lib.jit(f)(x)
            except Exception as e:
                show(type(e).__name__, str(e).split(" Got")[0])
        return x
    same_as_jax(program)
    assert len(same_as_jax(refused)) == 4


def lax_cumsum(lib):
    return lib.lax.cumsum


# ---------------------------------------------------------------- random programs

AXES = st.sampled_from([((8,), ("X",)), ((2, 4), ("X", "Y")), ((4, 2), ("X", "Y")),
                        ((2, 2, 2), ("X", "Y", "Z"))])
STEPS = st.lists(st.sampled_from(["mul", "add_other", "sum0", "sum1", "T", "dot", "flat",
                                  "split", "sort1", "cond", "fori", "dus", "tile", "stack",
                                  "at_add", "vmap_rows"]),
                 min_size=1, max_size=3)


def random_program(spec, other_spec, steps):
    """A small program on an (8, 8) input laid out as `spec`: each step's result type is
    shown inside jit, and the result returned."""
    def program(lib, show):
        x, y = put(lib, (8, 8), *spec), put(lib, (8, 8), *other_spec)

        def f(x, y):
            for step in steps:
                x = {"mul": lambda: x * 3.0, "add_other": lambda: x + y,
                     "sum0": lambda: lib.numpy.broadcast_to(x.sum(0), x.shape),
                     "sum1": lambda: lib.numpy.broadcast_to(x.sum(1)[:, None], x.shape),
                     "T": lambda: x.T,
                     "dot": lambda: x @ y, "flat": lambda: x.reshape(x.size).reshape(x.shape),
                     "split": lambda: x.reshape(2, -1, x.shape[1]).reshape(x.shape),
                     "sort1": lambda: lib.lax.sort(-x, dimension=1),
                     "cond": lambda: lib.lax.cond(x.sum() > 0, lambda: x * 2.0, lambda: y),
                     "fori": lambda: lib.lax.fori_loop(0, 2, lambda i, c: c + y, x),
                     "dus": lambda: lib.lax.dynamic_update_slice(x, y, (0, 0)),
                     "tile": lambda: lib.numpy.tile(x[:, :4], (1, 2)),
                     "stack": lambda: lib.numpy.stack([x, y], axis=1).sum(1),
                     "at_add": lambda: x.at[:, 1].add(y[0, 0]),
                     "vmap_rows": lambda: lib.vmap(lambda r, s: r * s[0])(x, y)}[step]()
                show(step, lib.typeof(x))
            return x
        return lib.jit(f)(x, y)
    return program


@budget(1.0)
@given(mesh=AXES, data=st.data(), steps=STEPS)
def test_random_programs_type_as_jax(mesh, data, steps):
    sizes, names = mesh
    spec = tuple(data.draw(st.sampled_from([None, *names])) for _ in range(2))
    other = tuple(data.draw(st.sampled_from([None, *names])) for _ in range(2))
    if len({e for e in spec if e}) < len([e for e in spec if e]):
        spec = (spec[0], None)
    if len({e for e in other if e}) < len([e for e in other if e]):
        other = (None, other[1])
    same_as_jax(random_program(spec, other, steps), sizes=sizes, names=names)


def test_jit_steady_state_keeps_each_layouts_type():
    """Outside a mesh context jit's fast path runs; arguments alternating between two
    layouts must each get their own typed result, as in JAX."""
    def types(lib):
        mesh = lib.make_mesh((2, 4), ("X", "Y"),
                             axis_types=(lib.sharding.AxisType.Explicit,) * 2)
        put_on = lambda *spec: lib.device_put(  # noqa: E731
            np.ones((8, 8), np.float32), lib.sharding.NamedSharding(mesh, lib.P(*spec)))
        a, b = put_on("X", None), put_on(None, "Y")
        f = lib.jit(lambda x: (x * 2).reshape(8, 4, 2))
        return [(str(lib.typeof(o)), layout(o)) for o in map(f, (a, b, a, b))]
    assert types(refjax) == on_jax(types)
