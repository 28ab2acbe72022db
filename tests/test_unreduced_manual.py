"""Unreduced and reduced values in shard_map beyond the fully manual eager case (issue 15):
lax.psum of an unreduced value (JAX's `unreduced_psum`), the specs of a partially manual
shard_map, unreduced arguments split inside a compiled jit, and a loop over unreduced values
compiled as one program on the xla backend; each program run on real JAX 0.10.2 and on
refjax and compared (printed jaxprs, typeof text, every device's data, error class and
message)."""
import re

import jax as real_jax
import numpy as np
import pytest
from test_unreduced import _same_as_jax

import refjax


pytestmark = pytest.mark.backends("numpy_ref", "xla")  # xla: JAX holds the partial values


def _operands(lib):
    """a (columns over X), b (rows over X) and their product left unreduced over X."""
    jnp, P = lib.numpy, lib.P
    a = lib.device_put(jnp.arange(8.0).reshape(2, 4), P(None, "X"))
    b = lib.device_put(jnp.arange(8.0, 16.0).reshape(4, 2), P("X", None))
    return a, b, jnp.einsum("ij,jk->ik", a, b, out_sharding=P(None, None, unreduced={"X"}))


def test_psum_of_an_unreduced_value_binds_unreduced_psum():
    """In a check_vma body lax.psum of a value unreduced over its axes binds JAX's
    `unreduced_psum` (each device's partial value summed; the result invariant), printed as
    JAX prints it, transposed to `preduced`; lax.psum_scatter binds its
    `unreduced_reduce_scatter` (transposed to `all_gather_reduced`); JAX's errors for what it
    cannot sum, and for pmax or all_gather of partial values (JAX's pvary refusing them)."""
    def program(lib, show):
        jnp, P, lax = lib.numpy, lib.P, lib.lax
        a, b, u = _operands(lib)
        UN = P(None, None, unreduced={"X"})
        total = lib.shard_map(lambda v: lax.psum(v, "X"), in_specs=UN, out_specs=P())
        cast = lib.shard_map(lambda a, b: lax.psum(lax.pcast(a @ b, "X", to="unreduced"), "X"),
                             in_specs=(P(None, "X"), P("X", None)), out_specs=P())
        loss = lambda a, b: jnp.sum(cast(a, b) ** 2)  # noqa: E731
        show(lambda: lib.make_jaxpr(total)(u))
        show(lambda: lib.make_jaxpr(cast)(a, b))
        show(lambda: total(u))
        show(lambda: lib.jit(total)(u))
        show(lambda: lib.jit(cast)(a, b))
        show(lambda: lib.jit(lib.grad(loss, argnums=(0, 1)))(a, b))
        scatter = lib.shard_map(lambda a, b: lax.psum_scatter(lax.pcast(
            a @ b, "X", to="unreduced"), "X", scatter_dimension=1, tiled=True),
            in_specs=(P(None, "X"), P("X", None)), out_specs=P(None, "X"))
        show(lambda: lib.make_jaxpr(scatter)(a, b))
        show(lambda: lib.jit(lib.grad(lambda a, b: jnp.sum(scatter(a, b) ** 2),
                                      argnums=(0, 1)))(a, b))
        for collective in (lambda v: lax.pmax(v, "X"), lambda v: lax.all_gather(v, "X")):
            show(lambda: lib.shard_map(collective, in_specs=UN, out_specs=P())(u))
        show(lambda: lib.shard_map(lambda v: lax.psum(v * 2.0, "X"), in_specs=UN,
                                   out_specs=P())(u))
        show(lambda: lib.shard_map(lambda v: lax.psum(lax.pcast(v, "X", to="unreduced"), "X"),
                                   in_specs=UN, out_specs=P())(u))
    shown = _same_as_jax(program)
    assert "unreduced_psum[axes=('X',)] c" in shown[0]
    assert "unreduced_reduce_scatter[" in shown[6] and "pvary cannot accept" in shown[8]


