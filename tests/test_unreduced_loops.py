"""Reduced and unreduced values through scan, while and cond (JAX's docs/new_docs/301/
sharding-ad.md capstone: reduced weights scanned over layers inside a microbatch scan
accumulating unreduced gradients), shape operations and gradients of unreduced values, and
shard_map's manual mode (unreduced and reduced specs, pcast among the manual types): each
program run on real JAX 0.10.2 and on refjax and compared (typeof text, every device's data,
error class and message)."""
import re

import jax as real_jax
import numpy as np
import pytest

import refjax
from test_unreduced import _same_as_jax

pytestmark = pytest.mark.backends("numpy_ref", "xla")  # xla: JAX holds the partial values


def _first_and_types(show, f):
    """An error as its class, first line and the line naming the differing types (JAX's
    cond message also names the branch functions' source lines, which refjax omits)."""
    def shown():
        try:
            return f()
        except TypeError as e:
            lines = str(e).splitlines()
            return f"TypeError: {lines[0]} | {[x for x in lines if 'has type' in x]}"
    show(shown)


def test_the_pages_capstone_reduced_weights_through_two_scans():
    """Cell 14: grads of reduced weights used by a layer scan are unreduced (checked with
    typeof inside the jitted microbatch scan), the carry accumulates them unreduced, one
    reshard sums them; the jaxpr of the inner grad types the transposed scan's stacked
    cotangent {U:X}."""
    def program(lib, show):
        jnp, P = lib.numpy, lib.P
        seen = []

        def loss3(ws, batch):
            def apply_layer(xs, w):
                return jnp.tanh(xs @ w), None
            return jnp.sum(lib.lax.scan(apply_layer, batch, ws)[0] ** 2)

        @lib.jit
        def step(ws, xs):
            def microbatch_step(acc, xs_mb):
                grads = lib.grad(loss3)(ws, xs_mb)
                seen.append(str(lib.typeof(grads)))
                return acc + grads, None
            acc = lib.reshard(jnp.zeros_like(ws), P(unreduced={"X"}))
            acc, _ = lib.lax.scan(microbatch_step, acc, xs)
            return lib.reshard(ws, P()) - 0.01 * lib.reshard(acc, P())

        ws = lib.device_put(jnp.stack([jnp.eye(4) / 2] * 3), P(reduced={"X"}))
        xs = lib.device_put(jnp.ones((5, 2, 4)), P(None, "X", None))
        out = step(ws, xs)
        show(lambda: seen)
        show(lambda: lib.typeof(out))
        show(lambda: np.round(np.asarray(out), 5).tolist())
        g = lib.jit(lib.grad(loss3))(ws, xs[0])
        show(lambda: lib.typeof(g))
        show(lambda: np.round(np.asarray(lib.reshard(g, P())), 5).tolist())
    shown = _same_as_jax(program)
    assert shown[:2] == ["['float32[3,4,4]{U:X}']", "float32[3,4,4]"]


