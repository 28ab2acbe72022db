"""jax.lax lowerings of the special-function primitives."""
from jax import lax

from ....core.primitives import special as sp
from ._common import rule
from .elementwise import _nary

_LOWERINGS = {
    sp.erfc_p: lax.erfc, sp.bessel_i0e_p: lax.bessel_i0e, sp.bessel_i1e_p: lax.bessel_i1e,
    sp.igamma_p: lax.igamma, sp.igammac_p: lax.igammac, sp.igamma_grad_a_p: lax.igamma_grad_a,
    sp.zeta_p: lax.zeta, sp.random_gamma_grad_p: lax.random_gamma_grad,
    sp.regularized_incomplete_beta_p: lax.betainc,
}
for _p, _f in _LOWERINGS.items():
    rule(_p)(_nary(_f))
