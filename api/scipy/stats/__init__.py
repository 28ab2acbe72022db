"""refjax.scipy.stats: jax.scipy.stats's distributions (each a module of logpdf/pdf/cdf/...
functions) and descriptive statistics."""
from .continuous import (cauchy, expon, gennorm, gumbel_l, gumbel_r, laplace, logistic, norm, t,
                         truncnorm, uniform)
from .bounded import beta, chi2, dirichlet, gamma, pareto, vonmises, wrapcauchy
from .discrete import bernoulli, betabinom, binom, geom, multinomial, nbinom, poisson
from .descriptive import mode, rankdata, sem
from .kde import gaussian_kde
from .. import stats_multivariate_normal as multivariate_normal  # noqa: F401

del continuous, bounded, discrete, descriptive, kde  # noqa: F821
