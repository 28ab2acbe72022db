"""Helpers jax.scipy.linalg's modules share: promotion, square checks, batching over leading
dimensions."""
from ...core.transforms.vmap import vmap
from ..numpy.promotion import _arrays, _promote_to_inexact, broadcast_shapes, broadcast_to


def inexact(name, *xs):
    """xs as arrays promoted together to an inexact dtype (TypeError for lists, as JAX)."""
    return _promote_to_inexact(*_arrays(name, *xs))


def require_square(name, a, what="a"):
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"{name}: expected {what} to be a (batched) square matrix, got "
                         f"{what}.shape={a.shape}")


def over_batch(fn, arrays, core_ndims):
    """fn on the core (trailing) dimensions of arrays, mapped over their broadcast leading
    dimensions (numpy.vectorize's signature semantics, through vmap)."""
    batch = broadcast_shapes(*(a.shape[:a.ndim - k] for a, k in zip(arrays, core_ndims)))
    arrays = [broadcast_to(a, batch + a.shape[a.ndim - k:]) for a, k in zip(arrays, core_ndims)]
    for _ in batch:
        fn = vmap(fn)
    return fn(*arrays)
