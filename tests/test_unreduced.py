"""Unreduced arrays outside jit (JAX's docs/new_docs/301/sharding-ad.md and parallel.md): each
device holds its own partial value; their types, per-device data, resharding (the all-reduce),
device_put, jit and JAX's errors, each program run on real JAX 0.10.2 and on refjax and
compared (typeof text, every device's data, error class and message)."""
import re

import jax as real_jax
import numpy as np
import pytest
from hypothesis import given, strategies as st

import refjax
from refjax.spec.checks import budget

pytestmark = pytest.mark.backends("numpy_ref", "xla")  # xla: JAX holds the partial values


def _shown(lib, x):
    """What an Array shows: its type, its sharding's spec and each device's data."""
    data = [np.asarray(s.data).tolist() for s in x.addressable_shards]
    return f"{lib.typeof(x)} {x.sharding.spec} {data}"


def _run(lib, program, sizes=(2,), names=("X",)):
    """The strings program(lib, show, mesh) shows, each result or error (class: message)."""
    shown = []

    def show(f):
        try:
            r = f()
        except Exception as e:  # the class and message are what is compared
            r = f"{type(e).__name__}: {e}"
        shown.append(_shown(lib, r) if hasattr(r, "addressable_shards") else str(r))

    types = (lib.sharding.AxisType.Explicit,) * len(sizes)
    with lib.set_mesh(lib.make_mesh(sizes, names, axis_types=types)):
        program(lib, show)
    return shown


def _same_as_jax(program, **mesh):
    ours, theirs = _run(refjax, program, **mesh), _run(real_jax, program, **mesh)
    assert ours == theirs
    return ours


def _operands(lib):
    a = lib.device_put(np.arange(4.0, dtype=np.float32).reshape(2, 2), lib.P(None, "X"))
    b = lib.device_put(np.arange(4.0, 8.0, dtype=np.float32).reshape(2, 2), lib.P("X", None))
    return a, b


def test_the_pages_unreduced_matmul_its_partial_sums_and_linear_operations():
    """sharding-ad.md's cells 6-11: einsum with an unreduced out_sharding holds each device's
    partial product (device 0 does not hold the total), sums of partial sums, linear
    operations (add, transpose, sum, mul by a reduced value) device by device, and JAX's
    errors for the others (cos, neg, mul by an unreduced-less scalar, add of a plain value)."""
    def program(lib, show):
        jnp, P = lib.numpy, lib.P
        a, b = _operands(lib)
        U = P(None, None, unreduced={"X"})
        c = jnp.einsum("ij,jk->ik", a, b, out_sharding=U)
        c2 = jnp.einsum("ij,jk->ik", 2.0 * a, b, out_sharding=U)
        ones = lib.reshard(jnp.ones((2, 2)), P(None, None, reduced={"X"}))
        for f in (lambda: c, lambda: c + c2, lambda: c.T, lambda: c.sum(), lambda: c * ones,
                  lambda: lib.lax.dot_general(a, b, (((1,), (0,)), ((), ())), out_sharding=U),
                  lambda: jnp.cos(c), lambda: -c, lambda: c * 2.0, lambda: c + 1.0,
                  lambda: ones, lambda: jnp.cos(ones)):
            show(f)
    shown = _same_as_jax(program)
    assert shown[0] == ("float32[2,2]{U:X} P(None, None, unreduced={'X'}) "
                        "[[[0.0, 0.0], [8.0, 10.0]], [[6.0, 7.0], [18.0, 21.0]]]")
    assert shown[6].startswith("NotImplementedError: unreduced rule for cos")