def test_unreduced_carries_branches_and_their_type_errors():
    """Eager and jitted scan, while, fori_loop and cond over unreduced values keep each
    device's partial value (a reshard sums them as JAX's); a carry or a branch whose type
    loses the unreduced axes is JAX's TypeError naming both types; grad through a cond of
    reduced values."""
    def program(lib, show):
        jnp, P, lax = lib.numpy, lib.P, lib.lax
        u = lib.reshard(jnp.arange(4.0), P(unreduced={"X"}))
        r = lib.reshard(jnp.ones((4,)), P(reduced={"X"}))
        total = lambda x: lib.reshard(x, P())  # noqa: E731
        double = lambda c, x: (c + c, c)  # noqa: E731
        show(lambda: lax.scan(double, u, jnp.ones(3))[1])
        show(lambda: total(lax.scan(double, u, jnp.ones(3))[1]))
        show(lambda: lib.jit(lambda c: lax.scan(double, c, None, length=3)[0])(u))
        show(lambda: total(lax.cond(False, lambda c: c + c, lambda c: c, u)))
        show(lambda: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] + c[1]),
                                    (0, u))[1])
        show(lambda: lib.typeof(lib.jit(lambda c: lax.fori_loop(0, 3, lambda i, c: c + c,
                                                                c))(u)))
        show(lambda: lib.typeof(lax.while_loop(lambda c: c[0] < 3,
                                               lambda c: (c[0] + 1, c[1] * 2.0), (0, r))[1]))
        # a scalar meeting a reduced value is resharded to reduced (JAX's lax binary ops), so
        # the transposed branch multiplies an unreduced cotangent by a reduced residual
        show(lambda: lib.make_jaxpr(lambda w: lax.cond(True, lambda w: w * 2.0,
                                                       lambda w: w, w))(r))
        show(lambda: lib.grad(lambda w: lax.cond(True, lambda w: jnp.sum(w * 2.0),
                                                 jnp.sum, w))(r))
        g = lib.grad(lambda w: lax.cond(True, lambda w: jnp.sum(jnp.sin(w)), jnp.sum, w))
        show(lambda: lib.typeof(g(r)))
        show(lambda: np.round(np.asarray(total(g(r))), 5).tolist())
        show(lambda: [str(lib.typeof(v)) for v in lax.scan(lambda c, x: (c + x, x * 2.0),
                                                           0.0, r)])
        show(lambda: lib.grad(lambda w: lax.scan(lambda c, x: (c + jnp.sum(w * x), None), 0.0,
                                                 jnp.ones((3, 4)))[0])(r))
        _first_and_types(show, lambda: lax.scan(lambda c, x: (lib.reshard(c, P()), None),
                                                u, jnp.ones(3)))
        _first_and_types(show, lambda: lax.cond(True, lambda c: c,
                                                lambda c: lib.reshard(c, P()), u))
    shown = _same_as_jax(program)
    assert "{U:X}" in shown[-1] and shown[-1].startswith("TypeError")


def _unprefixed(show, f):
    """f's result, or its error with refjax's "jnp.reshape: " naming prefix dropped (refjax's
    errors name the public function they come from; JAX's message follows it unchanged)."""
    def shown():
        try:
            return f()
        except (ValueError, NotImplementedError) as e:
            return f"{type(e).__name__}: {str(e).split(': ', 1)[-1]}"
    show(shown)


def test_shape_operations_and_gradients_of_unreduced_values():
    """reshape (lax, jnp, ravel) and tile of an unreduced or reduced value raise JAX's
    ValueError (JAX reads the spec as a plain tuple), rev its NotImplementedError; stack,
    concatenate, expand_dims, squeeze, broadcast, pad, transpose, split and sums keep the
    unreduced axes; eager and jitted grad of a function returning an unreduced scalar seed
    a reduced cotangent and give JAX's gradients."""
    def program(lib, show):
        jnp, P, lax = lib.numpy, lib.P, lib.lax
        a = lib.device_put(jnp.arange(4.0).reshape(2, 2), P(None, "X"))
        b = lib.device_put(jnp.arange(4.0, 8.0).reshape(2, 2), P("X", None))
        U = P(None, None, unreduced={"X"})
        c = jnp.einsum("ij,jk->ik", a, b, out_sharding=U)
        r = lib.reshard(jnp.ones((2, 2)), P(None, None, reduced={"X"}))
        for f in (lambda: c.reshape(4), lambda: lax.reshape(c, (4,)), lambda: r.reshape(4),
                  lambda: c.ravel(), lambda: jnp.tile(c, 2), lambda: jnp.flip(c, 0)):
            _unprefixed(show, f)
        for f in (lambda: jnp.stack([c, c]), lambda: jnp.concatenate([c, c]),
                  lambda: jnp.expand_dims(c, 0), lambda: jnp.broadcast_to(c, (3, 2, 2)),
                  lambda: lax.pad(c, 0.0, ((1, 0, 0), (0, 0, 0))), lambda: c.T,
                  lambda: jnp.split(c, 2)[0], lambda: c.sum(0), lambda: jnp.stack([r, r])):
            show(lambda: lib.typeof(f()))
        loss = lambda a, b: jnp.einsum("ij,jk->ik", a, b, out_sharding=U).sum()  # noqa: E731
        show(lambda: lib.grad(loss, argnums=(0, 1))(a, b))
        show(lambda: lib.jit(lib.grad(loss))(a, b))
    shown = _same_as_jax(program)
    assert shown[0].startswith("ValueError: Using pspec[...] is dangerous")


