"""Spec entries of the collectives and shard_map, run per device inside refjax.shard_map."""
from hypothesis import strategies as st

from .base import (ALL, COMPLEX, NUM, Arg, PrimitiveSpec, Signature, all_args, floats, kind,
                   no_args, shapes, weak_flag)
from .programs import program_fn, program_reference, programs, smooth_elements

# A sample is an operand of shape (n, *block) over a mesh axis 'x' of n devices: each device
# sees one block. The reference is jax.vmap(axis_name='x') over the leading axis, where JAX's
# collectives mean the same thing and need no multi-device JAX.
_SIZES = st.sampled_from((1, 2, 4))


def _sharded(body, n, check_vma=True):
    """body applied per device to the blocks of each (n, *block) operand, results stacked."""
    import refjax
    from refjax.sharding import PartitionSpec as P
    lax = refjax.lax
    mesh = refjax.make_mesh((n,), ("x",))

    def per_device(*blocks):
        outs = body(*[lax.squeeze(b, (0,)) for b in blocks])
        return [lax.expand_dims(o, (0,)) for o in outs]
    return refjax.shard_map(per_device, mesh=mesh, in_specs=P("x"), out_specs=P("x"),
                            check_vma=check_vma)


def _vmapped(jax, body):
    return jax.vmap(body, axis_name="x")


def _operand(draw, dtype, shape, diff, unique):
    if diff and kind(dtype) == "f":
        return Arg(tuple(shape), dtype, False, _GRID if unique else floats(-3.0, 3.0, dtype),
                   unique)
    return Arg(tuple(shape), dtype, draw(weak_flag(dtype)))


def collective(name, dtypes, block_params, refjax_fn, jax_fn, *, linear=True, nondiff=None,
               exact=False, unique=False, notes="", check_vma=True):
    """The entry of a collective: `block_params(n)` draws (block shape, params);
    refjax_fn / jax_fn(lax, v, n, **params) apply it to one device's block (in a shard_map
    body with `check_vma`)."""
    def signature(dtype, diff):
        @st.composite
        def sig(draw):
            n = draw(_SIZES)
            block, params = draw(block_params(n))
            x = _operand(draw, dtype, (n,) + block, diff, unique)
            return Signature((x,), {"n": n, **params})
        return sig()

    def apply(x, *, n, **params):
        import refjax
        return _sharded(lambda v: [refjax_fn(refjax.lax, v, n, **params)], n, check_vma)(x)[0]

    def reference(jax, x, *, n, **params):
        return _vmapped(jax, lambda v: jax_fn(jax.lax, v, n, **params))(x)

    return PrimitiveSpec(
        name=name, dtypes=dtypes, family="parallel", signature=signature, reference=reference,
        apply=apply, exact=exact, diff_args=no_args if nondiff else all_args, nondiff=nondiff,
        linear_args=all_args if linear else no_args, notes=notes or
        "run per device inside shard_map over mesh axis 'x'; reference: jax.vmap(axis_name='x')")


def _plain(n):
    return shapes().map(lambda s: (s, {}))


@st.composite
def _gather_params(draw, n):
    block = draw(shapes())
    tiled = draw(st.booleans()) and len(block) > 0
    axis = draw(st.integers(0, len(block) - (1 if tiled else 0)))
    return block, {"axis": axis, "tiled": tiled}


@st.composite
def _scatter_params(draw, n):
    block = list(draw(shapes(min_rank=1)))
    dim = draw(st.integers(0, len(block) - 1))
    tiled = draw(st.booleans())
    block[dim] = n * draw(st.integers(0, 2)) if tiled else n
    return tuple(block), {"scatter_dimension": dim, "tiled": tiled}


@st.composite
def _permute_params(draw, n):
    perm = draw(st.permutations(range(n)))
    return draw(shapes()), {"perm": tuple((i, p) for i, p in enumerate(perm))}