def test_reading_printing_and_resharding_an_unreduced_array():
    """np.asarray, tolist and a shard's index refuse (JAX's NotImplementedError); repr and str
    show the shape and sharding, not values; reshard to a plain, sharded or reduced spec sums
    the partial values; to the same unreduced spec keeps them; a replicated Array resharded or
    device_put to an unreduced spec is held by the first device of the group, zeros on the
    others; host data cannot be put so (JAX's error), nor an unreduced Array put elsewhere."""
    def program(lib, show):
        jnp, P = lib.numpy, lib.P
        a, b = _operands(lib)
        U = P(None, None, unreduced={"X"})
        c = jnp.einsum("ij,jk->ik", a, b, out_sharding=U)
        total = lib.reshard(c, P(None, None))
        for f in (lambda: np.asarray(c), lambda: c.tolist(), lambda: c.addressable_shards[0].index,
                  lambda: c.addressable_shards[1].replica_id, lambda: repr(c), lambda: str(c),
                  lambda: total, lambda: lib.reshard(c, P("X", None)),
                  lambda: lib.reshard(c, P(None, None, reduced={"X"})), lambda: lib.reshard(c, U),
                  lambda: lib.reshard(total, U), lambda: lib.device_put(total, U),
                  lambda: lib.device_put(np.ones((2, 2), np.float32), U),
                  lambda: lib.device_put(c, P())):
            show(f)
    shown = _same_as_jax(program)
    assert shown[6].endswith("[[[6.0, 7.0], [26.0, 31.0]], [[6.0, 7.0], [26.0, 31.0]]]")


def test_jit_takes_and_returns_unreduced_arrays():
    """A jitted program returning an unreduced value gives each device's partial value, as
    JAX's partitioned program; one taking it adds or reduces it."""
    def program(lib, show):
        jnp, P = lib.numpy, lib.P
        a, b = _operands(lib)
        U = P(None, None, unreduced={"X"})
        dot = lib.jit(lambda a, b: jnp.einsum("ij,jk->ik", a, b, out_sharding=U))
        c = dot(a, b)
        for f in (lambda: c, lambda: lib.jit(lambda c: c + c)(c),
                  lambda: lib.jit(lambda c: lib.reshard(c, P()))(c),
                  lambda: lib.jit(lambda c: lib.reshard(c.T + c, P("X", None)))(c),
                  lambda: lib.jit(lambda c: c * 3.0)(c)):
            show(f)
    _same_as_jax(program)


def test_structural_operations_keep_unreduced_and_reduced_axes_under_jit():
    """Under jit JAX slices, squeezes, pads, concatenates and selects unreduced and reduced
    values (each device's partial value), refuses dynamic_slice and neg of unreduced ones
    (and reshape: JAX 0.10.2's ValueError from its own spec handling, refjax's JAX-worded
    NotImplementedError, both refusals)."""
    def program(lib, show):
        jnp, P = lib.numpy, lib.P
        a, b = _operands(lib)
        c = jnp.einsum("ij,jk->ik", a, b, out_sharding=P(None, None, unreduced={"X"}))
        r = lib.reshard(jnp.ones((2, 2)), P(None, None, reduced={"X"}))
        for f in (lambda v: v[1:], lambda v: v[None].squeeze(0), lambda v: jnp.pad(v, 1),
                  lambda v: jnp.concatenate([v, v]), lambda v: jnp.where(True, v, v),
                  lambda v: lib.lax.dynamic_slice(v, (0, 0), (1, 2)), lambda v: -v):
            for v in (c, r):
                show(lambda: lib.jit(f)(v))
    _same_as_jax(program)


def test_shape_dependent_operations_on_partitioned_unreduced_values():
    """An operation whose params are global indices (slice, pad, concatenate) or which sums
    over a split dimension, on a value unreduced over X and split over Y: JAX's partial values
    per device (numpy_ref computes each group's partial value whole, then each device keeps
    its block, rather than computing blocks on the wrong indices); the total as JAX's."""
    def program(lib, show):
        jnp, P = lib.numpy, lib.P
        a = lib.device_put(np.arange(16.0, dtype=np.float32).reshape(4, 4), P("Y", "X"))
        b = lib.device_put(np.arange(16.0, dtype=np.float32).reshape(4, 4), P("X", None))
        c = jnp.einsum("ij,jk->ik", a, b, out_sharding=P("Y", None, unreduced={"X"}))
        for f in (lambda: c[:, 1:], lambda: lib.jit(lambda c: c[:, 1:])(c), lambda: jnp.pad(c, 1),
                  lambda: c.sum(axis=0), lambda: jnp.concatenate([c, c]),
                  lambda: lib.reshard(c + c, P())):
            show(f)
    mesh = dict(sizes=(2, 2), names=("X", "Y"))
    ours, theirs = _run(refjax, program, **mesh), _run(real_jax, program, **mesh)
    # JAX's eager slice reads the spec as a plain tuple (its own ValueError); refjax gives
    # what JAX's jitted slice gives
    assert theirs[0].startswith("ValueError: Using *pspec is dangerous")
    assert ours[0] == ours[1] and ours[1:] == theirs[1:]