def _named(show, f):
    """f's result, or its error (class: message) with the function JAX names replaced (its
    eager shard_map names an internal wrapper, `_rem_singleton`)."""
    def shown():
        try:
            return f()
        except (ValueError, NotImplementedError, TypeError) as e:
            message = re.sub(r"function '[^']*'", "function F", str(e))
            return f"{type(e).__name__}: {message}"
    show(shown)


def test_the_pages_manual_mode_unreduced_and_reduced_specs():
    """sharding-ad.md cells 17-19 and shard-map.md cell 24: pcast to unreduced inside a
    shard_map with an unreduced out spec (each device's partial product kept), grad through
    it and through reduced in_specs (the cotangent of a reduced input is unreduced: each
    device's partial gradient), the four manual types printed inside, eager and under jit."""
    def program(lib, show):
        jnp, P, lax = lib.numpy, lib.P, lib.lax
        a = lib.device_put(jnp.arange(4.0).reshape(2, 2), P(None, "X"))
        b = lib.device_put(jnp.arange(4.0, 8.0).reshape(2, 2), P("X", None))
        x = lib.device_put(jnp.arange(8 * 4.0).reshape(8, 4), P("X", None))
        w = lib.reshard(jnp.arange(4 * 2.0).reshape(4, 2) / 8, P(None, None, reduced={"X"}))
        u = jnp.einsum("ij,jk->ik", a, b, out_sharding=P(None, None, unreduced={"X"}))
        seen = []

        @lib.shard_map(in_specs=(P(None, "X"), P("X", None)),
                       out_specs=P(None, None, unreduced={"X"}))
        def matmul_partial(a, b):
            out = a @ b
            seen.append(str(lib.typeof(out)))
            return lax.pcast(out, "X", to="unreduced")

        @lib.shard_map(in_specs=(P("X", None), P(None, None, reduced={"X"})),
                       out_specs=P("X", None))
        def layer(x, w):
            return x @ w

        @lib.shard_map(in_specs=(P("X"), P(), P(unreduced={"X"}), P(None, None, reduced={"X"})),
                       out_specs=P("X"))
        def four(s, r, un, re_):
            seen.extend(str(lib.typeof(v)) for v in (s, r, un, re_))
            return s

        loss = lambda a, b: jnp.sum(lib.reshard(matmul_partial(a, b), P()))  # noqa: E731
        show(lambda: matmul_partial(a, b))
        show(lambda: lib.jit(matmul_partial)(a, b))
        show(lambda: lib.grad(loss, argnums=(0, 1))(a, b))
        show(lambda: lib.jit(lib.grad(loss, argnums=(0, 1)))(a, b))
        show(lambda: lib.grad(lambda w, x: jnp.sum(layer(x, w) ** 2))(w, x))
        show(lambda: lib.jit(lib.grad(lambda w, x: jnp.sum(layer(x, w) ** 2)))(w, x))
        show(lambda: four(lib.device_put(jnp.arange(8.0), P("X")), jnp.arange(4.0), jnp.einsum(
            "i,i->", x[:, 0], x[:, 1], out_sharding=P(unreduced={"X"})), w))
        show(lambda: lib.reshard(lib.jit(lib.shard_map(lambda v: v + v, in_specs=P(
            None, None, unreduced={"X"}), out_specs=P(None, None, unreduced={"X"})))(u), P()))
        show(lambda: seen)
    shown = _same_as_jax(program)
    assert shown[0].startswith("float32[2,2]{U:X} P(None, None, unreduced={'X'})")
    assert "float32[]{U:X}" in shown[-1] and "float32[4,2]{R:X}" in shown[-1]


