"""Sharding types on Explicit mesh axes for dynamic_slice, dynamic_update_slice, sort,
argsort, top_k, approx_top_k, gather, the scatters, cond, while, scan and fft: each program
run on real JAX 0.10.2 (8 CPU devices) and on refjax and compared (typeof text inside jit,
result types, values, layouts shard by shard, and the ShardingTypeError's message where JAX
refuses)."""
import numpy as np
import pytest

import refjax
from test_explicit_sharding import put, same_as_jax

pytestmark = pytest.mark.backends("numpy_ref", "xla")


def typed_in_jit(f, *args):
    """A program running f under jit on `args` (built by each library), showing the types
    of its results inside jit."""
    def program(lib, show):
        def shown(*xs):
            out = f(lib, *xs)
            out = tuple(out) if isinstance(out, (tuple, list)) else out
            for o in out if isinstance(out, tuple) else (out,):
                show(lib.typeof(o))
            return out
        return lib.jit(shown)(*(a(lib) for a in args))
    return program


def x8x8(*spec):
    return lambda lib: put(lib, (8, 8), *spec)


def update(*spec):
    return lambda lib: lib.device_put(np.ones((2, 4), np.float32), lib.P(*spec))


DYNAMIC = {
    "slice_keeps_the_operands_type": (
        lambda lib, x: lib.lax.dynamic_slice(x, (1, 2), (4, 4)), (x8x8("X", "Y"),)),
    "slice_of_an_unsharded_dim": (
        lambda lib, x: lib.lax.dynamic_slice(x, (3, 1), (8, 3)), (x8x8("X", None),)),
    "slice_not_dividing_the_mesh_axis": (
        lambda lib, x: lib.lax.dynamic_slice(x, (1, 2), (3, 4)), (x8x8("X", "Y"),)),
    "slice_of_one_element": (  # JAX 0.10.2 refuses this too (no replicated special case)
        lambda lib, x: lib.lax.dynamic_slice(x, (1, 2), (1, 1)), (x8x8("X", "Y"),)),
    "traced_start": (
        lambda lib, x: lib.lax.dynamic_slice_in_dim(x, (x.sum() % 5).astype(np.int32), 4, 1),
        (x8x8(None, "Y"),)),
    "update_typed_as_the_operand": (
        lambda lib, x, u: lib.lax.dynamic_update_slice(x, u, (1, 2)),
        (x8x8("X", "Y"), update("X", "Y"))),
    "update_typed_otherwise": (
        lambda lib, x, u: lib.lax.dynamic_update_slice(x, u, (1, 2)),
        (x8x8("X", "Y"), update(None, "Y"))),
    "replicated_update_of_a_sharded_operand": (
        lambda lib, x, u: lib.lax.dynamic_update_slice(x, u, (4, 0)),
        (x8x8("X", None), update())),
    "at_set_with_a_scalar_index": (
        lambda lib, x: lib.lax.dynamic_update_index_in_dim(x, x[:, :1], 3, 1),
        (x8x8("X", None),)),
}


SORTS = {
    "sort_along_an_unsharded_dim": (lambda lib, x: lib.lax.sort(-x, dimension=1),
                                    (x8x8("X", None),)),
    "sort_along_a_sharded_dim": (lambda lib, x: lib.lax.sort(x, dimension=0),
                                 (x8x8("X", "Y"),)),
    "sort_with_values": (lambda lib, x: lib.lax.sort((-x, x * 2), dimension=0, num_keys=1),
                         (x8x8(None, "X"),)),
    "sort_of_differently_typed_operands": (
        lambda lib, x, y: lib.lax.sort((x, y), dimension=1, num_keys=1),
        (x8x8("X", None), x8x8("Y", None))),
    "sort_of_a_typed_and_a_replicated_operand": (
        lambda lib, x, y: lib.lax.sort((x, y), dimension=1, num_keys=1),
        (x8x8("X", None), x8x8())),
    "argsort": (lambda lib, x: lib.numpy.argsort(-x, axis=1), (x8x8("Y", None),)),
    "argsort_along_a_sharded_dim": (lambda lib, x: lib.numpy.argsort(x, axis=0),
                                    (x8x8("Y", None),)),
    "jnp_sort": (lambda lib, x: lib.numpy.sort(x[:, ::-1], axis=-1), (x8x8("X", None),)),
    "top_k": (lambda lib, x: lib.lax.top_k(x % 5.0, 3), (x8x8(("X", "Y"), None),)),
    "top_k_along_a_sharded_dim": (lambda lib, x: lib.lax.top_k(x, 3), (x8x8(None, "X"),)),
    "approx_max_k": (lambda lib, x: lib.lax.approx_max_k(x, 2), (x8x8("X", None),)),
    "approx_min_k_along_a_sharded_dim": (
        lambda lib, x: lib.lax.approx_min_k(x, 2, reduction_dimension=0), (x8x8("X", None),)),
}