@st.composite
def _all_to_all_params(draw, n):
    block = list(draw(shapes(min_rank=1)))
    split = draw(st.integers(0, len(block) - 1))
    concat = draw(st.integers(0, len(block) - 1))
    tiled = draw(st.booleans())
    block[split] = n * draw(st.integers(0, 2)) if tiled else n
    return tuple(block), {"split_axis": split, "concat_axis": concat, "tiled": tiled}


@st.composite
def _source_params(draw, n):
    return draw(shapes()), {"source": draw(st.integers(0, n - 1))}


def _via_reduced(lax, v, n):
    """The blocks' psum cast to reduced and back to varying (the identity on values)."""
    return lax.pcast(lax.pcast(lax.psum(v, "x"), "x", to="reduced"), "x", to="varying")


def _gather_reduced(lax, v, n, axis, tiled):
    """The blocks gathered into a reduced value (no lax function binds it), cast back to
    varying."""
    from ..core.primitives.parallel_vma import all_gather_reduced_p
    out = all_gather_reduced_p.bind(v, axis_name="x", axis=axis, tiled=tiled, axis_size=n)
    return lax.pcast(out, "x", to="varying")


def _psum(lax, v, n):
    return lax.psum(v, "x")


# Distinct values on a grid: ties between devices are kinks of pmax/pmin.
_GRID = st.integers(-300, 300).map(lambda k: k / 100)
SPECS = [
    collective("psum", ALL + COMPLEX, _plain, lambda lax, v, n: lax.psum(v, "x"),
               lambda lax, v, n: lax.psum(v, "x"), check_vma=False,
               notes="lax.psum in a shard_map body with check_vma=False (with check_vma it "
                     "binds psum_invariant); reference: jax.vmap(axis_name='x')"),
    collective("psum_invariant", ALL + COMPLEX, _plain, lambda lax, v, n: lax.psum(v, "x"),
               lambda lax, v, n: lax.psum(v, "x"),
               notes="lax.psum in a check_vma shard_map body; reference: "
                     "jax.vmap(axis_name='x')"),
    collective("pmax", ALL + COMPLEX, _plain, lambda lax, v, n: lax.pmax(v, "x"),
               lambda lax, v, n: lax.pmax(v, "x"), linear=False, exact=True, unique=True),
    collective("pmin", ALL + COMPLEX, _plain, lambda lax, v, n: lax.pmin(v, "x"),
               lambda lax, v, n: lax.pmin(v, "x"), linear=False, exact=True, unique=True),
    collective("axis_index", ALL + COMPLEX, _plain,
               lambda lax, v, n: lax.axis_index("x"), lambda lax, v, n: lax.axis_index("x"),
               linear=False, nondiff="zero", exact=True,
               notes="the operand only shapes the blocks; the result is the device's index"),
    collective("pvary", ALL + COMPLEX, _plain,
               lambda lax, v, n: lax.pvary(lax.psum(v, "x"), "x"),
               lambda lax, v, n: lax.psum(v, "x"),
               notes="marks a value as varying over 'x' (the identity on values), here the "
                     "invariant psum of the blocks; transposed to psum_invariant"),
    collective("preduced", ALL + COMPLEX, _plain, _via_reduced, _psum,
               notes="lax.pcast(..., to='reduced') of an invariant value (the identity on "
                     "values), then back to varying; transposed to a psum of its unreduced "
                     "cotangent"),
    collective("reduced_vary_cast_p", ALL + COMPLEX, _plain, _via_reduced, _psum,
               notes="lax.pcast(..., to='varying') of a reduced value (the identity on values); "
                     "transposed to vary_unreduced_cast_p"),
    collective("vary_unreduced_cast_p", ALL + COMPLEX, _plain,
               lambda lax, v, n: lax.psum(lax.pcast(v, "x", to="unreduced"), "x"),
               lambda lax, v, n: lax.psum(v, "x"),
               notes="lax.pcast(..., to='unreduced') of a varying value (the identity on each "
                     "device's value), summed by psum; transposed to reduced_vary_cast_p"),
    collective("unreduced_psum", ALL + COMPLEX, _plain,
               lambda lax, v, n: lax.psum(lax.pcast(v, "x", to="unreduced"), "x"),
               lambda lax, v, n: lax.psum(v, "x"),
               notes="lax.psum of an unreduced value in a check_vma shard_map body (each "
                     "device's partial value summed; JAX's unreduced_psum); transposed to "
                     "preduced"),
    collective("all_gather", ALL + COMPLEX, _gather_params,
               lambda lax, v, n, axis, tiled: lax.all_gather(v, "x", axis=axis, tiled=tiled),
               lambda lax, v, n, axis, tiled: lax.all_gather(v, "x", axis=axis, tiled=tiled),
               exact=True),
    collective("reduce_scatter", NUM + COMPLEX, _scatter_params,
               lambda lax, v, n, scatter_dimension, tiled: lax.psum_scatter(
                   v, "x", scatter_dimension=scatter_dimension, tiled=tiled),
               lambda lax, v, n, scatter_dimension, tiled: lax.psum_scatter(
                   v, "x", scatter_dimension=scatter_dimension, tiled=tiled),
               notes="what lax.psum_scatter binds (JAX's name), run per device inside "
                     "shard_map over mesh axis 'x'; reference: jax.vmap(axis_name='x')"),
    collective("unreduced_reduce_scatter", NUM + COMPLEX, _scatter_params,
               lambda lax, v, n, scatter_dimension, tiled: lax.psum_scatter(
                   lax.pcast(v, "x", to="unreduced"), "x", scatter_dimension=scatter_dimension,
                   tiled=tiled),
               lambda lax, v, n, scatter_dimension, tiled: lax.psum_scatter(
                   v, "x", scatter_dimension=scatter_dimension, tiled=tiled),
               notes="lax.psum_scatter of an unreduced value (JAX's unreduced psum_scatter: "
                     "each device's partial value summed and scattered); transposed to "
                     "all_gather_reduced"),
    collective("all_gather_reduced", ALL + COMPLEX, _gather_params, _gather_reduced,
               lambda lax, v, n, axis, tiled: lax.all_gather(v, "x", axis=axis, tiled=tiled),
               exact=True,
               notes="the transpose of unreduced_reduce_scatter (bound here directly): "
                     "all_gather of varying blocks into a value reduced over 'x'"),
    collective("ppermute", ALL + COMPLEX, _permute_params,
               lambda lax, v, n, perm: lax.ppermute(v, "x", perm),
               lambda lax, v, n, perm: lax.ppermute(v, "x", perm), exact=True),
    collective("all_to_all", ALL + COMPLEX, _all_to_all_params,
               lambda lax, v, n, split_axis, concat_axis, tiled: lax.all_to_all(
                   v, "x", split_axis, concat_axis, tiled=tiled),
               lambda lax, v, n, split_axis, concat_axis, tiled: lax.all_to_all(
                   v, "x", split_axis, concat_axis, tiled=tiled), exact=True),
    collective("pbroadcast", ALL + COMPLEX, _source_params,
               lambda lax, v, n, source: lax.pbroadcast(v, "x", source),
               lambda lax, v, n, source: lax.all_gather(v, "x")[source], exact=True,
               notes="reference: lane `source` of all_gather (JAX 0.10.2's pbroadcast has no "
                     "CPU lowering and its vmap rule fails on a list index)"),
]