def test_the_parallel_pages_device_put_to_unreduced_on_a_2d_mesh():
    """parallel.md's cells 16-17: a value sharded over X and Y put unreduced over Y keeps each
    device's own block (zeros elsewhere, no communication); a replicated one over two axes
    is held by device 0 only; reshard sums them back."""
    def program(lib, show):
        P = lib.P
        x = lib.device_put(np.arange(32.0, dtype=np.float32).reshape(8, 4), P("X", "Y"))
        y = lib.device_put(x, P("X", None, unreduced={"Y"}))
        z = lib.device_put(lib.device_put(np.arange(3.0, dtype=np.float32), P()),
                           P(None, unreduced={"X", "Y"}))
        for f in (lambda: y, lambda: str(y.sharding), lambda: z,
                  lambda: lib.reshard(y, P("X", "Y")), lambda: lib.reshard(z, P())):
            show(f)
    _same_as_jax(program, sizes=(4, 2), names=("X", "Y"))


_STEPS = st.lists(st.sampled_from(["dot", "add", "T", "reshard", "reduced", "sum"]),
                  min_size=1, max_size=4)


def _random_program(steps, seed):
    """A program over a drawn sequence: unreduced matmuls of drawn data, added to the running
    value (kept unreduced or resharded to a replicated or reduced spec), transposed, summed;
    each step's result or error is shown (a failed step leaves the value as it was)."""
    data = np.random.default_rng(seed).integers(-4, 5, size=(3, 4, 4)).astype(np.float32)

    def program(lib, show):
        jnp, P = lib.numpy, lib.P
        U = P(None, None, unreduced={"X"})
        a = lib.device_put(data[0], P(None, "X"))
        dot = lambda i: jnp.einsum("ij,jk->ik", a, lib.device_put(  # noqa: E731
            data[i], P("X", None)), out_sharding=U)
        v = [dot(1)]

        def step(kind):
            x = v[-1]
            if kind in ("dot", "add"):  # (a summed value meets a summed product: see below)
                return x + (x if kind == "add" else dot(2).sum(tuple(range(2 - x.ndim))))
            if kind in ("T", "sum"):
                return x.T if kind == "T" else x.sum(0) if x.ndim else x.sum()
            return lib.reshard(x, P(*[None] * x.ndim, reduced={"X"} if kind == "reduced"
                                    else frozenset()))
        for kind in steps:
            show(lambda: v.append(step(kind)) or v[-1])
        show(lambda: lib.reshard(v[-1], P()))
    return program


@given(steps=_STEPS, seed=st.integers(0, 2**16))
@budget(1.0)
def test_drawn_programs_of_unreduced_matmuls_adds_and_reshards_match_jax(steps, seed):
    """Drawn programs: each device's partial values, the types and the reduced values agree
    with JAX's (an add of an unreduced value and a summed one is JAX's ShardingTypeError)."""
    _same_as_jax(_random_program(steps, seed))


_TYPED = re.compile(r"(\S+) = (dot_general|transpose|add_any)\b")


def _typed_equations(jaxpr):
    """The types and names of a printed jaxpr's contractions, transposes and cotangent sums."""
    return [m.group(1).split(":", 1)[1] + " " + m.group(2) for m in _TYPED.finditer(str(jaxpr))]


