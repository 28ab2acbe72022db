"""Continuous distributions of jax.scipy.stats on the real line: norm, expon, uniform, logistic,
laplace, cauchy, gumbel_l, gumbel_r, t, truncnorm, gennorm."""
import math


from ... import numpy as jnp
from .. import special
from ._common import distribution, nan_unless, neg_inf_unless, promote, standardize

_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


def _scaled(name, fn):
    """fn(y) for y = (x - loc) / scale: a cdf-like function of (x, loc=0, scale=1)."""
    def f(x, loc=0, scale=1):
        return fn(standardize(name, x, loc, scale)[0])
    f.__doc__ = f"The {name} of the distribution at x, with location loc and scale `scale`."
    return f


def _log_density(name, fn):
    """fn(y) - log(scale): a logpdf of (x, loc=0, scale=1) from the standard one."""
    def f(x, loc=0, scale=1):
        y, log_scale = standardize(name, x, loc, scale)
        return fn(y) - log_scale
    f.__doc__ = f"The {name} of the distribution at x, with location loc and scale `scale`."
    return f


def _density(logpdf):
    """exp(logpdf): the pdf (or pmf) of the same arguments."""
    def f(*args, **kwargs):
        return jnp.exp(logpdf(*args, **kwargs))
    f.__doc__ = "exp(logpdf) of the same arguments."
    return f


def _quantile(name, fn, open_interval=False):
    """loc + scale * fn(q): a ppf/isf of (q, loc=0, scale=1), nan for q outside [0, 1] (outside
    (0, 1) with open_interval, as JAX's Gumbel ppfs)."""
    def f(q, loc=0, scale=1):
        q, loc, scale = promote(name, q, loc, scale)
        inside = (q > 0) & (q < 1) if open_interval else (q >= 0) & (q <= 1)
        return nan_unless(inside, loc + scale * fn(q))
    f.__doc__ = f"The {name} (inverse of the cdf or sf) at q, with location loc and scale `scale`."
    return f


def _location_scale(qualname, doc, logpdf, cdf=None, sf=None, logcdf=None, logsf=None, ppf=None,
                    isf=None, open_quantiles=False):
    """The module of a location-scale family given its standard functions."""
    fns = {"logpdf": _log_density("logpdf", logpdf)}
    fns["pdf"] = _density(fns["logpdf"])
    for fname, fn in (("cdf", cdf), ("sf", sf), ("logcdf", logcdf), ("logsf", logsf)):
        if fn is not None:
            fns[fname] = _scaled(fname, fn)
    for fname, fn in (("ppf", ppf), ("isf", isf)):
        if fn is not None:
            fns[fname] = _quantile(fname, fn, open_quantiles)
    return distribution(qualname, doc, **fns)


def _c(y, v):
    """v as a Python float: it takes y's dtype and keeps y's weak type, as JAX's constants do."""
    return float(v)


norm = _location_scale(
    "norm", "The normal distribution.",
    logpdf=lambda y: -y * y / 2 - _c(y, _LOG_SQRT_2PI),
    cdf=special.ndtr, sf=lambda y: special.ndtr(-y), logcdf=special.log_ndtr,
    logsf=lambda y: special.log_ndtr(-y), ppf=special.ndtri, isf=lambda q: -special.ndtri(q))

expon = _location_scale(
    "expon", "The exponential distribution.",
    logpdf=lambda y: neg_inf_unless(y >= 0, -y),
    cdf=lambda y: jnp.where(y >= 0, -jnp.expm1(-y), _c(y, 0)),
    sf=lambda y: jnp.where(y >= 0, jnp.exp(-y), _c(y, 1)),
    logcdf=lambda y: neg_inf_unless(y >= 0, jnp.log(-jnp.expm1(-y))),
    logsf=lambda y: jnp.where(y >= 0, -y, _c(y, 0)),
    ppf=lambda q: -jnp.log1p(-q))

uniform = _location_scale(
    "uniform", "The uniform distribution on [loc, loc + scale].",
    logpdf=lambda y: neg_inf_unless((y >= 0) & (y <= 1), jnp.zeros_like(y)),
    cdf=lambda y: jnp.clip(y, 0, 1).astype(y.dtype), ppf=lambda q: q)  # strong, as JAX's

logistic = _location_scale(
    "logistic", "The logistic distribution.",
    logpdf=lambda y: -y - 2 * jnp.logaddexp(0, -y),
    cdf=special.expit, sf=lambda y: special.expit(-y),
    ppf=special.logit, isf=lambda q: -special.logit(q))

laplace = _location_scale(
    "laplace", "The Laplace (double exponential) distribution.",
    logpdf=lambda y: -jnp.abs(y) - _c(y, math.log(2)),
    cdf=lambda y: jnp.where(y < 0, 0.5 * jnp.exp(y), 1 - 0.5 * jnp.exp(-y)))

