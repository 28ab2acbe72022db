"""Distributions of jax.scipy.stats on bounded or positive supports: gamma, chi2, beta, pareto,
vonmises, wrapcauchy, dirichlet."""
import math


from ... import numpy as jnp
from .. import special
from ._common import distribution, nan_unless, neg_inf_unless, promote
from .continuous import _density


def _with_loc_scale(name, fn, n_shape):
    """fn(y, *shape_params, log_scale) on y = (x - loc) / scale, for (x, *shape, loc=0, scale=1)."""
    def f(x, *args):
        shape, rest = args[:n_shape], args[n_shape:]
        loc, scale = (tuple(rest) + (0, 1)[len(rest):])[:2]
        x, *shape, loc, scale = promote(name, x, *shape, loc, scale)
        return fn((x - loc) / scale, *shape, jnp.log(scale))
    f.__doc__ = f"The {name.split('.')[-1]} at x of the distribution with the given parameters."
    return f


def _module(qualname, doc, n_shape, **fns):
    """A distribution module from functions of (y, *shape_params, log_scale)."""
    wrapped = {k: _with_loc_scale(f"{qualname}.{k}", v, n_shape) for k, v in fns.items()}
    for log_name in ("logpdf", "logcdf", "logsf"):
        if log_name in wrapped:
            wrapped[log_name.replace("log", "", 1)] = _density(wrapped[log_name])
    if "logpdf" in wrapped:
        wrapped["pdf"] = _density(wrapped["logpdf"])
    return distribution(qualname, doc, **wrapped)


def _gamma_logpdf(y, a, log_scale):
    value = special.xlogy(a - 1, y) - y - special.gammaln(a) - log_scale
    return neg_inf_unless(y >= 0, value)


def _gamma_logcdf(y, a, log_scale):
    return jnp.log(special.gammainc(a, jnp.maximum(y, 0)))


def _gamma_logsf(y, a, log_scale):
    return jnp.log(special.gammaincc(a, jnp.maximum(y, 0)))


gamma = _module("gamma", "The gamma distribution with shape a.", 1, logpdf=_gamma_logpdf,
                logcdf=_gamma_logcdf, logsf=_gamma_logsf)


def _chi2(fn):
    """A chi-squared function from the gamma one: shape df / 2, scale 2."""
    return lambda y, df, log_scale: fn(y / 2, df / 2, log_scale + math.log(2))


chi2 = _module("chi2", "The chi-squared distribution with df degrees of freedom.", 1,
               logpdf=_chi2(_gamma_logpdf), logcdf=_chi2(_gamma_logcdf),
               logsf=_chi2(_gamma_logsf))


def _beta_logpdf(y, a, b, log_scale):
    value = special.xlogy(a - 1, y) + special.xlog1py(b - 1, -y) - special.betaln(a, b) - log_scale
    return neg_inf_unless((y >= 0) & (y <= 1), value)


def _beta_logcdf(y, a, b, log_scale):
    return jnp.log(special.betainc(a, b, jnp.clip(y, 0, 1)))


def _beta_logsf(y, a, b, log_scale):
    return jnp.log(special.betainc(b, a, 1 - jnp.clip(y, 0, 1)))


beta = _module("beta", "The beta distribution with shapes a and b.", 2, logpdf=_beta_logpdf,
               logcdf=_beta_logcdf, logsf=_beta_logsf)


def _pareto_logpdf(y, b, log_scale):
    return neg_inf_unless(y >= 1, jnp.log(b) - (b + 1) * jnp.log(y) - log_scale)


def _pareto_logcdf(y, b, log_scale):
    return neg_inf_unless(y >= 1, jnp.log1p(-y ** -b))


def _pareto_logsf(y, b, log_scale):
    return jnp.where(y >= 1, -b * jnp.log(y), jnp.zeros_like(y))


def _pareto_ppf(q, b, loc=0, scale=1):
    q, b, loc, scale = promote("pareto.ppf", q, b, loc, scale)
    return nan_unless((q >= 0) & (q <= 1), loc + scale * (1 - q) ** (-1 / b))


pareto = _module("pareto", "The Pareto distribution with shape b.", 1, logpdf=_pareto_logpdf,
                 logcdf=_pareto_logcdf, logsf=_pareto_logsf)
pareto.ppf = _pareto_ppf
_pareto_ppf.__name__, _pareto_ppf.__doc__ = "ppf", "The quantile function of the Pareto distribution."


def _vonmises_logpdf(x, kappa):
    x, kappa = promote("vonmises.logpdf", x, kappa)
    value = kappa * (jnp.cos(x) - 1) - jnp.log(2 * math.pi * special.i0e(kappa))
    return nan_unless(kappa > 0, value)


vonmises = distribution("vonmises", "The von Mises distribution on the circle.",
                        logpdf=_vonmises_logpdf, pdf=_density(_vonmises_logpdf))


def _wrapcauchy_logpdf(x, c):
    x, c = promote("wrapcauchy.logpdf", x, c)
    two_pi = 2 * math.pi
    value = jnp.log(1 - c * c) - jnp.log(two_pi) - jnp.log(1 + c * c - 2 * c * jnp.cos(x))
    inside = (x >= 0) & (x <= two_pi)
    return nan_unless((c > 0) & (c < 1), neg_inf_unless(inside, value))


wrapcauchy = distribution("wrapcauchy", "The wrapped Cauchy distribution on [0, 2 pi].",
                          logpdf=_wrapcauchy_logpdf, pdf=_density(_wrapcauchy_logpdf))


def _dirichlet_logpdf(x, alpha):
    x, alpha = promote("dirichlet.logpdf", x, alpha)
    if alpha.ndim != 1:
        raise ValueError(f"`alpha` must be one-dimensional; got alpha.shape={alpha.shape}")
    if x.shape[0] not in (alpha.shape[0], alpha.shape[0] - 1):
        raise ValueError("`x` must have either the same number of entries as `alpha` or one "
                         f"entry fewer; got x.shape={x.shape}, alpha.shape={alpha.shape}")
    if x.shape[0] != alpha.shape[0]:
        x = jnp.concatenate([x, (1 - jnp.sum(x, 0))[None]], axis=0)
    a = jnp.expand_dims(alpha, tuple(range(1, x.ndim)))
    log_norm = jnp.sum(special.gammaln(alpha)) - special.gammaln(jnp.sum(alpha))
    value = jnp.sum(special.xlogy(a - 1, x), axis=0) - log_norm
    simplex = jnp.all(x > 0, axis=0) & (jnp.abs(jnp.sum(x, 0) - 1) < 1e-6)
    return neg_inf_unless(simplex, value)


dirichlet = distribution("dirichlet", "The Dirichlet distribution on the simplex.",
                         logpdf=_dirichlet_logpdf, pdf=_density(_dirichlet_logpdf))