def test_sort_and_dynamic_slice_eagerly_type_as_jax():
    def program(lib, show):
        x = put(lib, (8, 8), "X", None)
        outs = (lib.lax.sort(-x, dimension=1), lib.lax.dynamic_slice(x, (2, 1), (4, 4)),
                lib.lax.top_k(x, 2)[1])
        show(*map(lib.typeof, outs))
        return outs
    same_as_jax(program)


def indices(*spec):
    return lambda lib: lib.device_put(np.array([1, 3, 5, 0, 2, 2, 7, 6], np.int32), lib.P(*spec))


def take_rows(lib):
    return lib.lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,),
                                          start_index_map=(0,))


def per_row(lib, scatter=False):
    """Dimension numbers picking one element of each row (rows batched with the indices)."""
    if scatter:
        return lib.lax.ScatterDimensionNumbers(
            update_window_dims=(), inserted_window_dims=(1,), scatter_dims_to_operand_dims=(1,),
            operand_batching_dims=(0,), scatter_indices_batching_dims=(0,))
    return lib.lax.GatherDimensionNumbers(
        offset_dims=(), collapsed_slice_dims=(1,), start_index_map=(1,),
        operand_batching_dims=(0,), start_indices_batching_dims=(0,))


GATHERS = {
    "rows_of_an_operand_sharded_along_them": (lambda lib, x, i: x[i[:4]],
                                              (x8x8("X", "Y"), indices())),
    "columns_keep_the_row_sharding": (lambda lib, x, i: x[:, i], (x8x8("X", None), indices())),
    "columns_of_a_column_sharded_operand": (lambda lib, x, i: x[:, i],
                                            (x8x8("X", "Y"), indices())),
    "take_along_axis": (lambda lib, x, i: lib.numpy.take_along_axis(
        x, lib.numpy.broadcast_to(i[:3], (8, 3)), axis=1), (x8x8("X", None), indices())),
    "scalar_index": (lambda lib, x, i: x[:, i[0]], (x8x8("X", None), indices())),
    "lax_gather_with_sharded_query_indices": (
        lambda lib, x, i: lib.lax.gather(x, i[:, None], take_rows(lib), (1, 8)),
        (x8x8("X", None), indices("X"))),
    "batched_gather_indices_sharded_as_the_operand": (
        lambda lib, x, i: lib.lax.gather(x, i[:, None], per_row(lib), (1, 1)),
        (x8x8("X", None), indices("X"))),
    "batched_gather_replicated_indices": (
        lambda lib, x, i: lib.lax.gather(x, i[:, None], per_row(lib), (1, 1)),
        (x8x8("X", None), indices())),
    "batched_gather_indices_sharded_otherwise": (
        lambda lib, x, i: lib.lax.gather(x, i[:, None], per_row(lib), (1, 1)),
        (x8x8("X", None), indices("Y"))),
    "batched_gather_replicated_operand": (
        lambda lib, x, i: lib.lax.gather(x, i[:, None], per_row(lib), (1, 1)),
        (x8x8(), indices("Y"))),
    "set_columns_to_updates_typed_as_the_slice": (
        lambda lib, x, i: x.at[:, i[:4]].set(x[:, 4:] * 2), (x8x8("X", None), indices())),
    "mul_by_sharded_updates": (lambda lib, x, i: x.at[:, i[:4]].mul(x[:, :4]),
                               (x8x8("X", None), indices())),
    "batched_scatter_add": (
        lambda lib, x, i: lib.lax.scatter_add(x, i[:, None], x[:, 0], per_row(lib, True)),
        (x8x8("X", None), indices())),
    "batched_scatter_indices_sharded_as_the_operand": (
        lambda lib, x, i: lib.lax.scatter(x, i[:, None], x[:, 0] * 2, per_row(lib, True)),
        (x8x8("X", None), indices("X"))),
    "batched_scatter_max_replicated_operand": (
        lambda lib, x, i: lib.lax.scatter_max(x, i[:, None], -x[:, 0], per_row(lib, True)),
        (x8x8(), indices("Y"))),
    "batched_scatter_indices_sharded_otherwise": (
        lambda lib, x, i: lib.lax.scatter_sub(x, i[:, None], x[:, 0], per_row(lib, True)),
        (x8x8("X", None), indices("Y"))),
}


def test_indexing_eagerly_types_as_jax():
    def program(lib, show):
        x, i = put(lib, (8, 8), "X", None), indices()(lib)
        outs = (x[:, i], x.at[:, i[:2]].add(x[:, :2]))
        show(*map(lib.typeof, outs))
        return outs
    same_as_jax(program)


def reshard(lib, x, *spec):
    return lib.sharding.reshard(x, lib.P(*spec))


