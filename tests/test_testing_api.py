"""refjax.testing's public API against independent truths: ulps counted with np.nextafter,
shapes broadcast by NumPy, the oracle's values against real JAX and NumPy, assert_conforms'
verdicts and messages on hand-made cases."""
import jax
import ml_dtypes
import numpy as np
import pytest
from hypothesis import find, given, settings, strategies as st

import refjax
import refjax.numpy as jnp
import refjax.testing as rt
from refjax.spec import spec_for
from refjax.spec.base import refjax_array


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_ulp_distance_counts_the_representable_values_between(dtype):
    for start in (1.0, -3.5, 0.0, -0.0, 1e-3):
        x, steps = dtype(start), []
        for _ in range(5):
            steps.append(x)
            x = np.nextafter(x, dtype(np.inf))
        got = [int(rt.ulp_distance(s, steps[0], np.dtype(dtype).name)) for s in steps]
        assert got == [0, 1, 2, 3, 4]
    assert rt.ulp_distance(np.float32(-0.0), np.float32(0.0), "float32") == 0
    tiny = np.float32(np.finfo(np.float32).smallest_subnormal)
    assert rt.ulp_distance(tiny, -tiny, "float32") == 2  # across zero


def test_bfloat16_ulps_step_by_its_mantissa():
    one = ml_dtypes.bfloat16(1.0)
    assert rt.ulp_distance(ml_dtypes.bfloat16(1.0078125), one, "bfloat16") == 1  # 2**-7


def test_assert_conforms_names_the_element_dtype_and_ulps():
    expected = np.array([1.0, 2.0, 3.0], np.float32)
    actual = expected.copy()
    actual[2] = np.nextafter(actual[2], np.float32(10))
    actual[2] = np.nextafter(actual[2], np.float32(10))
    rt.assert_conforms(actual, expected)  # 2 ulps: within float32's tolerance
    with pytest.raises(rt.ConformanceError, match=r"1 of 3 float32 elements differ \(allowed: 1 "
                       r"ulps\); worst at index \(2,\): actual 3.000000476837158, expected 3.0 "
                       r"\(2 ulps\)"):
        rt.assert_conforms(actual, expected, max_ulps=1)
    with pytest.raises(rt.ConformanceError, match=r"dtype float64, expected float32"):
        rt.assert_conforms(expected.astype(np.float64), expected)
    with pytest.raises(rt.ConformanceError, match=r"shape \(3,\), expected \(1, 3\)"):
        rt.assert_conforms(expected, expected[None])


def test_nans_match_whatever_their_payload_and_zeros_their_sign():
    quiet = np.array([np.nan], np.float32)
    payload = np.array([0x7FC00123], np.uint32).view(np.float32)
    rt.assert_conforms(payload, quiet, exact=True)
    with pytest.raises(rt.ConformanceError, match="differ"):
        rt.assert_conforms(np.array([1.0], np.float32), quiet)
    with pytest.raises(rt.ConformanceError, match="differ"):
        rt.assert_conforms(np.array([-0.0], np.float32), np.array([0.0], np.float32), exact=True)
    rt.assert_conforms(np.array([-0.0], np.float32), np.array([0.0], np.float32), exact=True,
                       signed_zeros=False)
    with pytest.raises(rt.ConformanceError, match="differ"):
        rt.assert_conforms(np.array([np.inf], np.float32), np.array([-np.inf], np.float32))


def test_weak_types_are_compared_with_real_jax_arrays():
    weak = jax.numpy.asarray(1.0) + 1  # a weak float32 in JAX
    strong = jax.numpy.float32(2.0)
    assert weak.weak_type and not strong.weak_type
    rt.assert_conforms(refjax.lax.add(refjax_array(np.float32(1), True), 1.0), weak)
    with pytest.raises(rt.ConformanceError, match="weak_type=False, expected weak_type=True"):
        rt.assert_conforms(refjax_array(np.float32(2)), weak)
    rt.assert_conforms(refjax_array(np.float32(2)), weak, weak_type=False)


