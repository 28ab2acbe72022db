"""jax.lax.linalg lowerings of the spectral decompositions. refjax's algorithm enums become
JAX's; subsets of eigenpairs and singular triplets (which JAX's CPU kernels refuse) are
slices of the full decomposition, as numpy_ref computes them."""
import jax.numpy as jnp
from jax.lax import linalg as jlinalg

from ....core.primitives import spectral as sp
from ._common import rule
from ._linalg import widened


def _jax_enum(value, jax_enum):
    return None if value is None else jax_enum(value.value)


@rule(sp.eigh_p)
@widened
def _eigh(x, *, lower, sort_eigenvalues, subset_by_index, algorithm):
    v, w = jlinalg.eigh_p.bind(x, lower=lower, sort_eigenvalues=sort_eigenvalues,
                               subset_by_index=None,
                               algorithm=_jax_enum(algorithm, jlinalg.EighImplementation))
    if subset_by_index is None:
        return [v, w]
    start, end = subset_by_index
    return [v[..., start:end], w[..., start:end]]


@rule(sp.eig_p)
@widened
def _eig(x, *, implementation, **params):
    return jlinalg.eig_p.bind(x, implementation=_jax_enum(implementation,
                                                          jlinalg.EigImplementation), **params)


@rule(sp.svd_p)
@widened
def _svd(x, *, full_matrices, compute_uv, subset_by_index, algorithm):
    outs = jlinalg.svd_p.bind(x, full_matrices=full_matrices, compute_uv=compute_uv,
                              subset_by_index=None,
                              algorithm=_jax_enum(algorithm, jlinalg.SvdAlgorithm))
    if subset_by_index is None:
        return outs
    start, end = subset_by_index
    cuts = [outs[0][..., start:end]]
    if compute_uv:
        cuts += [outs[1][..., start:end], outs[2][..., start:end, :]]
    return cuts


@rule(sp.schur_p)
@widened
def _schur(x, **params):
    return jlinalg.schur_p.bind(x, **params)


@rule(sp.hessenberg_p)
@widened
def _hessenberg(a):
    if a.shape[-1] == 0:  # JAX's lowering fails on its own shape (-1,) for the taus
        return [a, jnp.zeros(a.shape[:-2] + (0,), a.dtype)]
    return jlinalg.hessenberg_p.bind(a)


@rule(sp.tridiagonal_p)
@widened
def _tridiagonal(a, *, lower):
    return jlinalg.tridiagonal_p.bind(a, lower=lower)