cauchy = _location_scale(
    "cauchy", "The Cauchy distribution.",
    logpdf=lambda y: -jnp.log1p(y * y) - _c(y, math.log(math.pi)),
    cdf=lambda y: 0.5 + jnp.arctan(y) / _c(y, math.pi),
    sf=lambda y: 0.5 - jnp.arctan(y) / _c(y, math.pi),
    logcdf=lambda y: jnp.log(0.5 + jnp.arctan(y) / _c(y, math.pi)),
    logsf=lambda y: jnp.log(0.5 - jnp.arctan(y) / _c(y, math.pi)),
    ppf=lambda q: jnp.tan(_c(q, math.pi) * (q - 0.5)),
    isf=lambda q: jnp.tan(_c(q, math.pi) * (0.5 - q)))

gumbel_r = _location_scale(
    "gumbel_r", "The right-skewed Gumbel distribution.",
    logpdf=lambda y: -y - jnp.exp(-y),
    cdf=lambda y: jnp.exp(-jnp.exp(-y)), sf=lambda y: -jnp.expm1(-jnp.exp(-y)),
    logcdf=lambda y: -jnp.exp(-y), logsf=lambda y: jnp.log(-jnp.expm1(-jnp.exp(-y))),
    ppf=lambda q: -jnp.log(-jnp.log(q)), open_quantiles=True)

gumbel_l = _location_scale(
    "gumbel_l", "The left-skewed Gumbel distribution.",
    logpdf=lambda y: y - jnp.exp(y),
    cdf=lambda y: -jnp.expm1(-jnp.exp(y)), sf=lambda y: jnp.exp(-jnp.exp(y)),
    logcdf=lambda y: jnp.log(-jnp.expm1(-jnp.exp(y))), logsf=lambda y: -jnp.exp(y),
    ppf=lambda q: jnp.log(-jnp.log1p(-q)), open_quantiles=True)


# ---------------------------------------------------------------- shape-parameter families

def _t_logpdf(x, df, loc=0, scale=1):
    x, df, loc, scale = promote("t.logpdf", x, df, loc, scale)
    y = (x - loc) / scale
    half = (df + 1) / 2
    norm_const = (special.gammaln(half) - special.gammaln(df / 2)
                  - 0.5 * jnp.log(df * math.pi) - jnp.log(scale))
    return norm_const - half * jnp.log1p(y * y / df)


t = distribution("t", "Student's t distribution.", logpdf=_t_logpdf, pdf=_density(_t_logpdf))


def _gennorm_logpdf(x, beta):
    x, beta = promote("gennorm.logpdf", x, beta)
    return jnp.log(0.5 * beta) - special.gammaln(1 / beta) - jnp.abs(x) ** beta


def _gennorm_cdf(x, beta):
    x, beta = promote("gennorm.cdf", x, beta)
    return 0.5 + 0.5 * jnp.sign(x) * special.gammainc(1 / beta, jnp.abs(x) ** beta)


gennorm = distribution("gennorm", "The generalized normal distribution.", logpdf=_gennorm_logpdf,
                       pdf=_density(_gennorm_logpdf), cdf=_gennorm_cdf)


def _truncnorm_args(name, x, a, b, loc, scale):
    x, a, b, loc, scale = promote(name, x, a, b, loc, scale)
    return (x - loc) / scale, a, b, jnp.log(scale)


def _log_diff_ndtr(a, b):
    """log(Phi(b) - Phi(a)) for a < b, computed in the tail where it is accurate."""
    upper = a > 0   # both in the right tail: use the symmetric difference of survival functions
    lo, hi = jnp.where(upper, -b, a), jnp.where(upper, -a, b)
    log_hi, log_lo = special.log_ndtr(hi), special.log_ndtr(lo)
    return log_hi + jnp.log1p(-jnp.exp(log_lo - log_hi))


def _truncnorm_logpdf(x, a, b, loc=0, scale=1):
    y, a, b, log_scale = _truncnorm_args("truncnorm.logpdf", x, a, b, loc, scale)
    value = -y * y / 2 - _LOG_SQRT_2PI - _log_diff_ndtr(a, b) - log_scale
    return neg_inf_unless((y >= a) & (y <= b), value)


def _truncnorm_logcdf(x, a, b, loc=0, scale=1):
    y, a, b, _ = _truncnorm_args("truncnorm.logcdf", x, a, b, loc, scale)
    inside = _log_diff_ndtr(a, jnp.clip(y, a, b)) - _log_diff_ndtr(a, b)
    return jnp.where(y >= b, jnp.zeros_like(y), neg_inf_unless(y > a, inside))


def _truncnorm_logsf(x, a, b, loc=0, scale=1):
    y, a, b, _ = _truncnorm_args("truncnorm.logsf", x, a, b, loc, scale)
    inside = _log_diff_ndtr(jnp.clip(y, a, b), b) - _log_diff_ndtr(a, b)
    return jnp.where(y <= a, jnp.zeros_like(y), neg_inf_unless(y < b, inside))


truncnorm = distribution(
    "truncnorm", "The normal distribution truncated to [a, b] (in standard units).",
    logpdf=_truncnorm_logpdf, pdf=_density(_truncnorm_logpdf), logcdf=_truncnorm_logcdf,
    cdf=_density(_truncnorm_logcdf), logsf=_truncnorm_logsf, sf=_density(_truncnorm_logsf))
