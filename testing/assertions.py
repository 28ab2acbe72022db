"""assert_conforms: results compared with the oracle's (dtype, weak type, layout, values in ulps)."""
import ml_dtypes
import numpy as np

from ..spec.base import kind, tolerance
from ..spec.checks import dtype_name, is_float0

# Unsigned integer views of each float width, to count ulps between two floats.
_BITS = {2: np.uint16, 4: np.uint32, 8: np.uint64}


class ConformanceError(AssertionError):
    """A result that does not conform to the oracle's: says which output, which element, which
    dtype and by how many ulps."""


def ulp_distance(actual, expected, dtype):
    """The number of representable values of `dtype` between each pair of elements (0 for equal
    values and for -0.0 vs 0.0; complex: the larger of the real and imaginary distances).

    >>> int(ulp_distance(np.float32(1.0), np.nextafter(np.float32(1.0), np.float32(2)), "float32"))
    1
    """
    dt = np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    a, e = np.asarray(actual), np.asarray(expected)
    if dt.kind == "c":
        part = np.dtype(f"float{dt.itemsize * 4}").name
        return np.maximum(ulp_distance(a.real, e.real, part), ulp_distance(a.imag, e.imag, part))
    ka, ke = _ordered(a.astype(dt), dt), _ordered(e.astype(dt), dt)
    # |ka - ke| < 2**64: exact as a difference modulo 2**64 of the larger minus the smaller.
    big, small = np.maximum(ka, ke).astype(np.uint64), np.minimum(ka, ke).astype(np.uint64)
    return (big - small).astype(np.float64)


def _ordered(x, dt):
    """Floats as int64 keys in the same order (sign-magnitude to two's complement)."""
    bits = np.array(x, copy=True).view(_BITS[dt.itemsize]).astype(np.uint64)
    sign = np.uint64(1 << (dt.itemsize * 8 - 1))
    magnitude = (bits & (sign - np.uint64(1))).astype(np.int64)
    return np.where(bits >= sign, -magnitude, magnitude)


def assert_conforms(actual, expected, *, rtol=None, atol=None, max_ulps=None, exact=False,
                    weak_type=True, signed_zeros=True, layouts=False, spec=None, what="result"):
    """Assert that `actual` (a pytree of refjax/JAX/NumPy arrays) conforms to `expected` (the
    oracle's result, e.g. from `reference` or `reference_fn`).

    Each leaf must have the same shape, dtype and (where both carry one) weak type; a refjax
    Array's buffer must hold its own dtype (a backend returning float64 for a float32 result
    fails). Values: integers and booleans exactly; floats within the per-dtype tolerance of the
    spec (`spec`'s, or refjax.spec's defaults; `rtol`/`atol` override it), or within `max_ulps`
    units in the last place when given; `exact=True` asks for equal bits but NaNs. Any NaN
    matches any NaN (XLA does not preserve NaN payloads, so neither does the oracle); infinities
    match only themselves; exact comparisons distinguish -0.0 from 0.0 (unless
    `signed_zeros=False`). `layouts=True` also compares shardings shard by shard.

    >>> import refjax.numpy as jnp
    >>> assert_conforms(jnp.sin(jnp.float32(1)), np.float32(np.sin(1.0)), max_ulps=1)
    """
    from ..core import pytree
    a_leaves, a_tree = pytree.tree_flatten(actual)
    e_leaves, e_tree = pytree.tree_flatten(expected)
    if len(a_leaves) != len(e_leaves):
        raise ConformanceError(f"{what}: {len(a_leaves)} outputs ({a_tree}), expected "
                               f"{len(e_leaves)} ({e_tree})")
    options = dict(rtol=rtol, atol=atol, max_ulps=max_ulps, exact=exact, weak_type=weak_type,
                   signed_zeros=signed_zeros, spec=spec)
    for i, (a, e) in enumerate(zip(a_leaves, e_leaves)):
        where = f"{what} output {i}" if len(a_leaves) > 1 else what
        _assert_leaf(a, e, where, **options)
        if layouts:
            _assert_layout(a, e, where)


def _assert_leaf(a, e, what, *, weak_type, exact, spec, **tol):
    a_shape, e_shape = tuple(np.shape(a)), tuple(np.shape(e))
    _require(a_shape == e_shape, f"{what}: shape {a_shape}, expected {e_shape}")
    name = dtype_name(e) if hasattr(e, "dtype") else np.asarray(e).dtype.name
    _require(dtype_name(a) == name if hasattr(a, "dtype") else True,
             f"{what}: dtype {dtype_name(a)}, expected {name}")
    _assert_weak_type(a, e, what, weak_type)
    _assert_buffer_dtype(a, what)
    if is_float0(np.dtype(name)):
        return
    exact = exact or (spec is not None and spec.exact)
    signed = tol.pop("signed_zeros") and (spec is None or spec.signed_zeros)
    assert_values_conform(np.asarray(a), np.asarray(e), name, exact=exact, signed_zeros=signed,
                          what=what, **_tolerance(name, spec, **tol))


