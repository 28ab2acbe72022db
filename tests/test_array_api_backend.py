"""The third-party backend of contrib/refjax-array-api (the Python Array API standard, on
array-api-strict), built from ARCHITECTURE.md's recipe with refjax's public API, checked by the
conformance CLI with a quick profile: every primitive it implements passes; those the standard
cannot express are reported as not implemented, each with its reason."""
import json
import sys

import numpy as np
import pytest

import refjax
from refjax.backends import register_backend
from refjax.conformance import main

import contrib_backend

QUICK = ["--examples", "2", "--checks", "eager,jit,vmap,invalid", "--no-progress"]


@pytest.fixture(scope="module", autouse=True)
def contrib_on_path():
    path = contrib_backend.source_path()  # (None: installed, found by its entry point)
    sys.path[:0] = [path] if path else []
    yield
    if path:
        sys.path.remove(path)


def test_the_kit_passes_on_the_array_api_backend(tmp_path):
    path = tmp_path / "report.json"
    code = main(["--backend", contrib_backend.strict_backend(), "--report", str(path)] + QUICK)
    report = json.loads(path.read_text())
    failures = [(o["primitive"], o["check"], o["detail"][:200]) for o in report["outcomes"]
                if o["status"] == "fail"]
    assert code == 0 and not failures, failures
    statuses = {(o["primitive"], o["check"]): o for o in report["outcomes"]}
    for name in ("sin", "add", "dot_general", "reduce_sum", "while", "cond", "transpose"):
        assert statuses[name, "eager"]["status"] == "pass", statuses[name, "eager"]
    for o in report["outcomes"]:
        if o["status"] == "not implemented":  # a reason, not a crash
            assert "on the array_api backend: " in o["detail"] or \
                o["detail"].startswith("no "), o  # or: every example had a dtype it lacks
    assert statuses["erf", "eager"]["detail"].endswith("no special functions in the Array API "
                                                       "standard")


def test_a_program_runs_on_it_with_the_oracles_values():
    from refjax_array_api.backend import ArrayApiStrictBackend
    import array_api_strict
    register_backend("array_api", ArrayApiStrictBackend)

    def loss(w, x):
        return refjax.numpy.sum(refjax.numpy.tanh(x @ w) ** 2)
    w, x = np.array([0.5, -1.0], np.float32), np.array([[1.0, 2.0], [3.0, -1.0]], np.float32)
    with refjax.backend("array_api"):
        g = refjax.jit(refjax.grad(loss))(w, x)
        assert type(g._buf) is type(array_api_strict.asarray(0.0))  # an array-api-strict Array
    t = np.tanh(x @ w)
    np.testing.assert_allclose(np.asarray(g), x.T @ (2 * t * (1 - t ** 2)), rtol=1e-5)


def test_ci_reaches_it_by_its_entry_point(monkeypatch):
    """Installed (as .ci/run installs it), the backend is named by its entry point; on the
    source tree CI's REFJAX_REQUIRE_CONTRIB_ENTRY_POINT=1 refuses the import-path fallback."""
    monkeypatch.setenv("REFJAX_REQUIRE_CONTRIB_ENTRY_POINT", "1")
    if contrib_backend.installed():
        assert contrib_backend.strict_backend() == "array_api"
        assert type(refjax.get_backend("array_api")).__module__ == "refjax_array_api.backend"
        return
    with pytest.raises(RuntimeError, match="entry point 'array_api' is missing"):
        contrib_backend.strict_backend()
    monkeypatch.delenv("REFJAX_REQUIRE_CONTRIB_ENTRY_POINT")
    assert contrib_backend.strict_backend() == "refjax_array_api.backend:ArrayApiStrictBackend"


def _on_strict_and_jax(fn, *args):
    """fn(lax, *args) on the array-api-strict backend and on real JAX, as NumPy arrays."""
    import jax
    from refjax_array_api.backend import ArrayApiStrictBackend
    register_backend("array_api", ArrayApiStrictBackend)
    with refjax.backend("array_api"):
        ours = fn(refjax.lax, *args)
    theirs = fn(jax.lax, *args)
    flat = lambda out: [np.asarray(o) for o in (out if isinstance(out, (list, tuple)) else [out])]  # noqa: E731
    return flat(ours), flat(theirs)


