"""jax.lax.linalg lowerings of the factorizations (geqrf through jnp.linalg.qr's raw mode,
the public face of JAX's geqrf)."""
import jax.numpy as jnp
from jax.lax import linalg as jlinalg

from ....core.primitives import decompositions as dec
from ._common import rule
from ._linalg import widened


def _bind(jax_prim):
    """A lowering binding JAX's primitive of the same name and params."""
    return widened(lambda *xs, **params: jax_prim.bind(*xs, **params))


rule(dec.cholesky_p)(_bind(jlinalg.cholesky_p))
rule(dec.cholesky_update_p)(_bind(jlinalg.cholesky_update_p))
rule(dec.lu_p)(_bind(jlinalg.lu_p))
rule(dec.lu_pivots_to_permutation_p)(_bind(jlinalg.lu_pivots_to_permutation_p))
rule(dec.householder_product_p)(_bind(jlinalg.householder_product_p))
rule(dec.ormqr_p)(_bind(jlinalg.ormqr_p))
rule(dec.qr_p)(_bind(jlinalg.qr_p))
rule(dec.symmetric_product_p)(_bind(jlinalg.symmetric_product_p))


@rule(dec.geqrf_p)
@widened
def _geqrf(a):
    h, taus = jnp.linalg.qr(a, mode="raw")
    return [jnp.swapaxes(h, -1, -2), taus]