# ---------------------------------------------------------------- shard_map

def _shard_map_signature(dtype, diff):
    @st.composite
    def sig(draw):
        n = draw(_SIZES)
        program = draw(programs(dtype, smooth=diff, max_eqns=4))
        elems = smooth_elements(dtype) if diff and kind(dtype) == "f" else None
        args = tuple(Arg((n,) + s, d, False, elems) for s, d in program.inputs)
        return Signature(args, {"n": n, "program": program})
    return sig()


def _shard_map_apply(*args, n, program):
    return _sharded(program_fn(program), n)(*args)


def _shard_map_reference(jax, *args, n, program):
    return _vmapped(jax, lambda *blocks: program_reference(program, blocks))(*args)


SPECS.append(PrimitiveSpec(
    name="shard_map", dtypes=ALL + COMPLEX, family="parallel", signature=_shard_map_signature,
    reference=_shard_map_reference, apply=_shard_map_apply,
    tol={"float16": (1e-2, 1e-2), "bfloat16": (5e-2, 5e-2), "float32": (1e-4, 1e-5),
         "complex64": (1e-4, 1e-5)},
    diff_args=all_args, linear_args=all_args,
    notes="a random program per block of (n, *block) operands over mesh axis 'x'"))


# ---------------------------------------------------------------- ragged_all_to_all

