"""Vector algebra on pytrees of arrays, the vectors the Krylov solvers iterate on."""
import functools
import operator

from ... import numpy as jnp
from ...lax import Precision
from ...tree_util import tree_leaves, tree_map

_vdot = functools.partial(jnp.vdot, precision=Precision.HIGHEST)
add = functools.partial(tree_map, operator.add)
sub = functools.partial(tree_map, operator.sub)


def scale(scalar, tree):
    """scalar * tree, leaf by leaf."""
    return tree_map(lambda leaf: scalar * leaf, tree)


def _vdot_real_leaf(x, y):
    # Re(x^H y) without the imaginary cross terms: the quantities the solvers take it of
    # (r^H M r with M Hermitian) are real, and this keeps their dtype real.
    result = _vdot(x.real, y.real)
    if jnp.iscomplexobj(x) or jnp.iscomplexobj(y):
        result = result + _vdot(x.imag, y.imag)
    return result


def vdot_real(x, y):
    """Re(x^H y) summed over the leaves of two pytrees of one structure."""
    return sum(tree_leaves(tree_map(_vdot_real_leaf, x, y)))


def vdot(x, y):
    """x^H y summed over the leaves of two pytrees of one structure."""
    return sum(tree_leaves(tree_map(_vdot, x, y)))


def norm(x):
    """The 2-norm of a pytree seen as one vector."""
    return jnp.sqrt(vdot_real(x, x))


def result_dtype(tree):
    """The dtype the leaves of tree promote to."""
    return jnp.result_type(*tree_leaves(tree))


def safe_normalize(x, threshold=None):
    """(x / |x|, |x|), or (0, 0) when |x| is at most threshold (by default the dtype's eps):
    a vector that small is taken as zero rather than blown up to noise."""
    size = norm(x)
    if threshold is None:
        threshold = jnp.finfo(size.dtype).eps
    keep = size > jnp.asarray(threshold).real.astype(size.dtype)
    dtype = result_dtype(x)
    unit = tree_map(lambda leaf: jnp.where(keep, leaf / size.astype(dtype), 0).astype(leaf.dtype), x)
    return unit, jnp.where(keep, size, 0)
