"""The implementation of refjax.scipy.optimize (that module re-exports its public names): BFGS
with a backtracking (Armijo) line search, as one while_loop, so it runs under jit and vmap."""
from typing import Any, NamedTuple

import numpy as np

from ...core.transforms.autodiff import value_and_grad
from .. import lax
from .. import numpy as jnp


class OptimizeResults(NamedTuple):
    """The result of minimize: the minimizer x, whether it converged (success, and status 0;
    1: maxiter reached; 3: the line search found no decrease), the value fun, gradient jac and
    inverse-Hessian estimate hess_inv there, and the counts of evaluations and iterations."""
    x: Any
    success: Any
    status: Any
    fun: Any
    jac: Any
    hess_inv: Any
    nfev: Any
    njev: Any
    nit: Any


class _State(NamedTuple):
    converged: Any
    failed: Any
    k: Any
    nfev: Any
    x: Any
    f: Any
    g: Any
    h: Any
    f_prev: Any


_ARMIJO = 1e-4


def _first_step(f, f_prev, slope):
    """The first trial step: the one a quadratic model predicts from the last decrease
    (Nocedal and Wright 3.60, as scipy and JAX), at most 1."""
    a = 1.01 * 2 * (f - f_prev) / slope
    return jnp.where(jnp.isfinite(a) & (a > 0), jnp.minimum(a, 1), jnp.ones_like(a))


def _line_search(fg, x, f, g, p, f_prev, maxiter):
    """(step, f, g, evaluations, failed): the first of a0, a0/2, a0/4, ... (at most maxiter)
    that decreases f by at least _ARMIJO * step * g.p."""
    slope = jnp.vdot(g, p)

    def evaluate(a):
        f_new, g_new = fg(x + a * p)
        ok = jnp.isfinite(f_new) & (f_new <= f + _ARMIJO * a * slope)
        return f_new, g_new, ok

    def body(carry):
        i, a, _, _, _ = carry
        a = a / 2
        return (i + 1, a) + evaluate(a)
    a0 = _first_step(f, f_prev, slope).astype(f.dtype)
    i, a, f_new, g_new, ok = lax.while_loop(
        lambda c: ~c[4] & (c[0] < maxiter), body, (np.int32(1), a0) + evaluate(a0))
    return a, f_new, g_new, i, ~ok


def _bfgs_update(h, s, y):
    """The BFGS inverse-Hessian update, skipped when the curvature y.s is not positive."""
    ys = jnp.vdot(y, s)
    rho = 1 / ys
    w = jnp.eye(h.shape[0], dtype=h.dtype) - rho * jnp.outer(s, y)
    updated = w @ h @ w.T + rho * jnp.outer(s, s)
    return jnp.where((ys > 0) & jnp.isfinite(rho), updated, h)


def _minimize_bfgs(fun, x0, maxiter=None, norm=np.inf, gtol=1e-5, line_search_maxiter=10):
    x0 = jnp.asarray(x0)
    if x0.ndim != 1:
        raise ValueError(f"minimize: x0 must be one-dimensional, got shape {x0.shape}")
    maxiter = x0.size * 200 if maxiter is None else maxiter
    fg = value_and_grad(fun)
    f0, g0 = fg(x0)
    state = _State(jnp.linalg.norm(g0, ord=norm) < gtol, jnp.zeros((), bool), np.int32(0),
                   np.int32(1), x0, f0, g0, jnp.eye(x0.shape[0], dtype=x0.dtype),
                   f0 + jnp.linalg.norm(g0) / 2)

    def body(st):
        p = -(st.h @ st.g)
        a, f_new, g_new, evals, failed = _line_search(fg, st.x, st.f, st.g, p, st.f_prev,
                                                      line_search_maxiter)
        x_new = st.x + a * p
        h = _bfgs_update(st.h, x_new - st.x, g_new - st.g)
        moved = ~failed   # a failed search keeps the last point
        return _State(jnp.linalg.norm(g_new, ord=norm) < gtol, failed, st.k + 1, st.nfev + evals,
                      jnp.where(moved, x_new, st.x), jnp.where(moved, f_new, st.f),
                      jnp.where(moved, g_new, st.g), jnp.where(moved, h, st.h), st.f)

    st = lax.while_loop(lambda s: ~s.converged & ~s.failed & (s.k < maxiter), body, state)
    status = jnp.where(st.converged, 0, jnp.where(st.failed, 3, jnp.where(st.k == maxiter, 1, -1)))
    return OptimizeResults(x=st.x, success=st.converged & ~st.failed, status=status, fun=st.f,
                           jac=st.g, hess_inv=st.h, nfev=st.nfev, njev=st.nfev, nit=st.k)


def minimize(fun, x0, args=(), *, method, tol=None, options=None):
    """Minimize fun(x, *args) from x0 (one-dimensional); method 'BFGS' only. options: maxiter
    (default 200 len(x0)), norm and gtol (stop when norm(grad, ord=norm) < gtol, default 1e-5),
    line_search_maxiter. tol is accepted and ignored, as in JAX."""
    if not isinstance(args, tuple):
        raise TypeError(f"args argument to jax.scipy.optimize.minimize must be a tuple, got {args}")
    if method.lower() != "bfgs":
        raise ValueError(f"Method {method} not recognized")
    return _minimize_bfgs(lambda x: fun(x, *args), x0, **(options or {}))
