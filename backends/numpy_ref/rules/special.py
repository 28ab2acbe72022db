"""NumPy rules of the special-function primitives: scipy.special in float64, rounded once."""
from ....core.primitives import special as sp
from .elementwise import special_rule

for _p in (sp.erfc_p, sp.bessel_i0e_p, sp.bessel_i1e_p, sp.igamma_p, sp.igammac_p,
           sp.igamma_grad_a_p, sp.zeta_p, sp.random_gamma_grad_p):
    special_rule(_p)
special_rule(sp.regularized_incomplete_beta_p, "betainc")