def _assert_bitwise_equal(ours, theirs, nan_signs=True):
    """Equal values, dtypes, shapes and signs of zeros (and of NaNs unless the NaN is made by
    the operation, whose sign XLA leaves to the CPU)."""
    for a, r in zip(ours, theirs):
        assert a.dtype == r.dtype and a.shape == r.shape
        np.testing.assert_array_equal(a, r)
        if a.dtype.kind == "f":
            signed = slice(None) if nan_signs else ~np.isnan(r)
            np.testing.assert_array_equal(np.signbit(a)[signed], np.signbit(r)[signed])


ZEROS = np.array(list(np.ndindex(*(4,) * 4)), np.int64)  # every 4-tuple over {-0, +0, 1, -1}
ZEROS = np.array([-0.0, 0.0, 1.0, -1.0], np.float32)[ZEROS]


@pytest.mark.parametrize("fn", [
    lambda lax, x: lax.max(x, x[:, ::-1]), lambda lax, x: lax.min(x, x[:, ::-1]),
    lambda lax, x: lax.cummax(x, axis=1), lambda lax, x: lax.cummin(x, axis=1, reverse=True),
    lambda lax, x: lax.cummin(x, axis=1), lambda lax, x: lax.cummax(x, axis=1, reverse=True)])
def test_max_and_min_order_negative_zero_below_positive_zero_as_xla(fn):
    """The standard leaves max(-0.0, +0.0) unspecified (NumPy keeps the first); XLA gives +0.0."""
    _assert_bitwise_equal(*_on_strict_and_jax(fn, ZEROS))


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("name", ["shift_left", "shift_right_logical", "shift_right_arithmetic"])
def test_shifts_match_jax_on_every_pair_of_8_bit_operands(name, dtype):
    """Every operand against every amount, negative and >= 8 included (undefined in the
    standard, all bits shifted out in XLA)."""
    x, y = np.meshgrid(np.arange(256).astype(dtype), np.arange(256).astype(dtype))
    _assert_bitwise_equal(*_on_strict_and_jax(lambda lax, a, c: getattr(lax, name)(a, c), x, y))


NANS = np.array([[3.0, np.nan, -0.0, 0.0, -np.inf, 1.0, np.nan, 0.0]], np.float32)


@pytest.mark.parametrize("fn", [
    lambda lax, x: lax.sort(x, dimension=1),
    lambda lax, x: lax.sort((x[:, ::-1] > 0, x), dimension=1, num_keys=1),
    lambda lax, x: lax.sort((x, x[:, ::-1]), dimension=1, num_keys=2),
    lambda lax, x: lax.pad(x, np.float32(7), [(1, 0, 0), (-2, 3, 2)]),
    lambda lax, x: lax.dynamic_update_slice(x, -x[:, :3], (np.int32(0), np.int32(9))),
    lambda lax, x: lax.dynamic_slice(x, (np.int32(-1), np.int32(6)), (1, 4)),
    lambda lax, x: lax.cumlogsumexp(x, axis=1), lambda lax, x: lax.cbrt(x * 27)])
def test_sorting_padding_and_slicing_match_jax(fn):
    """NaNs sort last and tie, -0.0 ties with 0.0 (stable); negative padding crops; dynamic
    starts are clamped into the operand."""
    _assert_bitwise_equal(*_on_strict_and_jax(fn, NANS))


def test_complex_is_reported_not_expressible():
    """x + 1j * y would turn an infinite imaginary part into a NaN real part: a clear error,
    never that silent wrong answer."""
    from refjax_array_api.backend import ArrayApiStrictBackend
    register_backend("array_api", ArrayApiStrictBackend)
    with refjax.backend("array_api"), pytest.raises(NotImplementedError,
                                                    match="'complex'.*no complex number"):
        refjax.lax.complex(np.float32(1.0), np.float32(np.inf))


def _jnp_on_strict_and_jax(fn, *args):
    """fn(jnp, *args) on the array-api-strict backend and on real JAX, as NumPy arrays."""
    import jax.numpy as real_jnp
    from refjax_array_api.backend import ArrayApiStrictBackend
    register_backend("array_api", ArrayApiStrictBackend)
    with refjax.backend("array_api"):
        ours = np.asarray(fn(refjax.numpy, *map(refjax.numpy.asarray, args)))
    return [ours], [np.asarray(fn(real_jnp, *map(real_jnp.asarray, args)))]