def test_grad_through_a_reshard_to_reduced_gives_unreduced_cotangents():
    """sharding-ad.md's cells 12-13: the cotangent of a reduced value is unreduced (each
    backward contraction over the batch stops before its all-reduce; fan-out adds unreduced
    cotangents), and the reshard's transpose reduces it once, to the primal's type."""
    def program(lib, show):
        jnp, P = lib.numpy, lib.P
        x = lib.device_put(np.arange(32.0, dtype=np.float32).reshape(8, 4) % 5, P("X", None))
        w = lib.device_put(np.arange(8.0, dtype=np.float32).reshape(4, 2) - 3, P(None, None))
        reduced = lambda w: lib.reshard(w, P(None, None, reduced={"X"}))  # noqa: E731
        squares = lambda w, x: jnp.sum((x @ w) ** 2)  # noqa: E731
        loss2 = lambda w, x: squares(reduced(w), x)  # noqa: E731
        # (squared: a plain sum's cotangent is a broadcast 1.0, typed by `shardad`'s change)
        fanout = lambda w, x1, x2: (lambda r: squares(r, x1) + squares(r, x2))(reduced(w))  # noqa
        # reshard prints as JAX's primitive of that name (a constraint on Explicit axes)
        show(lambda: lib.jit(lambda w: lib.reshard(reduced(w), P("X", None))).trace(w).jaxpr)
        for f, args in ((loss2, (w, x)), (fanout, (w, x, x + 1))):
            grad = lib.jit(lib.grad(f))
            show(lambda: _typed_equations(grad.trace(*args).jaxpr))
            show(lambda: grad(*args))
    shown = _same_as_jax(program)
    assert "b:f32[4,2]{R:X} = reshard a" in shown[0]
    assert shown[1] == str(["f32[8@X,2] dot_general", "f32[2,4]{U:X} dot_general",
                            "f32[4,2]{U:X} transpose"])
    assert "f32[4,2]{U:X} add_any" in shown[3] and shown[2].startswith("float32[4,2] P(None,")


def test_adding_an_unreduced_value_of_lower_rank_broadcasts_it_where_jax_cannot_lower_it():
    """jnp's add broadcasting a summed unreduced value against an unreduced matrix: JAX 0.10.2
    fails to lower it (a bare NotImplementedError from its MLIR broadcast); refjax gives what
    JAX gives with the broadcast spelled out (jnp.broadcast_to), device by device."""
    def program(lib, show, spelled_out):
        a, b = _operands(lib)
        c = lib.numpy.einsum("ij,jk->ik", a, b, out_sharding=lib.P(None, None, unreduced={"X"}))
        s = c.sum(0)
        show(lambda: (lib.numpy.broadcast_to(s, (2, 2)) if spelled_out else s) + c)
    ours = _run(refjax, lambda lib, show: program(lib, show, False))
    assert _run(real_jax, lambda lib, show: program(lib, show, False)) == ["NotImplementedError: "]
    assert ours == _run(real_jax, lambda lib, show: program(lib, show, True))
    assert ours[0].endswith("[[[8.0, 10.0], [16.0, 20.0]], [[30.0, 35.0], [42.0, 49.0]]]")


@pytest.mark.backends("numpy_ref")
def test_a_backend_without_partial_values_refuses_unreduced_values(monkeypatch):
    """A backend that holds reduced values only (`partial_values` False: a user's backend)
    refuses to make an unreduced value outside jit rather than give shards JAX would not."""
    monkeypatch.setattr(refjax.backends.get_backend("numpy_ref"), "partial_values", False)
    mesh = refjax.make_mesh((2,), ("X",), axis_types=(refjax.sharding.AxisType.Explicit,))
    with refjax.set_mesh(mesh):
        a, b = _operands(refjax)
        with pytest.raises(NotImplementedError, match="this backend holds reduced values only"):
            refjax.numpy.einsum("ij,jk->ik", a, b,
                                out_sharding=refjax.P(None, None, unreduced={"X"}))


def test_broadcasting_size_one_dimensions_keeps_each_devices_partial_value():
    """lax.broadcast_in_dim growing a size-1 dimension of an unreduced value, eagerly and in
    a jit: each device broadcasts its own partial value (hand-computed: the partial products'
    column sums [8, 10] and [24, 28]). JAX 0.10.2 broadcasts the reduced total [32, 38] on
    every device while typing the result unreduced, so its sum counts the total twice."""
    mesh = refjax.make_mesh((2,), ("X",), axis_types=(refjax.sharding.AxisType.Explicit,))
    with refjax.set_mesh(mesh):
        a, b = _operands(refjax)
        c = refjax.numpy.einsum("ij,jk->ik", a, b, out_sharding=refjax.P(None, None, unreduced={"X"}))
        s = refjax.lax.expand_dims(c.sum(0), (0,))
        grow = lambda s: refjax.lax.broadcast_in_dim(s, (2, 2), (0, 1))  # noqa: E731
        for f in (grow, refjax.jit(grow)):
            r = f(s)
            assert str(refjax.typeof(r)) == "float32[2,2]{U:X}"
            assert [np.asarray(x.data).tolist() for x in r.addressable_shards] == [
                [[8.0, 10.0], [8.0, 10.0]], [[24.0, 28.0], [24.0, 28.0]]]
