"""refjax.test_util: check_grads, check_jvp and check_vjp, which compare automatic derivatives
with central finite differences along one random direction, with JAX's tolerances, step
size and random directions (so a check passes or fails as it does with JAX)."""
import functools

import numpy as np

from ..core import dtypes as _dt
from ..core import pytree
from ..core.transforms.autodiff import linearize, vjp
from ..core.transforms.jvp import jvp

__all__ = ["check_grads", "check_jvp", "check_vjp"]

EPS = 1e-4

# Per-dtype tolerances of gradient checks (atol and rtol alike), as JAX's.
default_gradient_tolerance = {
    np.dtype(_dt.bfloat16): 1e-1, np.dtype(np.float16): 1e-2, np.dtype(np.float32): 2e-3,
    np.dtype(np.float64): 1e-5, np.dtype(np.complex64): 1e-3, np.dtype(np.complex128): 1e-5}

# Tolerances of dtypes the table above does not name (exact for integers, as JAX's).
_EXACT_TOLERANCE = {np.dtype(np.float32): 1e-6, np.dtype(np.float64): 1e-15,
                    np.dtype(np.complex64): 1e-6, np.dtype(np.complex128): 1e-15,
                    np.dtype(np.float16): 1e-3, np.dtype(_dt.bfloat16): 1e-2}


def _dtype(x):
    if hasattr(x, "dtype"):
        return np.dtype(x.dtype)
    if _dt.is_python_scalar(x):
        return np.dtype(_dt.python_scalar_dtype(x))
    return np.asarray(x).dtype


def _is_py_scalar(x):
    return _dt.is_python_scalar(x)


def _tolerance(dtype, tol):
    if not isinstance(tol, dict):
        return tol
    dtype = _dt.canonicalize_dtype(dtype)
    return tol.get(dtype, _EXACT_TOLERANCE.get(dtype, 0))


def _merge_tolerance(tol, default):
    if tol is None:
        return default
    if not isinstance(tol, dict):
        return tol
    return {**default, **{np.dtype(k): v for k, v in tol.items()}}


def _assert_close(a, b, atol, rtol, err_msg):
    """np.testing.assert_allclose with tolerances scaled by the number of elements (as JAX
    does, since sums of many terms accumulate error)."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape, f"{err_msg}: shapes {a.shape} and {b.shape} differ"
    if a.dtype == b.dtype == _dt.float0:
        return np.testing.assert_array_equal(a, b, err_msg=err_msg)
    atol = max(_tolerance(a.dtype, atol), _tolerance(b.dtype, atol)) * a.size
    rtol = max(_tolerance(a.dtype, rtol), _tolerance(b.dtype, rtol)) * b.size
    a, b = (x.astype(np.float32) if x.dtype == _dt.bfloat16 else x for x in (a, b))
    with np.errstate(invalid="ignore"):
        np.testing.assert_allclose(a, b, atol=atol or 0, rtol=rtol or 1e-7, err_msg=err_msg)


def _check_close(xs, ys, atol, rtol, err_msg):
    pytree.tree_map(lambda x, y: _assert_close(x, y, atol, rtol, err_msg), xs, ys)


def _check_dtypes_match(xs, ys):
    def match(x, y):
        assert _dt.canonicalize_dtype(_dtype(x)) == _dt.canonicalize_dtype(_dtype(y)), \
            f"dtypes {_dtype(x)} and {_dtype(y)} differ"
    pytree.tree_map(match, xs, ys)


def _keep_type(op):
    """op on NumPy values in the first argument's dtype (Python scalars stay scalars)."""
    def apply(*args):
        out = np.array(op(*args), dtype=_dtype(args[0]))
        return out.item() if all(_is_py_scalar(a) for a in args) else out
    return functools.partial(pytree.tree_map, apply)


_add, _sub, _conj = _keep_type(np.add), _keep_type(np.subtract), _keep_type(np.conj)


def _safe_sub(xs, ys):
    """x - y with inf - inf = 0 (a function constant at infinity has a zero difference)."""
    def sub(x, y):
        with np.errstate(invalid="ignore"):
            return np.where(np.equal(x, y), np.array(0, _dtype(x)),
                            np.subtract(x, y, dtype=_dtype(x)))
    return pytree.tree_map(sub, xs, ys)


def _scale(xs, a):
    def mul(x):
        out = np.multiply(x, np.array(a, dtype=_dtype(x)), dtype=_dtype(x))
        return out.item() if _is_py_scalar(x) else out
    return pytree.tree_map(mul, xs)