TABLE = np.array([[1.5, -0.0, np.nan, 4.0], [5.0, 6.0, -7.0, 0.0], [9.0, 1e30, -1e30, 2.0]],
                 np.float32)
ROWS = np.array([2, 0, 2, -1, 2, 5], np.int32)  # repeats, a negative and an out-of-range one


@pytest.mark.parametrize("fn", [
    lambda jnp, t, i: t[i], lambda jnp, t, i: t[:, i % 4],
    lambda jnp, t, i: t.at[i].get(mode="fill", fill_value=-1.0),
    lambda jnp, t, i: t.at[i, 1:3].get(mode="clip"),
    lambda jnp, t, i: t.at[i].add(jnp.arange(24.0).reshape(6, 4) * 1e29),
    lambda jnp, t, i: t.at[i].set(jnp.arange(24.0).reshape(6, 4)),
    lambda jnp, t, i: t.at[i, 3].multiply(3.0), lambda jnp, t, i: t.at[i].max(-t[i]),
    lambda jnp, t, i: t.at[i % 3, i % 4].min(0.0), lambda jnp, t, i: t.at[i].subtract(t[i])])
def test_gathers_and_scatters_match_jax(fn):
    """Repeated targets are applied one after another in update order (the float sums show the
    order), out-of-range ones are dropped, filled or clamped as jnp's modes say."""
    _assert_bitwise_equal(*_jnp_on_strict_and_jax(fn, TABLE, ROWS))


@pytest.mark.parametrize("name", ["reduce_max", "reduce_min"])
@pytest.mark.parametrize("width", [2, 0])
def test_boolean_max_and_min_reductions_match_jax(name, width):
    """The standard's max/min refuse booleans; JAX's are any/all (False/True when empty)."""
    x = np.array([[True, False], [False, False]])[:, :width]
    _assert_bitwise_equal(*_on_strict_and_jax(lambda lax, a: getattr(lax, name)(a, (1,)), x))


SIGNED_NANS = np.array([[1.0, -np.nan, -0.0, np.nan, 0.0, -np.inf, 2.0, -0.0, np.nan]],
                       np.float32)


@pytest.mark.parametrize("fn", [lambda lax, x: lax.top_k(x, 9), lambda lax, x: lax.top_k(x, 4),
                                lambda lax, x: lax.top_k(x[:, ::-1] > 0, 3)])
def test_top_k_orders_as_ieee_total_order_as_jax(fn):
    """+NaN first and -NaN last, +0.0 before -0.0, ties in index order."""
    _assert_bitwise_equal(*_on_strict_and_jax(fn, SIGNED_NANS))


POOLED = np.array([[1.0, -0.0, np.nan, 4.0, -0.0], [-0.0, -0.0, 2.0, -5.0, 0.0],
                   [3.0, -0.0, -0.0, 1.0, -np.inf]], np.float32)


@pytest.mark.parametrize("op, init", [("add", 0.0), ("max", -np.inf), ("min", np.inf)])
@pytest.mark.parametrize("strides, padding, base, dilation", [
    ((1, 1), ((0, 0), (0, 0)), (1, 1), (1, 1)), ((2, 1), ((1, 2), (0, 1)), (1, 2), (1, 2)),
    ((1, 2), ((-1, 1), (2, 0)), (2, 1), (2, 1))])
def test_pooling_matches_jax(op, init, strides, padding, base, dilation):
    """Padding (negative too), base and window dilation; all -0.0 windows sum to +0.0 and the
    max of -0.0 and +0.0 is +0.0, as XLA; NaN propagates."""
    fn = lambda lax, x: lax.reduce_window(x, np.float32(init), getattr(lax, op), (2, 2),  # noqa: E731
                                          strides, padding, base, dilation)
    _assert_bitwise_equal(*_on_strict_and_jax(fn, POOLED), nan_signs=False)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
def test_mulhi_matches_jax_on_every_pair_of_8_bit_operands(dtype):
    x, y = np.meshgrid(np.arange(256).astype(dtype), np.arange(256).astype(dtype))
    _assert_bitwise_equal(*_on_strict_and_jax(lambda lax, a, c: lax.mulhi(a, c), x, y))
