"""shard_map out_specs that both split and leave a value unreduced (P('X', None,
unreduced={'Y'})), eagerly and under jit on both backends; JAX's implicit casts of outputs to
their out_specs' types and its errors where a body's value cannot be cast; operations on such
values; and nested shard_maps whose inner body combines values varying over the outer axis
with others (issue 15). Each program runs on refjax and on real JAX 0.10.2 (recorded:
tests/jax_recordings.py) and is compared as test_unreduced compares them (typeof text, spec,
every device's data, error class and message)."""
import ast

import numpy as np
import pytest
from jax_recordings import fingerprint, of_function, recorded
from test_unreduced import _run

import jax as real_jax
import refjax

pytestmark = pytest.mark.backends("numpy_ref", "xla")

MESH = dict(sizes=(2, 2), names=("X", "Y"))


def _jax_side(program, **mesh):
    """What program shows on real JAX (its recording in the default run, made from the same
    program and helpers)."""
    return recorded(program.__qualname__, lambda: _run(real_jax, program, **mesh),
                    fingerprint(*of_function(program), *of_function(_operands),
                                *of_function(_split_unreduced), mesh))


def _both(program, **mesh):
    return _run(refjax, program, **mesh), _jax_side(program, **mesh)


def _operands(lib):
    """a split over (X, Y), b over Y: a @ b's blocks are partial sums over Y."""
    jnp, P = lib.numpy, lib.P
    a = lib.device_put(jnp.arange(16.0).reshape(4, 4), P("X", "Y"))
    b = lib.device_put(jnp.arange(8.0).reshape(4, 2), P("Y", None))
    return a, b


def _split_unreduced(lib, cast=True):
    """shard_map(a @ b) with out_specs split over X and unreduced over Y (cast to unreduced
    in the body, or left varying: JAX casts it at the output)."""
    P, lax = lib.P, lib.lax
    body = (lambda a, b: lax.pcast(a @ b, "Y", to="unreduced")) if cast else (
        lambda a, b: a @ b)
    return lib.shard_map(body, in_specs=(P("X", "Y"), P("Y", None)),
                         out_specs=P("X", None, unreduced={"Y"}))


def test_split_unreduced_out_specs_eager_and_jit():
    """Each device holds its block (over X) of its partial value (over Y), typed
    float32[4@X,2]{U:Y}, eagerly and under jit; reshard and a shard_map's psum sum the
    partial values; sums of such values stay partial; grad through a reshard of one; JAX's
    ValueError for an out spec splitting over an axis it also leaves unreduced. (And a
    shard_map inferring its in_specs under vmap.)"""
    def program(lib, show):
        jnp, P, lax = lib.numpy, lib.P, lib.lax
        a, b = _operands(lib)
        sm, bare = _split_unreduced(lib), _split_unreduced(lib, cast=False)
        psum = lib.shard_map(lambda u: lax.psum(u, "Y"), in_specs=P("X", None, unreduced={"Y"}),
                             out_specs=P("X", None))
        loss = lambda a, b: jnp.sum(lib.reshard(sm(a, b), P(None, None)) ** 2)  # noqa: E731
        for run in (lambda f: f, lib.jit):
            for f in (lambda: run(sm)(a, b), lambda: run(bare)(a, b),
                      lambda: str(run(sm)(a, b).sharding),
                      lambda: lib.reshard(run(sm)(a, b), P("X", None)),
                      lambda: run(lambda a, b: lib.reshard(sm(a, b), P()))(a, b),
                      lambda: run(lambda a, b: psum(sm(a, b)))(a, b),
                      lambda: run(lambda a, b: sm(a, b) + bare(a, b))(a, b),
                      lambda: run(lib.grad(loss))(a, b),
                      lambda: run(lib.shard_map(
                          lambda a, b: a @ b, in_specs=(P("X", "Y"), P("Y", None)),
                          out_specs=P("X", None, unreduced={"X"})))(a, b)):
                show(f)
        # in_specs inferred from a vmapped value's type (its own, less the mapped dimension)
        show(lambda: lib.vmap(lib.shard_map(lambda v: v * 2, out_specs=P("X", "Y")))(
            lib.reshard(a[None], P(None, "X", "Y"))))
    ours, theirs = _both(program, **MESH)
    assert ours == theirs
    assert ours[0].startswith("float32[4@X,2]{U:Y} P('X', None, unreduced={'Y'}) "
                              "[[[2.0, 3.0], [10.0, 19.0]], [[26.0, 31.0], [66.0, 79.0]]")
    assert ours[8].startswith("ValueError: partitions cannot overlap with unreduced axes")