def _rand_like(rng, x):
    shape, dtype = np.shape(x), _dtype(x)
    value = np.asarray(rng.randn(*shape), dtype=dtype)
    if np.issubdtype(dtype, np.complexfloating):
        value = value + dtype.type(1j) * np.asarray(rng.randn(*shape), dtype=dtype)
    return value.item() if _is_py_scalar(x) else value


def _inner_prod(xs, ys):
    def contract(x, y):
        return np.real(np.dot(np.conj(np.asarray(x)).reshape(-1), np.asarray(y).reshape(-1)))
    return sum(pytree.tree_leaves(pytree.tree_map(contract, xs, ys)))


def numerical_jvp(f, primals, tangents, eps=EPS):
    """(f(primals + eps t) - f(primals - eps t)) / (2 eps)."""
    delta = _scale(tangents, eps)
    return _scale(_safe_sub(f(*_add(primals, delta)), f(*_sub(primals, delta))), 0.5 / eps)


def check_jvp(f, f_jvp, args, atol=None, rtol=None, eps=EPS, err_msg=""):
    """Check f_jvp (typically `partial(jax.jvp, f)`) against finite differences of f along
    one random direction; AssertionError if they differ beyond the tolerances."""
    atol = _merge_tolerance(atol, default_gradient_tolerance)
    rtol = _merge_tolerance(rtol, default_gradient_tolerance)
    tangent = pytree.tree_map(functools.partial(_rand_like, np.random.RandomState(0)), args)
    v_out, t_out = f_jvp(args, tangent)
    _check_dtypes_match(v_out, t_out)
    v_expected = f(*args)
    _check_dtypes_match(v_out, v_expected)
    _check_close(v_out, v_expected, atol, rtol, f"{err_msg} primal" if err_msg else "primal")
    _check_close(t_out, numerical_jvp(f, args, tangent, eps), atol, rtol,
                 f"{err_msg} tangent" if err_msg else "tangent")


def check_vjp(f, f_vjp, args, atol=None, rtol=None, eps=EPS, err_msg=""):
    """Check f_vjp (typically `partial(jax.vjp, f)`) by the dot-product test against finite
    differences of f along random directions; AssertionError if they differ."""
    atol = _merge_tolerance(atol, default_gradient_tolerance)
    rtol = _merge_tolerance(rtol, default_gradient_tolerance)
    rand = functools.partial(_rand_like, np.random.RandomState(0))
    v_out, pullback = f_vjp(*args)
    _check_close(v_out, f(*args), atol, rtol, f"{err_msg} primal" if err_msg else "primal")
    tangent = pytree.tree_map(rand, args)
    tangent_out = numerical_jvp(f, args, tangent, eps)
    cotangent = pytree.tree_map(rand, v_out)
    cotangent_out = _conj(pullback(_conj(cotangent)))
    _check_close(_inner_prod(tangent, cotangent_out), _inner_prod(tangent_out, cotangent),
                 atol, rtol, f"{err_msg} cotangent projection" if err_msg
                 else "cotangent projection")


def check_grads(f, args, order, modes=("fwd", "rev"), atol=None, rtol=None, eps=None):
    """Check the derivatives of f at args up to `order`, in forward ("fwd"), reverse ("rev")
    and/or linearize ("lin") mode, against finite differences (AssertionError if not)."""
    args, eps = tuple(args), eps or EPS
    fwd = functools.partial(check_jvp, atol=atol, rtol=rtol, eps=eps)
    rev = functools.partial(check_vjp, atol=atol, rtol=rtol, eps=eps)

    def check(f, args, order, msg=""):
        if "fwd" in modes:
            fwd_msg = f"JVP of {msg}" if msg else "JVP"
            fwd(f, functools.partial(jvp, f), args, err_msg=fwd_msg)
            if order > 1:
                check(functools.partial(jvp, f), (args, args), order - 1, fwd_msg)
        if "rev" in modes:
            rev_msg = f"VJP of {msg}" if msg else "VJP"
            rev(f, functools.partial(vjp, f), args, err_msg=rev_msg)
            if order > 1:
                check(functools.partial(_vjp_of_output, f), args, order - 1, rev_msg)
        if "lin" in modes:
            lin_msg = f"LIN of {msg}" if msg else "LIN"
            fwd(f, functools.partial(_jvp_from_linearize, f), args, err_msg=lin_msg)
            if order > 1:
                check(functools.partial(_jvp_from_linearize, f), (args, args), order - 1,
                      lin_msg)

    check(f, args, order)


def _vjp_of_output(f, *args):
    out, pullback = vjp(f, *args)
    return pullback(out)


def _jvp_from_linearize(f, primals, tangents):
    out, f_lin = linearize(f, *primals)
    return out, f_lin(*tangents)
