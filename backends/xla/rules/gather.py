"""jax.lax lowerings of gather, scatter-add, -mul, -min, -max and scatter, with JAX's own
dimension numbers."""
from jax import lax

from ....core.primitives import gather as g
from ._common import rule


def _mode(mode):
    return lax.GatherScatterMode[mode.name]


@rule(g.gather_p)
def _gather(x, indices, *, dimension_numbers, slice_sizes, indices_are_sorted, unique_indices,
            mode, fill_value):
    return lax.gather(x, indices, lax.GatherDimensionNumbers(**dimension_numbers._asdict()),
                      slice_sizes, unique_indices=unique_indices,
                      indices_are_sorted=indices_are_sorted, mode=_mode(mode),
                      fill_value=fill_value)


def _scatter(fn):
    def lowered(x, indices, updates, *, dimension_numbers, indices_are_sorted, unique_indices,
                mode):
        dn = dimension_numbers
        if not dn.scatter_dims_to_operand_dims:
            return _with_index_vector(lowered, x, indices, updates, dn,
                                      indices_are_sorted=indices_are_sorted,
                                      unique_indices=unique_indices, mode=mode)
        return fn(x, indices, updates, lax.ScatterDimensionNumbers(**dn._asdict()),
                  indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                  mode=_mode(mode))
    return lowered


rule(g.scatter_add_p)(_scatter(lax.scatter_add))
rule(g.scatter_sub_p)(_scatter(lax.scatter_sub))
rule(g.scatter_mul_p)(_scatter(lax.scatter_mul))
rule(g.scatter_min_p)(_scatter(lax.scatter_min))
rule(g.scatter_max_p)(_scatter(lax.scatter_max))
rule(g.scatter_p)(_scatter(lax.scatter))


def _with_index_vector(lowered, x, indices, updates, dn, **params):
    """XLA mis-scatters several updates with an empty index vector (it keeps one, or fails for
    a rank-0 operand): scatter into x with a leading dim of size 1, indexed by a zero column."""
    shift = lambda dims: tuple(d + 1 for d in dims)  # noqa: E731
    zeros = lax.full(indices.shape[:-1] + (1,), 0, indices.dtype)
    dn = dn._replace(inserted_window_dims=(0,) + shift(dn.inserted_window_dims),
                     scatter_dims_to_operand_dims=(0,),
                     operand_batching_dims=shift(dn.operand_batching_dims))
    out = lowered(lax.expand_dims(x, (0,)), lax.concatenate([zeros, indices], indices.ndim - 1),
                  updates, dimension_numbers=dn, **params)
    return lax.reshape(out, x.shape)