def test_outputs_cast_to_their_out_specs_types_as_jax():
    """With check_vma, an output whose out spec is unreduced over an axis is cast to it
    (JAX's implicit vary_unreduced_cast): one not varying over that axis (replicated, a
    constant, a psum) is JAX's ValueError, eagerly and under jit; without check_vma it is
    accepted as each device's partial value, and pcast(..., to='unreduced') is JAX's
    'Unsupported pcast' (to 'varying' or 'reduced': nothing to do). Constants and values
    made in an eager body mix with its blocks on both backends."""
    def program(lib, show):
        jnp, P, lax = lib.numpy, lib.P, lib.lax
        a, b = _operands(lib)
        r = lib.device_put(jnp.arange(8.0).reshape(4, 2), P("X", None))
        bodies = (lambda a, b, r: r, lambda a, b, r: r * 2.0,
                  lambda a, b, r: jnp.ones((2, 2)), lambda a, b, r: lax.psum(a @ b, "Y"),
                  lambda a, b, r: lax.pcast(a @ b, "Y", to="unreduced") + r,
                  lambda a, b, r: jnp.full((2, 2), lax.axis_index("Y"), jnp.float32) + r,
                  lambda a, b, r: lax.pcast(lax.pcast(r, "Y", to="varying"), "Y",
                                            to="unreduced"))
        for check_vma in (True, False):
            for run in (lambda f: f, lib.jit):
                for body in bodies:
                    show(lambda: run(lib.shard_map(
                        body, in_specs=(P("X", "Y"), P("Y", None), P("X", None)),
                        out_specs=P("X", None, unreduced={"Y"}), check_vma=check_vma))(a, b, r))
        for to in ("varying", "reduced"):
            show(lambda: lib.shard_map(lambda r: lax.pcast(r, "Y", to=to), in_specs=P("X", None),
                                       out_specs=P("X", "Y"), check_vma=False)(r))
    ours, theirs = _both(program, **MESH)
    assert ours == theirs
    assert ours[0] == ("ValueError: vary_unreduced_cast is a Varying->Unreduced collective. "
                       "This means that the axis names mentioned in `axes` passed to "
                       "`vary_unreduced_cast` must be present in `jax.typeof(x).mat.varying`. "
                       "Got axes=('Y',) and jax.typeof(x).mat.varying=frozenset({'X'})")
    assert ours[14 + 4] == "ValueError: Unsupported pcast from=invarying, to='unreduced'"


def test_operations_on_split_unreduced_values():
    """Linear operations on a value split over X and unreduced over Y run on each group's
    partial value as JAX's program does (sums over the split dimension included), reshard to
    the same unreduced axes keeps the partial values, to others sums them, eagerly and under
    jit; a shard_map with that in_spec sees each device's block of its partial value, under
    grad, linearize and cond too (its result typed as JAX types it), and its operands are
    made varying alike before JAX's typing refuses a product with a value not reduced
    (eagerly too: the scalar typed {V:X} in JAX's error)."""
    def program(lib, show):
        jnp, P, lax = lib.numpy, lib.P, lib.lax
        a, b = _operands(lib)
        OU = P("X", None, unreduced={"Y"})
        u = _split_unreduced(lib)(a, b)
        psum = lib.shard_map(lambda v: lax.psum(v, "Y"), in_specs=OU, out_specs=P("X", None))
        red = lib.reshard(jnp.ones((4, 2)), P("X", None, reduced={"Y"}))
        for run in (lambda f: f, lib.jit):
            for f in (lambda u: u.T, lambda u: u.sum(axis=0), lambda u: u.sum(axis=1),
                      lambda u: jnp.concatenate([u, u], axis=1), lambda u: u[None],
                      lambda u: u * red, lambda u: lib.reshard(u, P(None, None, unreduced={"Y"})),
                      lambda u: lib.reshard(u, P("Y", None)), lambda u: lib.device_put(u, P()),
                      lambda u: jnp.einsum("ij,jk->ik", u, jnp.ones((2, 2))), psum,
                      lib.shard_map(lambda v: v * 2.0, in_specs=OU, out_specs=OU),
                      lambda u: lax.cond(True, psum, psum, u), lambda u: lib.linearize(psum, u)[0],
                      lib.grad(lambda v: jnp.sum(psum(v) ** 2))):
                show(lambda: run(f)(u))
        show(lambda: lib.jit(lambda u: u[:2])(u))
    ours, theirs = _both(program, **MESH)
    assert ours == theirs
    assert ours[1] == ("float32[2]{U:Y} P(None, unreduced={'Y'}) "
                       "[[56.0, 108.0], [344.0, 412.0], [56.0, 108.0], [344.0, 412.0]]")