def test_manual_casts_and_the_errors_of_mismatched_specs():
    """pcast among the manual types (to reduced, from reduced to varying, to unreduced, an
    unreduced out spec casting a varying value itself) and JAX's errors: an unreduced or
    reduced value claimed replicated, specs disagreeing with the arguments' types, cos of a
    partial sum, a reduced value times a replicated one, sets on Auto axes, a cast from the
    wrong state."""
    def program(lib, show):
        jnp, P, lax = lib.numpy, lib.P, lib.lax
        a = lib.device_put(jnp.arange(4.0).reshape(2, 2), P(None, "X"))
        b = lib.device_put(jnp.arange(4.0, 8.0).reshape(2, 2), P("X", None))
        u = jnp.einsum("ij,jk->ik", a, b, out_sharding=P(None, None, unreduced={"X"}))
        r = lib.reshard(jnp.ones((2, 2)), P(None, None, reduced={"X"}))
        UN, RE = P(None, None, unreduced={"X"}), P(None, None, reduced={"X"})
        sm = lambda f, i, o: lib.shard_map(f, in_specs=i, out_specs=o)  # noqa: E731
        for w in (lambda f: f, lib.jit):
            for f in (
                    lambda: w(sm(lambda a, b: a @ b, (P(None, "X"), P("X", None)), UN))(a, b),
                    lambda: w(sm(lambda a, b: lax.pcast(a @ b, "X", to="unreduced"),
                                 (P(None, "X"), P("X", None)), P()))(a, b),
                    lambda: w(sm(lambda v: lax.pcast(v, "X", to="reduced"), P(), RE))(
                        jnp.ones((2, 2))),
                    lambda: w(sm(lambda v: lax.pcast(v, "X", to="varying"), RE, P("X")))(r),
                    lambda: w(sm(lambda v: v, P(), UN))(r),
                    lambda: w(sm(lambda v: v, UN, UN))(jnp.ones((2, 2))),
                    lambda: w(sm(jnp.cos, UN, UN))(u),
                    lambda: w(sm(lambda v: v * 2.0, RE, RE))(r),
                    lambda: w(sm(lambda v: v, RE, P()))(r),
                    lambda: w(sm(lambda v: lax.pcast(v, "X", to="unreduced"), P(), UN))(
                        jnp.ones((2, 2)))):
                _named(show, f)
        auto = lib.make_mesh((2,), ("X",), axis_types=(lib.sharding.AxisType.Auto,))
        _named(show, lambda: lib.shard_map(lambda v: v, mesh=auto, in_specs=P("X"),
                                           out_specs=P("X", reduced={"X"}))(jnp.ones(4)))
    shown = _same_as_jax(program)
    assert shown[0].startswith("float32[2,2]{U:X}")


def test_static_slices_of_unreduced_values_where_jax_refuses_them():
    """Where JAX 0.10.2 refuses a static slice of an unreduced value only by accident (its
    slice rule reads the spec as a plain tuple: "Using *pspec is dangerous"), refjax slices
    each device's partial value (better than JAX): the slice of the sum is the sum of the
    slices."""
    def program(lib):
        jnp, P = lib.numpy, lib.P
        a = lib.device_put(jnp.arange(4.0).reshape(2, 2), P(None, "X"))
        b = lib.device_put(jnp.arange(4.0, 8.0).reshape(2, 2), P("X", None))
        c = jnp.einsum("ij,jk->ik", a, b, out_sharding=P(None, None, unreduced={"X"}))
        return c[:1], c[0]
    with real_jax.set_mesh(real_jax.make_mesh((2,), ("X",))):
        with pytest.raises(ValueError, match=r"Using \*pspec is dangerous"):
            program(real_jax)
    with refjax.set_mesh(refjax.make_mesh((2,), ("X",), axis_types=(
            refjax.sharding.AxisType.Explicit,))):
        rows, row = program(refjax)
        assert [str(refjax.typeof(v)) for v in (rows, row)] == [
            "float32[1,2]{U:X}", "float32[2]{U:X}"]
        total = np.arange(4.0).reshape(2, 2) @ np.arange(4.0, 8.0).reshape(2, 2)
        np.testing.assert_array_equal(np.asarray(refjax.reshard(rows, refjax.P())), total[:1])
        np.testing.assert_array_equal(np.asarray(refjax.reshard(row, refjax.P())), total[0])