def _require(ok, message):
    if not ok:
        raise ConformanceError(message)


def _assert_weak_type(a, e, what, check):
    if check and hasattr(a, "weak_type") and hasattr(e, "weak_type"):
        _require(a.weak_type == e.weak_type, f"{what}: weak_type={a.weak_type}, expected "
                 f"weak_type={e.weak_type} ({dtype_name(e)})")


def _assert_buffer_dtype(a, what):
    """A refjax Array's backend must store its values in the Array's dtype."""
    value = a._value() if hasattr(a, "_value") and hasattr(a, "_backend") else None
    if value is not None and not is_float0(a.dtype):
        held = np.asarray(value).dtype
        _require(held == np.dtype(a.dtype), f"{what}: the {a._backend.name} backend holds the "
                 f"{dtype_name(a)} result in a {held.name} buffer")


def _tolerance(name, spec, rtol, atol, max_ulps):
    default = spec.tolerance(name) if spec is not None else tolerance(name)
    return dict(rtol=default[0] if rtol is None else rtol,
                atol=default[1] if atol is None else atol, max_ulps=max_ulps)


def assert_values_conform(a, e, name, *, rtol=0.0, atol=0.0, max_ulps=None, exact=False,
                          signed_zeros=True, what="result"):
    """NumPy values `a` against the expected `e` of dtype `name` (see assert_conforms)."""
    _require(a.shape == e.shape, f"{what}: shape {a.shape}, expected {e.shape}")
    if kind(name) not in "fc":
        _report(a, e, name, a != e, what, "differ")
        return
    wide = np.complex128 if kind(name) == "c" else np.float64
    with np.errstate(all="ignore"):
        bad = _mismatches(a, e, name, a.astype(wide), e.astype(wide), rtol, atol, max_ulps,
                          exact, signed_zeros)
    limit = f"{max_ulps:g} ulps" if max_ulps is not None else f"rtol={rtol:g}, atol={atol:g}"
    _report(a, e, name, bad, what, "exact" if exact else limit)


def _mismatches(a, e, name, a64, e64, rtol, atol, max_ulps, exact, signed_zeros):
    """Where `a` fails to match `e` (NaN matches NaN, whatever its payload)."""
    nan_a, nan_e = np.isnan(a64), np.isnan(e64)
    bad = nan_a != nan_e
    if exact or (max_ulps is None and rtol == 0 and atol == 0):
        bad |= ~nan_e & (a64 != e64)
        if signed_zeros and kind(name) == "f":
            bad |= ~nan_e & (np.signbit(a64) != np.signbit(e64))
    elif max_ulps is not None:
        bad |= ~nan_e & (ulp_distance(a, e, name) > max_ulps)
    else:
        finite = np.isfinite(e64)
        bad |= ~nan_e & ~finite & (a64 != e64)
        bad |= finite & ~(np.abs(a64 - e64) <= atol + rtol * np.abs(e64))
    return bad


def _report(a, e, name, bad, what, limit):
    """ConformanceError naming the worst element of the mismatches in `bad`."""
    if not np.any(bad):
        return
    idx = np.argwhere(np.atleast_1d(bad))
    ulps = ulp_distance(a, e, name) if kind(name) in "fc" else np.abs(
        a.astype(np.float64) - e.astype(np.float64))
    ulps = np.atleast_1d(ulps)
    worst = tuple(int(i) for i in max(idx, key=lambda i: np.nan_to_num(ulps[tuple(i)], nan=np.inf)))
    at = worst if a.ndim else ()
    unit = "ulps" if kind(name) in "fc" else "apart"
    raise ConformanceError(
        f"{what}: {len(idx)} of {max(a.size, 1)} {name} elements differ (allowed: {limit}); "
        f"worst at index {at}: actual {np.atleast_1d(a)[worst].item()!r}, expected "
        f"{np.atleast_1d(e)[worst].item()!r} ({ulps[worst]:g} {unit})")


def _assert_layout(a, e, what):
    """Same sharding and, shard by shard, the same device, index and replica id (for an
    array with no elements, the same devices: XLA replicates such an array, so JAX lays it
    out one way under jit and another eagerly, and no element can be misplaced)."""
    got, want = _layout(a), _layout(e)
    if 0 in tuple(getattr(a, "shape", ())) and got is not None and want is not None:
        got, want = sorted({d for d, *_ in got}), sorted({d for d, *_ in want})
    _require(got == want, f"{what}: layout {got}, expected {want}")


def _layout(x):
    shards = getattr(x, "addressable_shards", None)
    if shards is None:
        return None
    # A backend's shards may be plain (device, index, data) tuples (the recipe's toy backend).
    return [(device.id, _index(index), getattr(s, "replica_id", 0))
            for s, (device, index) in zip(shards, map(_device_index, shards))]


def _device_index(shard):
    return (shard.device, shard.index) if hasattr(shard, "device") else tuple(shard[:2])


def _index(index):
    return tuple((s.start, s.stop, s.step) for s in index)
