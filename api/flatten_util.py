"""jax.flatten_util: ravel_pytree, a pytree of arrays as one flat vector and back."""
import numpy as np

from ..core import pytree
from . import numpy as jnp


def ravel_pytree(tree):
    """(flat, unravel): the leaves of `tree` raveled and concatenated into one 1-d array of
    their promoted dtype (an empty float32 array for a tree without leaves), and a function
    mapping such a vector back to a tree of the original structure, shapes and dtypes."""
    leaves, treedef = pytree.tree_flatten(tree)
    if not leaves:
        return jnp.zeros((0,), jnp.float32), _Unravel(treedef, (), None, None)
    from_dtypes = tuple(jnp.result_type(x) for x in leaves)
    to_dtype = jnp.result_type(*from_dtypes)
    shapes = tuple(np.shape(x) for x in leaves)
    flat = jnp.concatenate([jnp.ravel(jnp.asarray(x, to_dtype)) for x in leaves])
    if all(d == to_dtype for d in from_dtypes):  # one dtype: unravel keeps the vector's
        from_dtypes = to_dtype = None
    return flat, _Unravel(treedef, shapes, from_dtypes, to_dtype)


class _Unravel:
    """The inverse of one ravel_pytree: a vector back to the tree (hashable, so it can be
    a static argument of jit)."""

    def __init__(self, treedef, shapes, from_dtypes, to_dtype):
        self._key = (treedef, shapes, from_dtypes, to_dtype)

    def __call__(self, flat):
        treedef, shapes, from_dtypes, to_dtype = self._key
        if to_dtype is not None and jnp.result_type(flat) != to_dtype:
            raise TypeError(f"unravel function given array of dtype {jnp.result_type(flat)}, "
                            f"but expected dtype {to_dtype}")
        sizes = [int(np.prod(s, dtype=np.int64)) for s in shapes]
        chunks = jnp.split(flat, np.cumsum(sizes)[:-1]) if shapes else []
        leaves = [c.reshape(s) for c, s in zip(chunks, shapes)]
        if from_dtypes is not None:
            leaves = [c.astype(d) for c, d in zip(leaves, from_dtypes)]
        return pytree.tree_unflatten(treedef, leaves)

    def __eq__(self, other):
        return isinstance(other, _Unravel) and self._key == other._key

    def __hash__(self):
        return hash(self._key)
