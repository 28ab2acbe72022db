"""jax.scipy.special: gamma/beta/error-function families, entropies, Bessel, zeta, normal CDF,
exponential integrals, the Faddeeva family, spence, the Bernoulli numbers, Owen's T, Kummer's 1F1,
Gauss's 2F1,
spherical harmonics."""
from .special_functions import (  # noqa: F401
    beta, betainc, betaln, boxcox, boxcox1p, comb, digamma, entr,
    erf, erfc, erfinv, expit, factorial, gamma, gammainc, gammaincc,
    gammaln, gammasgn, i0, i0e, i1, i1e, kl_div, log_ndtr,
    log_softmax, loggamma, logit, logsumexp, multigammaln, ndtr, ndtri, poch,
    polygamma, rel_entr, softmax, xlog1py, xlogy, zeta)
from .special_faddeeva import dawsn, erfcx, fresnel, wofz  # noqa: F401
from .special_expint import bernoulli, exp1, expi, expn, sici, spence  # noqa: F401
from .special_owens import owens_t  # noqa: F401
from .special_bessel import bessel_jn  # noqa: F401
from .special_hyper import hyp1f1  # noqa: F401
from .special_hyp2f1 import hyp2f1  # noqa: F401
from .special_sph_harm import sph_harm_y  # noqa: F401
