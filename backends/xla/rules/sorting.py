"""jax.lax lowering of sort."""
from jax import lax

from ....core.primitives import sorting
from ._common import rule


@rule(sorting.sort_p)
def _sort(*operands, dimension, is_stable, num_keys):
    # Always stable: numpy_ref's (lexsort) order of equal keys is the input order.
    return list(lax.sort(operands, dimension=dimension, is_stable=True, num_keys=num_keys))


@rule(sorting.top_k_p)
def _top_k(x, *, k, axis):
    return list(lax.top_k(x, k, axis=axis))


@rule(sorting.approx_top_k_p)
def _approx_top_k(x, *, k, reduction_dimension, recall_target, is_max_k,
                  reduction_input_size_override, aggregate_to_topk):
    fn = lax.approx_max_k if is_max_k else lax.approx_min_k
    return list(fn(x, k, reduction_dimension, recall_target, reduction_input_size_override,
                   aggregate_to_topk))