def test_vmap_of_a_shard_map_splitting_an_unreduced_value_does_better_than_jax():
    """JAX 0.10.2's vmap of a shard_map whose in_spec is unreduced fails (its batching rule
    reads the spec as a plain tuple: ValueError "Using pspec[...] is dangerous"); refjax's
    keeps the unreduced axes in the batched specs and gives, eagerly and under jit, the value
    the shard_map gives (compared with JAX above) for each member."""
    def program(lib, show):
        P, lax = lib.P, lib.lax
        OU = P("X", None, unreduced={"Y"})
        u = _split_unreduced(lib)(*_operands(lib))
        psum = lib.shard_map(lambda v: lax.psum(v, "Y"), in_specs=OU, out_specs=P("X", None))
        show(lambda: psum(u))
        for run in (lambda f: f, lib.jit):
            show(lambda: run(lib.vmap(psum))(u[None])[0])
    ours, theirs = _both(program, **MESH)
    assert [t.split(":")[0] for t in theirs[1:]] == ["ValueError"] * 2
    assert "is dangerous" in theirs[1]
    assert ours[0] == theirs[0] == ours[1] == ours[2]


def _nested(lib, kind):
    """A shard_map over 'y' inside one over 'x' whose inner body combines its block (varying
    over x and y) with a constant, the outer axis' index or a value varying over x only."""
    jnp, P, lax = lib.numpy, lib.P, lib.lax
    inner = {
        "constant": lambda u, w: u * 2.0 + jnp.ones_like(u),
        "axis_index": lambda u, w: u + lax.axis_index("x") + lax.axis_index("y"),
        "outer_only": lambda u, w: u + (w * 3.0)[:, None],
    }[kind]
    body = lambda u, w: lib.shard_map(  # noqa: E731
        inner, in_specs=(P(None, "y"), P()), out_specs=P(None, "y"), axis_names={"y"})(u, w)
    return lib.shard_map(body, in_specs=(P("x", None), P("x")), out_specs=P("x", None),
                         axis_names={"x"})


def _flat(lib, kind):
    """The same program as one shard_map over 'x' alone, the inner axis' blocks written out
    (JAX differentiates it; JAX 0.10.2's grad of the nested one fails on both axis types)."""
    jnp, P, lax = lib.numpy, lib.P, lib.lax
    body = {
        "constant": lambda u, w: u * 2.0 + 1.0,
        "axis_index": lambda u, w: u + lax.axis_index("x") + jnp.arange(4.0) // 2,
        "outer_only": lambda u, w: u + (w * 3.0)[:, None],
    }[kind]
    return lib.shard_map(body, in_specs=(P("x", None), P("x")), out_specs=P("x", None),
                         axis_names={"x"})


