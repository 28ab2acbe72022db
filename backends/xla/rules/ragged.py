"""XLA rule of ragged_dot_general: jax.lax.ragged_dot (the layout refjax supports)."""
import jax

from ....core.primitives import ragged
from ._common import out_sharding as jax_out_sharding
from ._common import rule
from .linalg import _jax_precision


@rule(ragged.ragged_dot_general_p)
def _ragged_dot_general(lhs, rhs, group_sizes, *, precision, preferred_element_type,
                        out_sharding=None, **_):
    dtype = ragged._out_dtype(lhs.dtype, rhs.dtype, preferred_element_type)
    whole = _replicated(lhs, rhs) if out_sharding is not None else None
    if whole is not None:
        lhs, rhs, group_sizes = (jax.sharding.reshard(v, whole) for v in (lhs, rhs, group_sizes))
    out = jax.lax.ragged_dot(lhs.astype(dtype) if lhs.dtype != dtype else lhs,
                             rhs.astype(dtype) if rhs.dtype != dtype else rhs,
                             group_sizes, precision=_jax_precision(precision),
                             preferred_element_type=preferred_element_type, out_sharding=whole)
    return out if whole is None else jax.sharding.reshard(out, jax_out_sharding(out_sharding))


def _replicated(*xs):
    """The replicated sharding of the operands' Explicit mesh (None: untyped): JAX 0.10.2's
    ragged_dot refuses sharded operands (and its CPU decomposition its own select when its
    result is sharded), so the product is computed whole and resharded to the result's type."""
    meshes = [s.mesh for s in (jax.typeof(x).sharding for x in xs) if not s.mesh.empty]
    if not meshes:
        return None
    return jax.sharding.NamedSharding(meshes[0], jax.sharding.PartitionSpec())