def test_partially_manual_specs_with_unreduced_or_reduced_axes_are_refused_as_jax():
    """JAX 0.10.2 supports no combination of unreduced/reduced specs in a shard_map leaving
    some mesh axis automatic: each in_spec or out_spec naming them (on manual axes or not,
    given or inferred from the arguments' types) is its NotImplementedError, raised before the
    body is traced, in_specs first; an argument whose unreduced/reduced axes are not its
    spec's is its ValueError."""
    def program(lib, show):
        jnp, P, lax = lib.numpy, lib.P, lib.lax
        a, b, u = _operands(lib)
        r = lib.reshard(jnp.ones((2, 2)), P(None, None, reduced={"X"}))
        UN, RE = P(None, None, unreduced={"X"}), P(None, None, reduced={"X"})
        sm = lambda f, i, o: lib.shard_map(f, in_specs=i, out_specs=o,  # noqa: E731
                                           axis_names={"X"})
        for run in (lambda f: f, lib.jit):
            for f in (
                    lambda: run(sm(lambda a, b: lax.pcast(a @ b, "X", to="unreduced"),
                                   (P(None, "X"), P("X", None)), UN))(a, b),
                    lambda: run(sm(lambda v: v + v, UN, UN))(u),
                    lambda: run(sm(lambda v: lax.psum(v, "X"), UN, P()))(u),
                    lambda: run(sm(lambda v: v.no_such_attribute, RE, UN))(r),
                    lambda: run(sm(lambda v: lax.pcast(v, "X", to="reduced"), P(), RE))(
                        jnp.ones((2, 2))),
                    lambda: run(sm(lambda v: v, P(None, None, reduced={"Y"}), P()))(r),
                    lambda: run(sm(lambda v: v, P(None, None, unreduced={"Z"}), P()))(u),
                    lambda: run(sm(lambda v: v, P("X"), P("X")))(u),
                    lambda: run(sm(lambda v: v * 2.0, P(), P()))(r),
                    lambda: run(lib.shard_map(lambda v: v, out_specs=P(), axis_names={"X"}))(u),
                    lambda: run(lib.shard_map(lambda v: v * 1.0, out_specs=UN))(u)):
                show(f)
    shown = _same_as_jax(program, sizes=(2, 2), names=("X", "Y"))
    assert shown[0].startswith("NotImplementedError: unreduced/reduced can only be passed to "
                               "out_specs when shard_map is in full manual mode")


def test_an_unreduced_in_spec_that_also_splits_the_argument():
    """In a shard_map over every axis of a 2-D mesh, an in_spec splitting an argument over one
    axis and naming it unreduced over the other: each device's lane is its block of its
    partial value (eagerly and under jit, summed by psum in the body); an output split over
    the unreduced axis is JAX's pvary error."""
    def program(lib, show):
        jnp, P, lax = lib.numpy, lib.P, lib.lax
        a = lib.device_put(jnp.arange(16.0).reshape(4, 4), P("X", "Y"))
        b = lib.device_put(jnp.arange(8.0).reshape(4, 2), P("Y", None))
        spec = P("X", None, unreduced={"Y"})
        u = jnp.einsum("ij,jk->ik", a, b, out_sharding=spec)
        total = lib.shard_map(lambda v: lax.psum(v, "Y"), in_specs=spec, out_specs=P("X"))
        double = lib.shard_map(lambda v: v + v, in_specs=spec, out_specs=P("X", "Y"))
        show(lambda: total(u))
        show(lambda: lib.jit(total)(u))
        show(lambda: lib.jit(double)(u))  # an output's block must not be a partial value
    _same_as_jax(program, sizes=(2, 2), names=("X", "Y"))


def test_an_unknown_unreduced_axis_is_named_where_jax_raises_a_bare_key_error():
    """Better than JAX: an unreduced axis of no mesh in a fully manual shard_map's spec is a
    ValueError naming the mesh's axes (JAX 0.10.2: KeyError 'Z')."""
    for lib, error, text in ((real_jax, KeyError, "Z"), (refjax, ValueError, (
            r"in_specs: spec P\(unreduced={'Z'}\) names mesh axis 'Z', which is not an axis "
            r"of Mesh\('X': 2, axis_types=\(Explicit,\)\) \(axes \('X',\)\)"))):
        with lib.set_mesh(lib.make_mesh((2,), ("X",), axis_types=(
                lib.sharding.AxisType.Explicit,))):
            f = lib.shard_map(lambda v: v, in_specs=lib.P(unreduced={"Z"}), out_specs=lib.P())
            with pytest.raises(error, match=text):
                f(lib.numpy.ones(2))