CONTROL = {
    "cond_keeps_the_branches_type": (
        lambda lib, x: lib.lax.cond(x.sum() > 0, lambda x: x, lambda x: x * 2, x),
        (x8x8("X", "Y"),)),
    "switch": (lambda lib, x: lib.lax.switch(1, [lambda x: x, lambda x: x + 1,
                                                 lambda x: x * x], x), (x8x8("X", None),)),
    "cond_branches_typed_otherwise": (
        lambda lib, x, y: lib.lax.cond(True, lambda x, y: x, lambda x, y: y, x, y),
        (x8x8("X", "Y"), x8x8("X", None))),
    "cond_branch_resharding": (
        lambda lib, x: lib.lax.cond(x.sum() > 0, lambda x: reshard(lib, x, None, "X"),
                                    lambda x: reshard(lib, -x, None, "X"), x),
        (x8x8("X", None),)),
    "fori_loop": (lambda lib, x: lib.lax.fori_loop(0, 3, lambda i, x: x * 2, x),
                  (x8x8("X", "Y"),)),
    "while_loop": (lambda lib, x: lib.lax.while_loop(
        lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 2), (0, x)), (x8x8(None, "Y"),)),
    "carry_resharded_in_the_body": (
        lambda lib, x: lib.lax.while_loop(lambda c: c.sum() < 1e4,
                                          lambda c: reshard(lib, c * 2, None, None), x),
        (x8x8("X", "Y"),)),
    "scan_stacks_ys_unsharded_along_the_new_dim": (
        lambda lib, x: lib.lax.scan(lambda c, _: (c, reshard(lib, c * 2, None, "X")), x, None,
                                    length=2), (x8x8("X", "Y"),)),
    "scan_over_a_replicated_leading_dim": (
        lambda lib, x: lib.lax.scan(lambda c, r: (c + r, c * r), x[0], x),
        (x8x8(None, "Y"),)),
    "scan_carry_resharded": (
        lambda lib, x: lib.lax.scan(lambda c, r: (reshard(lib, c, None, None), r), x, None,
                                    length=2), (x8x8("X", "Y"),)),
}


FFTS = {
    "fft": (lambda lib, x: lib.numpy.fft.fft(x, axis=1), (x8x8("X", None),)),
    "fft_along_a_sharded_dim": (lambda lib, x: lib.numpy.fft.fft(x, axis=1), (x8x8("X", "Y"),)),
    "rfft_resizes_an_unsharded_dim": (lambda lib, x: lib.numpy.fft.rfft(x, axis=1),
                                      (x8x8("X", None),)),
    "irfft_of_rfft": (lambda lib, x: lib.numpy.fft.irfft(lib.numpy.fft.rfft(x, axis=1), axis=1),
                      (x8x8("X", None),)),
    "fft2": (lambda lib, x: lib.numpy.fft.fft2(x), (x8x8("X", None),)),
    "fft_along_the_first_dim": (lambda lib, x: lib.numpy.fft.ifft(x, axis=0),
                                (x8x8("X", None),)),
}


CASES = {f"{family}-{name}": case for family, cases in
         [("dynamic", DYNAMIC), ("sort", SORTS), ("gather", GATHERS), ("control", CONTROL),
          ("fft", FFTS)] for name, case in cases.items()}


@pytest.mark.parametrize("case", CASES)
def test_types_values_and_layouts_as_jax(case):
    f, args = CASES[case]
    same_as_jax(typed_in_jit(f, *args))


def test_eager_control_flow_types_as_jax():
    def program(lib, show):
        x, lax = put(lib, (8, 8), "X", "Y"), lib.lax
        outs = (lax.fori_loop(0, 3, lambda i, c: c * 2, x),
                lax.cond(True, lambda x: x, lambda x: x * 2, x),
                *lax.scan(lambda c, _: (c * 2, c), x, None, length=2),
                lax.while_loop(lambda c: c.sum() < 1e4, lambda c: c * 2, x))
        show(*map(lib.typeof, outs))
        return outs
    same_as_jax(program)


def test_a_loop_over_ragged_dot_needs_its_out_sharding():
    """A loop body whose ragged_dot_general has no out_sharding= is refused as by JAX (its
    NotImplementedError: no inference for it); with out_sharding= the carry keeps its type
    and the loop runs (JAX 0.10.2's CPU decomposition then refuses its own select, see
    test_explicit_sharding_gaps)."""
    mesh = refjax.make_mesh((2, 4), ("X", "Y"),
                            axis_types=(refjax.sharding.AxisType.Explicit,) * 2)
    rhs, sizes = np.ones((2, 8, 8), np.float32), np.array([4, 4], np.int32)
    with refjax.set_mesh(mesh):
        x = put(refjax, (8, 8), "X", "Y")
        loop = lambda **kw: refjax.jit(lambda x: refjax.lax.fori_loop(  # noqa: E731
            0, 2, lambda i, c: refjax.lax.ragged_dot(c, rhs, sizes, **kw), x))
        with pytest.raises(NotImplementedError, match="Please specify out_sharding"):
            loop()(x)
        out = loop(out_sharding=refjax.P("X", "Y"))(x)
        assert str(refjax.typeof(out)) == "float32[8@X,8@Y]"
    np.testing.assert_allclose(np.asarray(out), np.asarray(x) @ rhs[0] @ rhs[0], rtol=1e-6)
