"""The conformance runner's checks: comparing outputs, x64 scopes, tangents and pairings."""
import contextlib

import numpy as np
from hypothesis import strategies as st

from .base import arrays, floats, kind, tolerance


def budget(share):
    """Hypothesis settings running `share` of the loaded profile's max_examples (at least 2):
    for tests whose every example compiles with XLA."""
    from hypothesis import settings
    return settings(max_examples=max(2, round(settings.default.max_examples * share)))


@contextlib.contextmanager
def enable_x64(enabled=True):
    """64-bit types in refjax (config.update, restored on exit) and in real JAX, for a block."""
    import jax
    import refjax
    previous = refjax.config.read("jax_enable_x64")
    refjax.config.update("jax_enable_x64", bool(enabled))
    try:
        with jax.enable_x64(bool(enabled)):
            yield
    finally:
        refjax.config.update("jax_enable_x64", previous)


def as_list(out):
    """Outputs of a primitive as a list (single results become a one-element list)."""
    return list(out) if isinstance(out, (list, tuple)) else [out]


def dtype_name(x):
    """The dtype name of an array (refjax, JAX or NumPy)."""
    return np.dtype(x.dtype).name


def is_float0(dtype):
    """Whether `dtype` is float0, the tangent dtype of integers (bfloat16 is also kind 'V')."""
    return np.dtype(dtype).names == ("float0",)


def _is_float0(x):
    return is_float0(x.dtype)


def assert_outputs_match(actual, expected, spec=None, *, exact=None, weak=True, what="result"):
    """Same number of outputs, and each with the same shape, dtype and weak type and values
    equal within the spec's tolerance (bit-exact for exact specs and integer dtypes)."""
    actual, expected = as_list(actual), as_list(expected)
    assert len(actual) == len(expected), \
        f"{what}: {len(actual)} outputs, expected {len(expected)}"
    for i, (a, e) in enumerate(zip(actual, expected)):
        where = f"{what} output {i}" if len(actual) > 1 else what
        assert_array_matches(a, e, spec, exact=exact, weak=weak, what=where)


def assert_array_matches(a, e, spec=None, *, exact=None, weak=True, what="result"):
    """One output: shape, dtype, weak type, values."""
    assert tuple(a.shape) == tuple(e.shape), f"{what}: shape {a.shape}, expected {e.shape}"
    assert dtype_name(a) == dtype_name(e), \
        f"{what}: dtype {dtype_name(a)}, expected {dtype_name(e)}"
    if weak and hasattr(a, "weak_type") and hasattr(e, "weak_type"):
        assert a.weak_type == e.weak_type, \
            f"{what}: weak_type={a.weak_type}, expected weak_type={e.weak_type} ({dtype_name(e)})"
    if _is_float0(a):
        return
    exact = spec.exact if exact is None and spec is not None else bool(exact)
    signed_zeros = spec.signed_zeros if spec is not None else True
    assert_values_match(np.asarray(a), np.asarray(e), dtype_name(e),
                        None if exact else (spec.tolerance(dtype_name(e)) if spec else None),
                        signed_zeros, what)


def assert_values_match(a, e, name, tol, signed_zeros=True, what="result"):
    """Values equal (NaN equals NaN); within tol=(rtol, atol) for inexact dtypes when given."""
    if kind(name) in "fc":
        a, e = a.astype(np.complex128 if kind(name) == "c" else np.float64), \
            e.astype(np.complex128 if kind(name) == "c" else np.float64)
    rtol, atol = tol if tol is not None else (0.0, 0.0)
    if kind(name) not in "fc" or (rtol == 0 and atol == 0):
        np.testing.assert_array_equal(a, e, err_msg=what, strict=True)
        if kind(name) == "f" and signed_zeros:
            same = np.isnan(e) | (np.signbit(a) == np.signbit(e))
            assert same.all(), f"{what}: signs of zeros differ\nactual {a}\nexpected {e}"
        return
    np.testing.assert_allclose(a, e, rtol=rtol, atol=atol, equal_nan=True, err_msg=what,
                               strict=True)


def assert_close(actual, expected, tol, what="result"):
    """Outputs equal within tol=(rtol, atol) (for derivative checks)."""
    actual, expected = as_list(actual), as_list(expected)
    assert len(actual) == len(expected), f"{what}: {len(actual)} outputs, expected {len(expected)}"
    for i, (a, e) in enumerate(zip(actual, expected)):
        a, e = np.asarray(a), np.asarray(e)
        assert a.shape == e.shape, f"{what} {i}: shape {a.shape}, expected {e.shape}"
        if is_float0(a.dtype) or is_float0(e.dtype):
            assert a.dtype == e.dtype, f"{what} {i}: dtype {a.dtype}, expected {e.dtype}"
            continue
        np.testing.assert_allclose(a.astype(np.complex128), e.astype(np.complex128),
                                   rtol=tol[0], atol=tol[1], equal_nan=True,
                                   err_msg=f"{what} {i}")


def layouts(outs):
    """Each output's sharding and, per shard, its device, index and replica id."""
    return [(o.sharding, [(s.device, s.index, s.replica_id) for s in o.addressable_shards])
            for o in as_list(outs)]


# ---------------------------------------------------------------- tangents and pairings

def tangents_like(name, shape):
    """A strategy of tangent (or cotangent) values for a value of dtype `name` and `shape`."""
    if kind(name) == "c":
        part = floats(-1.0, 1.0, "float64")
        return arrays(name, shape, st.builds(complex, part, part))
    return arrays(name, shape, floats(-1.0, 1.0, "float64"))


def pairing(a, b):
    """Re(sum(a * b)): the pairing under which JAX's transposes are adjoints (real and complex)."""
    a, b = np.asarray(a), np.asarray(b)
    if is_float0(a.dtype) or is_float0(b.dtype):
        return 0.0
    return float(np.real(np.sum(a.astype(np.complex128) * b.astype(np.complex128))))


def pairing_scale(a, b):
    """sum(|a| |b|): the size of a pairing's terms, to scale its tolerance."""
    a, b = np.asarray(a), np.asarray(b)
    if is_float0(a.dtype) or is_float0(b.dtype):
        return 0.0
    return float(np.sum(np.abs(a.astype(np.complex128)) * np.abs(b.astype(np.complex128))))


def is_inexact(x):
    return kind(dtype_name(x)) in "fc"


def float0_zeros(shape):
    """A refjax float0 zero array: the tangent of an integer or boolean value."""
    from refjax.core.primitives.elementwise import float0_zeros as make
    return make(tuple(shape))


def tolerance_for(name, spec):
    return spec.tolerance(name) if spec is not None else tolerance(name)