def test_unreduced_arguments_split_inside_compiled_programs():
    """A shard_map splitting an unreduced value made inside the same jit (by a contraction
    with an unreduced out_sharding), inside a loop or a branch of a jit, under grad: each
    device's partial value reaches its lane (numpy_ref runs such programs device by device,
    the xla backend compiles them whole on JAX's Explicit mesh, as JAX does)."""
    def program(lib, show):
        jnp, P, lax = lib.numpy, lib.P, lib.lax
        a, b, u = _operands(lib)
        UN = P(None, None, unreduced={"X"})
        total = lib.shard_map(lambda v: lax.psum(v, "X"), in_specs=UN, out_specs=P())
        double = lib.shard_map(lambda v: v + v, in_specs=UN, out_specs=UN)
        made = lambda a, b: jnp.einsum("ij,jk->ik", a, b, out_sharding=UN)  # noqa: E731
        show(lambda: lib.jit(lambda a, b: total(made(a, b)))(a, b))
        show(lambda: lib.jit(lambda a, b: lib.reshard(double(made(a, b)), P()))(a, b))
        show(lambda: lib.jit(lambda u: lax.scan(lambda c, _: (double(c), None), u, None,
                                                length=3)[0])(u))
        show(lambda: lib.jit(lambda a, b: lax.scan(
            lambda c, x: (c + x * total(made(a, b)), None), jnp.zeros((2, 2)),
            jnp.arange(3.0))[0])(a, b))
        show(lambda: lib.jit(lambda p, a, b: lax.cond(p, lambda: total(made(a, b)),
                                                      lambda: jnp.ones((2, 2))))(True, a, b))
        show(lambda: lib.jit(lib.grad(lambda a, b: jnp.sum(total(made(a, b)) ** 2),
                                      argnums=(0, 1)))(a, b))
        # JAX's lowering of refjax's `mul r 2.0` refuses the reduced operand: the xla backend
        # runs this one op by op
        r = lib.reshard(jnp.ones((2, 2)), P(None, None, reduced={"X"}))
        branches = lambda p, u, r: lax.cond(  # noqa: E731
            p, lambda u, r: (u, r), lambda u, r: (u + u, r * 2.0), u, r)
        for p in (True, False):
            show(lambda: [lib.reshard(v, P()) for v in lib.jit(branches)(p, u, r)])
    _same_as_jax(program)


def test_an_argument_unreduced_where_its_spec_is_not_is_named_without_check_vma():
    """Better than JAX: with check_vma=False a partially manual shard_map given an unreduced
    argument under a plain spec is refjax's ValueError naming the argument's type and spec;
    JAX 0.10.2's ValueError speaks of an out_specs axis 'Y' that no spec names."""
    def call(lib):
        a, b, u = _operands(lib)
        return lib.shard_map(lambda v: v, in_specs=lib.P(), out_specs=lib.P(),
                             axis_names={"X"}, check_vma=False)(u)
    mesh = dict(axis_types=(real_jax.sharding.AxisType.Explicit,) * 2)
    with real_jax.set_mesh(real_jax.make_mesh((2, 2), ("X", "Y"), **mesh)):
        with pytest.raises(ValueError, match="out_specs refers to 'Y'"):
            call(real_jax)
    mesh = dict(axis_types=(refjax.sharding.AxisType.Explicit,) * 2)
    with refjax.set_mesh(refjax.make_mesh((2, 2), ("X", "Y"), **mesh)):
        with pytest.raises(ValueError, match=re.escape(
                "in_specs containing unreduced P() passed to shard_map should be equal to the "
                "unreduced present on the in_aval f32[2,2]{U:X}")):
            call(refjax)


@pytest.mark.backends("xla")
def test_a_loop_over_unreduced_values_compiles_whole_on_xla():
    """A jitted scan accumulating unreduced contractions is one program on the xla backend
    (as in JAX): its compiled text has JAX's all-reduces, named as JAX names them (the one
    at the final reshard, none in the loop), and its values are JAX's."""
    def program(lib):
        jnp, P = lib.numpy, lib.P

        @lib.jit
        def step(a, xs):
            def body(acc, x):
                return acc + jnp.einsum("ij,jk->ik", a, x,
                                        out_sharding=P(None, None, unreduced={"X"})), None
            acc = lib.reshard(jnp.zeros((2, 2)), P(None, None, unreduced={"X"}))
            return lib.reshard(lib.lax.scan(body, acc, xs)[0], P())
        a = lib.device_put(jnp.arange(8.0).reshape(2, 4), P(None, "X"))
        xs = lib.device_put(jnp.arange(24.0).reshape(3, 4, 2), P(None, "X", None))
        text = step.lower(a, xs).compile().as_text()
        names = [re.search(r'op_name="([^"]*)"', line).group(1) for line in text.splitlines()
                 if "all-reduce(" in line or "all-reduce-start(" in line]
        return names, np.asarray(step(a, xs)).tolist()
    shown = []
    for lib in (refjax, real_jax):
        with lib.set_mesh(lib.make_mesh((2,), ("X",), axis_types=(
                lib.sharding.AxisType.Explicit,))):
            shown.append(program(lib))
    assert shown[0] == shown[1]
    assert shown[0][0] == ["jit(step)/reshard"]