@pytest.mark.parametrize("kind", ["constant", "axis_index", "outer_only"])
def test_nested_shard_map_bodies_varying_over_the_outer_axis(kind):
    """The inner body's operations make their operands vary alike over both axes (JAX's
    auto pvary), which the numpy_ref evaluation of the outer body's lanes used to stage over
    an unbound axis (NameError): values, types, layouts and jaxprs (the inner shard_map's
    mesh with the outer axis Manual) as JAX's under jit on Explicit axes, values eagerly on
    Auto axes; gradients (eager on Auto axes, jitted on Explicit ones)
    equal to JAX's of the same program written as one shard_map (JAX 0.10.2 fails on the
    nested one: a DuplicateSpecError or a lowering error on Auto axes, "Expected cotangent
    type" on Explicit ones)."""
    def program(lib, show, kind=kind):
        jnp, P = lib.numpy, lib.P
        loss = lambda f: lambda a, c: jnp.sum(f(a, c) ** 2)  # noqa: E731
        for axis_type in ("Explicit", "Auto"):
            mesh = lib.make_mesh((2, 2), ("x", "y"),
                                 axis_types=(getattr(lib.sharding.AxisType, axis_type),) * 2)
            a = lib.device_put(jnp.arange(16.0).reshape(4, 4), lib.NamedSharding(mesh, P("x")))
            c = lib.device_put(jnp.arange(4.0) * 10, lib.NamedSharding(mesh, P("x")))
            nested = _nested(lib, kind) if lib is refjax else _flat(lib, kind)
            grads = [lib.grad(loss(nested), argnums=i) for i in (0, 1)]
            with lib.set_mesh(mesh):
                if axis_type == "Explicit":
                    show(lambda: lib.jit(_nested(lib, kind))(a, c))
                    show(lambda: str(lib.make_jaxpr(_nested(lib, kind))(a, c)))
                else:
                    show(lambda: np.asarray(_nested(lib, kind)(a, c)).tolist())
                # (values: two different programs' gradients; the nested one's type on
                # Explicit axes keeps the inner out spec's axes, where JAX fails, see above)
                for g in grads:
                    run = lib.jit if axis_type == "Explicit" else (lambda f: f)
                    show(lambda: np.asarray(run(g)(a, c)).tolist())
    ours = _run(refjax, program, sizes=(1,), names=("unused",))
    theirs = recorded(f"nested {kind}", lambda: _run(real_jax, program, sizes=(1,),
                                                     names=("unused",)),
                      fingerprint(*of_function(program), *of_function(_nested),
                                  *of_function(_flat)))
    assert ours == theirs


# (the oracle's: the xla backend compiles a jit with unreduced values whole in JAX, which
# gives JAX's value there)
@pytest.mark.backends("numpy_ref")
def test_loops_adding_a_closed_over_unreduced_value_do_better_than_jax():
    """A fori_loop adding a closed-over unreduced value to its carry three times holds 4u,
    whose total is 4 times u's, eagerly and under jit (each device adds its own partial
    value); JAX 0.10.2 adds every device the reduced u instead (its total is 7 times u's: a
    wrong answer, recorded here so that a JAX fixing it is noticed)."""
    def program(lib, show):
        P, lax = lib.P, lib.lax
        u = _split_unreduced(lib)(*_operands(lib))
        show(lambda: np.asarray(lib.reshard(u, P())).tolist())
        for run in (lambda f: f, lib.jit):
            show(lambda: np.asarray(lib.reshard(run(lambda u: lax.fori_loop(
                0, 3, lambda i, c: c + u, u))(u), P())).tolist())
    ours, theirs = _both(program, **MESH)
    total = np.array(ast.literal_eval(ours[0]))
    assert ours[0] == theirs[0]
    assert [ast.literal_eval(t) for t in ours[1:]] == [(4 * total).tolist()] * 2
    assert [ast.literal_eval(t) for t in theirs[1:]] == [(7 * total).tolist()] * 2


def test_reshapes_and_contractions_into_split_unreduced_types():
    """A contraction of operands not split over X into P('X', None, unreduced={'Y'}) leaves
    each device its rows of its partial value (numpy_ref kept whole partials, which it could
    not read back); reshapes of unreduced values keep their sets where JAX's shape rule
    gets there (a split of a split dimension, any reshape of an unsplit value to no fewer
    dimensions), JAX's ValueError where its rule reads the spec as a plain tuple, its
    ShardingTypeError where it has none (refjax refused every reshape)."""
    def program(lib, show):
        jnp, P = lib.numpy, lib.P
        a = lib.device_put(jnp.arange(16.0).reshape(4, 4), P(None, "Y"))
        b = lib.device_put(jnp.arange(8.0).reshape(4, 2), P("Y", None))
        for spec in (P(None, None, unreduced={"Y"}), P("X", None, unreduced={"Y"})):
            u = jnp.matmul(a, b, out_sharding=spec)
            show(lambda: lib.sharding.reshard(u, P()))
            for shape in ((2, 2, 2), (4, 1, 2), (2, 4), (8,), (1, 4, 2)):
                show(lambda: u.reshape(shape))
                show(lambda: lib.jit(lambda v: lib.sharding.reshard(v.reshape(shape), P()))(u))
    ours, theirs = _both(program, **MESH)
    assert ours == theirs
    assert sum(s.startswith("float32[2@X,2,2]{U:Y}") for s in ours) == 1
