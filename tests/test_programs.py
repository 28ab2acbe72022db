"""Random programs: eager vs jit vs JAX vs xla, grad vs finite differences, vmap vs loops."""
import numpy as np
from hypothesis import given, strategies as st

import refjax
from refjax.spec.base import refjax_array
from refjax.spec.checks import as_list, assert_outputs_match, budget, enable_x64, is_inexact
from refjax.spec.programs import (note_program, program_fn, program_inputs, program_reference,
                                  programs, smooth_elements)

DTYPES = ("float32", "int32", "uint8", "bool", "float16")


def _draw(data, dtype=None, smooth=False, elements=None):
    dtype = dtype or data.draw(st.sampled_from(DTYPES), label="dtype")
    program = data.draw(programs(dtype, smooth=smooth), label="program")
    note_program(program)
    inputs = data.draw(program_inputs(program, elements), label="inputs")
    return program, inputs


def _assert_near(actual, expected, what):
    """Equal dtypes and shapes; values within a tolerance scaled by the outputs' magnitude
    (programs chain several roundings)."""
    actual, expected = as_list(actual), as_list(expected)
    assert len(actual) == len(expected), what
    for a, e in zip(actual, expected):
        assert (a.shape, np.dtype(a.dtype)) == (e.shape, np.dtype(e.dtype)), what
        a, e = np.asarray(a), np.asarray(e)
        if not is_inexact(a):
            np.testing.assert_array_equal(a, e, err_msg=what)
            continue
        a, e = a.astype(np.float64), e.astype(np.float64)
        finite = np.abs(e[np.isfinite(e)])
        scale = max(1.0, float(finite.max())) if finite.size else 1.0
        np.testing.assert_allclose(a, e, rtol=1e-4, atol=1e-5 * scale, equal_nan=True,
                                   err_msg=what)


@given(data=st.data())
@budget(3)
def test_jit_matches_eager(data):
    program, inputs = _draw(data)
    f, args = program_fn(program), [refjax_array(x) for x in inputs]
    assert_outputs_match(refjax.jit(f)(*args), f(*args), exact=True, what="jit(program)")


@given(data=st.data())
@budget(2)
def test_eager_matches_jax(data):
    dtype = data.draw(st.sampled_from(("float32", "int32", "bool")), label="dtype")
    program, inputs = _draw(data, dtype, elements=smooth_elements(dtype)
                            if dtype == "float32" else None)
    _assert_near(program_fn(program)(*[refjax_array(x) for x in inputs]),
                 program_reference(program, inputs), "program vs JAX")


@given(data=st.data())
@budget(2)
def test_xla_backend_matches_numpy_ref(data):
    program, inputs = _draw(data, elements=None)
    f = program_fn(program)
    expected = f(*[refjax_array(x) for x in inputs])
    with refjax.backend("xla"):
        args = [refjax_array(x) for x in inputs]
        eager, jitted = f(*args), refjax.jit(f)(*args)
    for actual, what in ((eager, "xla eager"), (jitted, "xla jit")):
        _assert_near(actual, expected, what)


@given(data=st.data())
@budget(3)
def test_grad_matches_finite_differences(data):
    with enable_x64(True):
        program, inputs = _draw(data, "float64", smooth=True, elements=smooth_elements())
        f = program_fn(program)
        outs = f(*[refjax_array(x) for x in inputs])
        weights = [data.draw(program_inputs_like(o), label="weight") for o in outs]

        def loss(*xs):
            total = 0.0
            for o, w in zip(f(*xs), weights):
                total = total + refjax.lax.reduce_sum(refjax.lax.mul(o, w),
                                                      tuple(range(len(o.shape))))
            return total

        args = [refjax_array(x) for x in inputs]
        grads = refjax.grad(loss, tuple(range(len(args))))(*args)
        v = [data.draw(program_inputs_like(x), label="direction") for x in args]
        eps = 1e-6
        plus = float(loss(*[refjax_array(x + eps * d) for x, d in zip(inputs, v)]))
        minus = float(loss(*[refjax_array(x - eps * d) for x, d in zip(inputs, v)]))
        fd = (plus - minus) / (2 * eps)
        directional = sum(float(np.sum(np.asarray(g) * d)) for g, d in zip(grads, v))
        scale = 1.0 + abs(fd) + sum(float(np.sum(np.abs(np.asarray(g) * d)))
                                    for g, d in zip(grads, v))
        assert abs(directional - fd) <= 1e-5 * scale, f"<grad, v> = {directional}, FD = {fd}"


def program_inputs_like(x):
    """Values of x's shape in [-1, 1] (weights and directions)."""
    from refjax.spec.base import arrays, floats
    return arrays("float64", tuple(x.shape), floats(-1.0, 1.0, "float64"))


@given(data=st.data())
@budget(3)
def test_vmap_matches_loop(data):
    program, inputs = _draw(data)
    f = program_fn(program)
    size = data.draw(st.integers(1, 3), label="batch size")
    members = [inputs] + [data.draw(program_inputs(program), label="member")
                          for _ in range(size - 1)]
    in_axes = tuple(data.draw(st.sampled_from((None, 0, -1)), label=f"in_axes[{i}]")
                    for i in range(len(inputs)))
    if all(a is None for a in in_axes):
        in_axes = (0,) + in_axes[1:]
    batched = [refjax_array(np.stack([m[i] for m in members], axis=a if a is not None else 0)
                            if a is not None else inputs[i]) for i, a in enumerate(in_axes)]
    expected = [f(*[refjax_array(m[i] if a is not None else inputs[i])
                    for i, a in enumerate(in_axes)]) for m in members]
    stacked = [refjax_array(np.stack([np.asarray(e[k]) for e in expected]))
               for k in range(len(expected[0]))]
    _assert_near(refjax.vmap(f, in_axes=in_axes)(*batched), stacked, "vmap(program)")
