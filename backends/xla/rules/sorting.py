"""jax.lax lowering of sort."""
from jax import lax

from ....core.primitives import sorting
from ._common import rule


@rule(sorting.sort_p)
def _sort(*operands, dimension, is_stable, num_keys):
    # Always stable: numpy_ref's (lexsort) order of equal keys is the input order.
    return list(lax.sort(operands, dimension=dimension, is_stable=True, num_keys=num_keys))
