"""Generic property tests of every registered primitive, driven by its entry in refjax.spec: thin
users of refjax.testing's checks (the conformance CLI runs the same ones), on the default backend
(the oracle itself: its eager results against real jax.lax, its transformations against finite
differences, loops and the dot-product test)."""
import pytest
from hypothesis import given, strategies as st

from refjax.core.primitive import all_primitives
from refjax.spec import missing_specs, spec_for
from refjax.spec.base import no_args
from refjax.spec.checks import budget
from refjax.testing import JAX, checks, derivative_checks
from refjax.testing.checks import applicable

NAMES = sorted(all_primitives())
each_primitive = pytest.mark.parametrize("name", NAMES)


def test_every_registered_primitive_has_a_spec():
    assert not missing_specs(), f"primitives without a spec entry: {missing_specs()}"


@each_primitive
def test_spec_is_consistent_with_the_rules(name):
    spec, prim = spec_for(name), all_primitives()[name]
    transposable = spec.linear_args is not no_args or spec.reverse == "raises"
    assert transposable == (prim.transpose is not None), \
        f"{name}: spec linear_args / reverse and the presence of a transpose rule disagree"
    assert spec.reverse in ("ok", "raises") and spec.forward in ("ok", "raises")
    assert (spec.nondiff is None) == (spec.diff_args is not no_args), \
        f"{name}: the spec must declare either differentiable args or `nondiff`"
    assert spec.nondiff in (None, "zero", "raises")


# ---------------------------------------------------------------- running a check

def run(check, name, data, target="numpy_ref"):
    applicable(check, spec_for(name), data, target)


# ---------------------------------------------------------------- eager vs JAX, dtypes, errors

@each_primitive
@given(data=st.data())
@budget(0.5)
def test_eager_matches_jax(name, data):
    run(checks.check_eager, name, data, JAX)


@each_primitive
@given(data=st.data())
@budget(0.5)
def test_rejects_the_dtypes_jax_rejects(name, data):
    run(checks.check_rejected_dtypes, name, data)
    run(checks.check_rejected_dtypes, name, data, JAX)


@each_primitive
def test_invalid_inputs_raise_the_declared_error(name):
    run(checks.check_invalid, name, None)
    run(checks.check_invalid, name, None, JAX)


@each_primitive
@given(data=st.data())
def test_jit_matches_eager(name, data):
    run(checks.check_jit, name, data)


@each_primitive
@given(data=st.data())
def test_jvp_matches_finite_differences(name, data):
    run(derivative_checks.check_jvp, name, data)


@each_primitive
@given(data=st.data())
def test_transpose_is_adjoint_of_jvp(name, data):
    run(derivative_checks.check_transpose, name, data)


@each_primitive
@given(data=st.data())
def test_vjp_is_adjoint_of_jvp(name, data):
    run(derivative_checks.check_vjp, name, data)


@each_primitive
@given(data=st.data())
def test_vmap_matches_loop(name, data):
    run(derivative_checks.check_vmap, name, data)


@each_primitive
@given(data=st.data())
@budget(0.5)
def test_jit_commutes_with_grad_and_vmap(name, data):
    run(derivative_checks.check_grad, name, data)
