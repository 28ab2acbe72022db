"""jax.experimental.ode: odeint, adaptive Dormand-Prince Runge-Kutta integration whose gradient
is the adjoint method's (Chen et al. 2018, appendix C) through custom_vjp."""
import functools

import numpy as np

from ...core.array import BaseArray
from ...core.config import default_matmul_precision
from ...core.transforms.autodiff import vjp
from ...core.transforms.closure import closure_convert
from ...core.transforms.custom_vjp import custom_vjp
from ...core.transforms.jit import jit
from ...core.transforms.vmap import vmap
from .. import lax, tree_util
from ..flatten_util import ravel_pytree
from .. import numpy as jnp

# The Dormand-Prince 5(4) tableau: stage times, stage weights, the 5th-order solution's weights,
# the difference of the 5th- and 4th-order weights (the error estimate), and Shampine's weights
# for the midpoint value the dense-output polynomial passes through.
_ALPHA = [1 / 5, 3 / 10, 4 / 5, 8 / 9, 1., 1., 0]
_BETA = [[1 / 5, 0, 0, 0, 0, 0, 0],
         [3 / 40, 9 / 40, 0, 0, 0, 0, 0],
         [44 / 45, -56 / 15, 32 / 9, 0, 0, 0, 0],
         [19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729, 0, 0, 0],
         [9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656, 0, 0],
         [35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0]]
_C_SOL = _BETA[-1]
_C_ERR = [35 / 384 - 1951 / 21600, 0, 500 / 1113 - 22642 / 50085, 125 / 192 - 451 / 720,
          -2187 / 6784 + 12231 / 42400, 11 / 84 - 649 / 6300, -1. / 60.]
_C_MID = [6025192743 / 30085553152 / 2, 0, 51252292925 / 65400821598 / 2,
          -2691868925 / 45128329728 / 2, 187940372067 / 1594534317056 / 2,
          -1776094331 / 19743644256 / 2, 11237099 / 235043384 / 2]


def _norm(x):
    return jnp.linalg.norm(x)


def _abs2(x):
    return x.real ** 2 + x.imag ** 2 if jnp.iscomplexobj(x) else x ** 2


def _initial_step_size(fun, t0, y0, order, rtol, atol, f0):
    """Hairer, Norsett and Wanner's starting step: small enough for the first derivatives'
    change over it to stay within the tolerances."""
    scale = (atol + jnp.abs(y0) * rtol).astype(y0.dtype)
    d0, d1 = _norm(y0 / scale), _norm(f0 / scale)
    h0 = jnp.where((d0 < 1e-5) | (d1 < 1e-5), 1e-6, 0.01 * d0 / d1)
    f1 = fun(y0 + h0.astype(y0.dtype) * f0, t0 + h0)
    d2 = _norm((f1 - f0) / scale) / h0
    h1 = jnp.where((d1 <= 1e-15) & (d2 <= 1e-15), jnp.maximum(1e-6, h0 * 1e-3),
                   (0.01 / jnp.maximum(d1, d2)) ** (1. / (order + 1.)))
    return jnp.minimum(100. * h0, h1)


def _runge_kutta_step(fun, y0, f0, t0, dt):
    """One Dormand-Prince step: the new value, its derivative, the error estimate, the stages."""
    alpha, beta = jnp.asarray(_ALPHA, dt.dtype), jnp.asarray(_BETA, f0.dtype)
    dt_y = dt.astype(f0.dtype)

    def stage(i, k):
        y = y0 + dt_y * jnp.dot(beta[i - 1, :], k)
        return k.at[i, :].set(fun(y, t0 + dt * alpha[i - 1]))

    k = lax.fori_loop(1, 7, stage, jnp.zeros((7, f0.shape[0]), f0.dtype).at[0, :].set(f0))
    y1 = dt_y * jnp.dot(jnp.asarray(_C_SOL, f0.dtype), k) + y0
    return y1, k[-1], dt_y * jnp.dot(jnp.asarray(_C_ERR, f0.dtype), k), k


def _interpolation_coeffs(y0, y1, k, dt):
    """The quartic through y0, the midpoint and y1 with the step's end slopes, highest power
    first, in the step's relative time."""
    dt = dt.astype(y0.dtype)
    y_mid = y0 + dt * jnp.dot(jnp.asarray(_C_MID, y0.dtype), k)
    dy0, dy1 = dt * k[0], dt * k[-1]
    return jnp.stack([-2. * dy0 + 2. * dy1 - 8. * y0 - 8. * y1 + 16. * y_mid,
                      5. * dy0 - 3. * dy1 + 18. * y0 + 14. * y1 - 32. * y_mid,
                      -4. * dy0 + dy1 - 11. * y0 - 5. * y1 + 16. * y_mid,
                      dy0, y0])


def _horner(coeffs, x):
    return functools.reduce(lambda acc, c: acc * x + c, coeffs[1:], coeffs[0])


def _error_ratio(error, rtol, atol, y0, y1):
    tol = atol + rtol * jnp.maximum(jnp.abs(y0), jnp.abs(y1))
    return jnp.sqrt(jnp.mean(_abs2(error / tol.astype(error.dtype))))


def _next_step_size(dt, ratio, safety=0.9, ifactor=10.0, dfactor=0.2, order=5.0):
    """The step the error ratio suggests (never shrinking after an accepted step)."""
    dfactor = jnp.where(ratio < 1, 1.0, dfactor)
    factor = jnp.minimum(ifactor, jnp.maximum(ratio ** (-1.0 / order) * safety, dfactor))
    return jnp.where(ratio == 0, dt * ifactor, dt * factor)


