"""jnp.polyfit (least squares on a Vandermonde matrix) and jnp.roots (eigenvalues of the
companion matrix)."""
import operator

import numpy as np

from ...core.primitives.linalg_common import complex_dtype
from ...core.errors import ConcretizationTypeError
from ...core.trace import Tracer
from .. import lax
from . import linalg
from .promotion import (_arrays, _promote_to_inexact, asarray, atleast_1d, finfo, issubdtype,
                        staged_as)
from .creation import arange, diag, ones
from .indexing import where
from .reductions import all as _all, argmin
from .ufuncs import power, sqrt
from .products import dot, outer
from .manipulation import roll


def _complex_empty(dtype):
    return asarray(np.array([], dtype=complex_dtype(dtype)))


@staged_as("_roots_no_zeros")
def _roots_no_zeros(p):
    if p.size < 2:
        return _complex_empty(p.dtype)
    companion = diag(ones((p.size - 2,), p.dtype), -1)
    return linalg.eigvals(companion.at[0, :].set(-p[1:] / p[0]))


@staged_as("_roots_with_zeros")
def _roots_with_zeros(p, num_leading_zeros):
    p = where(len(p) == num_leading_zeros, 1.0, p)
    found = _roots_no_zeros(roll(p, -num_leading_zeros))
    # the roots of the rolled-in zeros are exactly 0: moved last and replaced by NaN
    found = lax.sort_key_val(found == 0, found)[1]
    return where(arange(found.size) < found.size - num_leading_zeros, found,
                 complex(np.nan, np.nan))


def roots(p, *, strip_zeros=True):
    """The roots of the polynomial with coefficients p (highest degree first), as complex
    numbers. Leading zeros are stripped (p must be concrete), or with strip_zeros=False
    give NaN roots (traceable)."""
    p, = _promote_to_inexact(*_arrays("roots", p))
    p = atleast_1d(p)
    if p.ndim != 1:
        raise ValueError("Input must be a rank-1 array.")
    if p.size < 2:
        return _complex_empty(p.dtype)
    leading = where(_all(p == 0), len(p), argmin(p == 0))
    if not strip_zeros:
        return _roots_with_zeros(p, leading)
    if isinstance(leading, Tracer):
        raise ConcretizationTypeError(
            "Abstract tracer value encountered where concrete value is expected: The error "
            "occurred in the jnp.roots() function. To use this within a JIT-compiled context, "
            "pass strip_zeros=False, but be aware that leading zeros will result in some "
            "returned roots being set to NaN.")
    return _roots_no_zeros(p[int(leading):])


def _polyfit_inputs(x, y, deg, w):
    if x.ndim != 1:
        raise TypeError("expected 1D vector for x")
    if x.size == 0:
        raise TypeError("expected non-empty vector for x")
    if y.ndim < 1 or y.ndim > 2:
        raise TypeError("expected 1D or 2D array for y")
    if x.shape[0] != y.shape[0]:
        raise TypeError("expected x and y to have same length")
    if w is not None and w.ndim != 1:
        raise TypeError("expected a 1-d array for weights")
    if w is not None and w.shape[0] != y.shape[0]:
        raise TypeError("expected w and y to have the same length")


def _covariance(lhs, scale, resids, n_points, order, y_ndim, cov):
    vbase = linalg.inv(dot(lhs.T, lhs)) / outer(scale, scale)
    if cov == "unscaled":
        fac = asarray(1.0)
    else:
        if n_points <= order:
            raise ValueError("the number of data points must exceed order to scale the "
                             "covariance matrix")
        fac = resids / (n_points - order)
    if y_ndim == 1:
        return vbase * atleast_1d(fac)[None]
    return vbase[:, :, None] * atleast_1d(fac)[None, None, :]


@staged_as("polyfit", static_argnames=("deg", "rcond", "full", "cov"))
def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """The least-squares polynomial of degree deg through (x, y) (coefficients highest degree
    first; y may hold several columns), optionally weighted; with full=True also lstsq's
    residuals, rank, singular values and rcond; with cov=True the coefficients' covariance."""
    x, y = _arrays("polyfit", x, y)
    w = None if w is None else _promote_to_inexact(*_arrays("polyfit", w))[0]
    deg = operator.index(deg)
    if deg < 0:
        raise ValueError("expected deg >= 0")
    _polyfit_inputs(x, y, deg, w)
    order = deg + 1
    if rcond is None and not issubdtype(x.dtype, np.inexact):
        raise ValueError(f"polyfit: x has dtype {x.dtype}: without rcond, x must be inexact "
                         "(its default rcond is len(x) * finfo(x.dtype).eps)")
    rcond = float(len(x) * float(finfo(x.dtype).eps) if rcond is None else rcond)
    lhs = power(x[:, None], arange(deg, -1, -1, dtype=np.int32)[None, :])
    rhs = y
    if w is not None:
        lhs = lhs * w[:, None]
        rhs = rhs * (w[:, None] if rhs.ndim == 2 else w)
    scale = sqrt((lhs * lhs).sum(axis=0))
    lhs = lhs / scale[None, :]
    c, resids, rank, s = linalg.lstsq(lhs, rhs, rcond)
    c = (c.T / scale[None, :]).T if c.ndim > 1 else c / scale
    if full:
        return c, resids, rank, s, asarray(rcond)
    if cov:
        return c, _covariance(lhs, scale, resids, len(x), order, y.ndim, cov)
    return c