def test_layouts_are_compared_shard_by_shard():
    mesh = refjax.make_mesh((2,), ("x",))
    P, NS = refjax.sharding.PartitionSpec, refjax.sharding.NamedSharding
    x = np.arange(4.0, dtype=np.float32)
    split, whole = refjax.device_put(x, NS(mesh, P("x"))), refjax.device_put(x, NS(mesh, P()))
    rt.assert_conforms(split, whole)
    with pytest.raises(rt.ConformanceError, match="layout"):
        rt.assert_conforms(split, whole, layouts=True)


def test_reference_equals_numpy_and_jax():
    x = np.linspace(-2, 2, 7, dtype=np.float32)
    np.testing.assert_array_equal(rt.reference("add", x, x), x + x)
    assert rt.reference("cumsum", np.arange(5), axis=0, reverse=True).tolist() == [10, 10, 9, 7, 4]
    np.testing.assert_allclose(rt.reference("sin", x), np.asarray(jax.lax.sin(x)), rtol=1e-6)
    out = rt.reference("sort", x[::-1], dimension=0, is_stable=True, num_keys=1)
    np.testing.assert_array_equal(out[0] if isinstance(out, list) else out, np.sort(x))
    assert rt.reference("add", 1.0, 2.0).dtype == np.float32  # Python scalars: weak float32


def test_reference_fn_runs_a_whole_program_on_the_oracle():
    def program(w, x):
        return refjax.grad(lambda w: jnp.sum(jnp.tanh(x @ w) ** 2))(w)
    w, x = np.array([0.5, -1.0], np.float32), np.array([[1.0, 2.0], [3.0, -1.0]], np.float32)
    t = np.tanh(x @ w)
    with refjax.backend("xla"):
        got = refjax.jit(program)(w, x)
    expected = rt.reference_fn(program)(w, x)
    assert expected._backend is refjax.get_backend("numpy_ref")
    np.testing.assert_allclose(np.asarray(expected), x.T @ (2 * t * (1 - t ** 2)), rtol=1e-5)
    rt.assert_conforms(got, expected)


@settings(max_examples=30, deadline=None)
@given(rt.broadcastable_shapes())
def test_broadcastable_shapes_broadcast(pair):
    np.broadcast_shapes(*pair)


def test_arrays_reach_every_edge_value():
    def has(pred):
        return lambda a: bool(np.any(pred(a.astype(np.float64))))
    strategy = rt.arrays("float32", (4,))
    for pred in (np.isnan, np.isposinf, np.isneginf, lambda a: (a == 0) & np.signbit(a),
                 lambda a: (a != 0) & (np.abs(a) < np.finfo(np.float32).tiny)):
        find(strategy, has(pred), settings=settings(max_examples=2000, database=None))
    ints = rt.arrays("int8", (3,))
    find(ints, lambda a: -128 in a and 127 in a, settings=settings(max_examples=5000,
                                                                      database=None))


def test_dtypes_follow_x64():
    assert "float64" not in rt.DTYPES_32 and "bfloat16" in rt.DTYPES_32
    names = {find(rt.dtypes(x64=True, kinds="f"), lambda n, k=k: n == k) for k in
             ("float16", "bfloat16", "float32", "float64")}
    assert names == {"float16", "bfloat16", "float32", "float64"}
    with pytest.raises(Exception):
        find(rt.dtypes(kinds="f"), lambda n: n == "float64")


@pytest.mark.parametrize("name", ["add", "reduce_max", "dot_general", "cumsum", "gather"])
@settings(max_examples=5, deadline=None)
@given(data=st.data())
def test_samples_are_valid_and_the_oracle_agrees_with_jax_on_them(name, data):
    sample = data.draw(rt.samples(name))
    spec = spec_for(name)
    expected = spec.reference(jax, *sample.to_jax(), **sample.params)
    got = rt.reference(name, *sample.values, weak_types=[a.weak for a in sample.sig.args],
                       **sample.params)
    rt.assert_conforms(got, expected, spec=spec, weak_type=False)


@pytest.mark.parametrize("name", ["add", "reshape", "dot_general", "concatenate"])
def test_invalid_samples_raise_their_error(name):
    cases = spec_for(name).invalid_cases()
    assert cases
    for case in cases:
        assert find(rt.invalid_samples(name), lambda c: c.what == case.what) == case
        with pytest.raises(case.error, match=name):
            rt.reference(name, *case.args, **case.params)