def _attempt(fun, rtol, atol, hmax, state):
    """One step attempt of the while loop: taken when its error ratio is at most 1."""
    i, y, f, t, dt, last_t, coeffs = state
    next_y, next_f, error, k = _runge_kutta_step(fun, y, f, t, dt)
    ratio = _error_ratio(error, rtol, atol, y, next_y)
    new_dt = jnp.clip(_next_step_size(dt, ratio), min=0., max=hmax)
    taken = [next_y, next_f, t + dt, new_dt, t, _interpolation_coeffs(y, next_y, k, dt)]
    kept = [y, f, t, new_dt, last_t, coeffs]
    return [i + 1] + [jnp.where(ratio <= 1., a, b) for a, b in zip(taken, kept)]


def _advance(fun, rtol, atol, mxstep, hmax, carry, target_t):
    """Steps until past `target_t` (or mxstep attempts), then interpolates y(target_t)."""
    def unfinished(state):
        i, _, _, t, dt, _, _ = state
        return (t < target_t) & (i < mxstep) & (dt > 0)

    _, *carry = lax.while_loop(unfinished, functools.partial(_attempt, fun, rtol, atol, hmax),
                               [0] + carry)
    t, last_t, coeffs = carry[2], carry[4], carry[5]
    relative_t = (target_t - last_t) / (t - last_t)
    return carry, _horner(coeffs, relative_t.astype(coeffs.dtype))


@functools.partial(custom_vjp, nondiff_argnums=(0, 1, 2, 3, 4))
def _odeint(func, rtol, atol, mxstep, hmax, y0, ts, *args):
    with default_matmul_precision("highest"):
        def fun(y, t):
            return func(y, t, *args)
        f0 = fun(y0, ts[0])
        dt = jnp.clip(_initial_step_size(fun, ts[0], y0, 4, rtol, atol, f0), min=0., max=hmax)
        carry = [y0, f0, ts[0], dt, ts[0], jnp.stack([y0] * 5)]
        _, ys = lax.scan(functools.partial(_advance, fun, rtol, atol, mxstep, hmax),
                         carry, ts[1:])
        return jnp.concatenate((y0[None], ys))


def _odeint_fwd(func, rtol, atol, mxstep, hmax, y0, ts, *args):
    ys = _odeint(func, rtol, atol, mxstep, hmax, y0, ts, *args)
    return ys, (ys, ts, args)


def _odeint_bwd(func, rtol, atol, mxstep, hmax, residuals, g):
    """The adjoint method: the state, its cotangent and the times' and arguments' cotangents
    integrated backwards from each output time to the one before."""
    ys, ts, args = residuals

    def aug_dynamics(state, t, *args):
        y, y_bar = state[0], state[1]
        y_dot, pullback = vjp(func, y, -t, *args)
        return (-y_dot, *pullback(y_bar))

    def back_one_interval(carry, i):
        y_bar, t0_bar, args_bar = carry
        t_bar = jnp.dot(func(ys[i], ts[i], *args), g[i]).real
        _, y_bar, t0_bar, args_bar = odeint(
            aug_dynamics, (ys[i], y_bar, t0_bar - t_bar, args_bar),
            jnp.stack([-ts[i], -ts[i - 1]]), *args, rtol=rtol, atol=atol, mxstep=mxstep,
            hmax=hmax)
        y_bar, t0_bar, args_bar = tree_util.tree_map(lambda x: x[1], (y_bar, t0_bar, args_bar))
        return (y_bar + g[i - 1], t0_bar, args_bar), t_bar

    with default_matmul_precision("highest"):
        start = (g[-1], jnp.zeros((), ts.dtype), tree_util.tree_map(jnp.zeros_like, args))
        (y_bar, t0_bar, args_bar), rev_ts_bar = lax.scan(
            back_one_interval, start, jnp.arange(len(ts) - 1, 0, -1))
        return (y_bar, jnp.concatenate([t0_bar[None], rev_ts_bar[::-1]]), *args_bar)


_odeint.defvjp(_odeint_fwd, _odeint_bwd)


@functools.partial(jit, static_argnums=(0, 1, 2, 3, 4))
def _odeint_flat(func, rtol, atol, mxstep, hmax, y0, ts, *args):
    """odeint on the raveled state, under jit (the integrator is one staged computation)."""
    y0_flat, unravel = ravel_pytree(y0)

    def flat_func(y, t, *args):
        return ravel_pytree(func(unravel(y), t, *args))[0]
    return vmap(unravel)(_odeint(flat_func, rtol, atol, mxstep, hmax, y0_flat, ts, *args))


def _is_array_like(x):
    return isinstance(x, (BaseArray, np.ndarray, np.generic, bool, int, float, complex))


def odeint(func, y0, t, *args, rtol=1.4e-8, atol=1.4e-8, mxstep=np.inf, hmax=np.inf):
    """Integrate dy/dt = func(y, t, *args) from y0 at t[0], returning y at each time of `t`
    (strictly increasing floats) with a new leading axis; adaptive Dormand-Prince steps within
    rtol/atol, at most `mxstep` steps per output time and none longer than `hmax`.
    Differentiable in y0, t and args by the adjoint method."""
    for arg in tree_util.tree_leaves(args):
        if not _is_array_like(arg):
            raise TypeError(
                f"The contents of odeint *args must be arrays or scalars, but got {arg}.")
    if not jnp.issubdtype(t.dtype, jnp.floating):
        raise TypeError(f"t must be an array of floats, but got {t}.")
    converted, consts = closure_convert(func, y0, t[0], *args)
    return _odeint_flat(converted, rtol, atol, mxstep, hmax, y0, t, *args, *consts)


__all__ = ["odeint"]