@st.composite
def _ragged_layout(draw, n):
    """Chunk rows c per (sender, receiver): sender i reads its chunk for d at d * c, receiver
    d writes sender i's at i * c. No overlaps: XLA leaves the order of overlapping writes
    unspecified, and the transpose (as JAX's) sends a row read twice back once. Offsets per
    device, flattened over devices: io[i][d], ss[i][d], oo[i][d] on sender i, rs[d][i] on d."""
    c = draw(st.integers(0, 2))
    ss = [[draw(st.integers(0, c)) for _ in range(n)] for _ in range(n)]
    io = [[d * c for d in range(n)] for _ in range(n)]
    oo = [[i * c for _ in range(n)] for i in range(n)]
    rs = [[ss[i][d] for i in range(n)] for d in range(n)]
    return c, {"n": n, **{k: tuple(sum(v, [])) for k, v in
                          (("io", io), ("ss", ss), ("oo", oo), ("rs", rs))}}


def _ragged_signature(dtype, diff):
    @st.composite
    def sig(draw):
        n = draw(_SIZES)
        c, params = draw(_ragged_layout(n))
        rest = draw(shapes(max_rank=1))
        args = [_operand(draw, dtype, (n * n * c,) + rest, diff, False) for _ in range(2)]
        return Signature(tuple(args), params)
    return sig()


def _ragged_apply(operand, output, *, n, io, ss, oo, rs):
    import numpy as np

    import refjax
    index = [np.asarray(v, np.int32) for v in (io, ss, oo, rs)]
    body = lambda *a: [refjax.lax.ragged_all_to_all(*a, axis_name="x")]  # noqa: E731
    from refjax.sharding import PartitionSpec as P
    mesh = refjax.make_mesh((n,), ("x",))
    return refjax.shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=P("x"))(
        operand, output, *index)[0]


def _ragged_reference(jax, operand, output, *, n, io, ss, oo, rs):
    """A Python loop over senders and chunks (JAX's XLA:CPU has no ragged-all-to-all and its
    vmap rule raises NotImplementedError on the mapped axis)."""
    import numpy as np
    x, out = np.asarray(operand), np.array(output)
    rows_in, rows_out = x.shape[0] // n, out.shape[0] // n
    for i in range(n):
        for d in range(n):
            s, a, b = ss[i * n + d], io[i * n + d], oo[i * n + d]
            out[d * rows_out + b:][:s] = x[i * rows_in + a:][:s]
    return jax.numpy.asarray(out)


SPECS.append(PrimitiveSpec(
    name="ragged_all_to_all", dtypes=ALL + COMPLEX, family="parallel",
    signature=_ragged_signature, apply=_ragged_apply, reference=_ragged_reference, exact=True,
    diff_args=all_args, linear_args=all_args,
    notes="run inside shard_map over mesh axis 'x' (the offsets are params of the sample); "
          "reference: a Python loop; the xla backend gathers every device's chunks (XLA:CPU "
          "has no ragged-all-to-all); the transpose sends the cotangent's chunks back (rows "
          "read by two chunks get one of them, as in JAX: samples read disjoint rows)"))
