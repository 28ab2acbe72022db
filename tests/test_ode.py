"""refjax.experimental.ode.odeint against real JAX's (values, adjoint gradients, errors), scipy's
solve_ivp and finite differences, under jit."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.integrate
from jax.experimental.ode import odeint as jax_odeint

import refjax
import refjax.numpy as rnp
from jax_compare import assert_same_error
from jnp_compare import x64
from refjax.experimental.ode import odeint


def _dynamics(np_):
    """A damped, forced pendulum-like system on a pytree state, with a parameter pytree."""
    def f(y, t, params):
        damping, freq = params["damping"], params["freq"]
        return {"x": y["v"], "v": -freq ** 2 * np_.sin(y["x"]) - damping * y["v"] + np_.cos(t)}
    return f


_Y0 = {"x": np.array([0.5, -1.0], np.float32), "v": np.array([0.0, 0.3], np.float32)}
_PARAMS = {"damping": np.float32(0.2), "freq": np.array([1.5, 0.7], np.float32)}
_TS = np.linspace(0.0, 2.0, 5, dtype=np.float32)


def _scipy_solution(y0, ts, params):
    def rhs(t, flat):
        y = {"x": flat[:2], "v": flat[2:]}
        dy = _dynamics(np)(y, t, params)
        return np.concatenate([dy["x"], dy["v"]])
    flat0 = np.concatenate([y0["x"], y0["v"]]).astype(np.float64)
    sol = scipy.integrate.solve_ivp(rhs, (ts[0], ts[-1]), flat0, t_eval=ts, rtol=1e-11,
                                    atol=1e-11, method="DOP853")
    return {"x": sol.y[:2].T, "v": sol.y[2:].T}


def _assert_trees_close(actual, expected, **tol):
    jax.tree.map(lambda a, e: np.testing.assert_allclose(np.asarray(a), np.asarray(e), **tol),
                 actual, expected)


def _solve_with_limits(odeint_, np_):
    """Solutions without limits and with a maximum step."""
    return lambda y0, ts, p: [odeint_(_dynamics(np_), y0, ts, p, **o) for o in ({}, {"hmax": .05})]


def test_odeint_values_match_jax_and_scipy_under_jit():
    ours = refjax.jit(_solve_with_limits(odeint, rnp))(_Y0, _TS, _PARAMS)
    theirs = jax.jit(_solve_with_limits(jax_odeint, jnp))(_Y0, _TS, _PARAMS)
    assert jax.tree.map(lambda a: (a.shape, str(a.dtype)), ours[0]) == {
        "x": ((5, 2), "float32"), "v": ((5, 2), "float32")}
    # float32 rounding differs between NumPy and XLA; the solver amplifies it a little.
    _assert_trees_close(ours, theirs, rtol=2e-5, atol=2e-6)
    exact = _scipy_solution(_Y0, _TS, _PARAMS)
    for solution in ours:
        _assert_trees_close(solution, exact, rtol=1e-5, atol=1e-5)


def _loss(odeint_, np_, **options):
    """A scalar of the solution, depending on y0, ts, the parameters and a closed-over scale."""
    def loss(y0, ts, params, scale):
        def f(y, t, params):
            return jax.tree.map(lambda d: scale * d, _dynamics(np_)(y, t, params))
        ys = odeint_(f, y0, ts, params, **options)
        return np_.sum(ys["x"] ** 2) + np_.sum(np_.sin(ys["v"]) * ts[:, None])
    return loss


def _as64(tree):
    return jax.tree.map(lambda a: np.asarray(a, np.float64), tree)


# The default run takes the first case (finite differences: refjax alone); the thorough profile
# also compares with real JAX, whose compiling the adjoint system takes seconds.
@pytest.mark.parametrize("reference", ["finite_differences", "jax"])
def test_odeint_adjoint_grads(reference):
    """Gradients (and, against JAX, the values when three steps per output time are all
    mxstep allows: float64, as float32 NumPy and XLA can accept different steps there)."""
    args = _as64((_Y0, _TS, _PARAMS, np.float64(0.9)))
    with x64():
        ours = refjax.jit(_grads_and_truncated(odeint, rnp, refjax))(*args)
        if reference == "jax":
            theirs = jax.jit(_grads_and_truncated(jax_odeint, jnp, jax))(*args)
            _assert_trees_close(ours, theirs, rtol=1e-9, atol=1e-11)
            exact = _scipy_solution(*args[:3])
            assert np.max(np.abs(np.asarray(ours[2]["x"]) - exact["x"])) > 1e-3
        else:
            _check_directional_derivative(_loss(odeint, rnp, rtol=1e-11, atol=1e-11), args,
                                          ours[1])


def _grads_and_truncated(odeint_, np_, lib):
    def run(y0, ts, params, scale):
        value, grads = lib.value_and_grad(_loss(odeint_, np_), argnums=(0, 1, 2, 3))(
            y0, ts, params, scale)
        return value, grads, odeint_(_dynamics(np_), y0, ts, params, mxstep=3)
    return run


def _check_directional_derivative(loss, args, grads, eps=1e-4):
    """The central difference of `loss` along one direction through every argument equals
    the gradient's projection on it (loss solved tightly, so its noise stays below eps**2)."""
    direction = jax.tree.map(
        lambda a: np.cos(np.arange(np.size(a)) + np.ndim(a)).reshape(np.shape(a)), args)
    along = lambda t: float(loss(*jax.tree.map(lambda a, d: a + t * d, args, direction)))
    fd = (along(eps) - along(-eps)) / (2 * eps)
    slope = sum(np.vdot(g, d) for g, d in zip(jax.tree.leaves(grads), jax.tree.leaves(direction)))
    np.testing.assert_allclose(slope, fd, rtol=1e-6)


@pytest.mark.parametrize("case", ["int_times", "string_arg"])
def test_odeint_rejects_what_jax_rejects(case):
    def call(lib):
        np_ = rnp if lib is refjax else jnp
        odeint_ = odeint if lib is refjax else jax_odeint
        if case == "int_times":
            return odeint_(lambda y, t: -y, np_.ones(2), np_.arange(3))
        return odeint_(lambda y, t, s: -y, np_.ones(2), np_.linspace(0., 1., 3), "fast")
    assert_same_error(call, refjax, jax, TypeError)
