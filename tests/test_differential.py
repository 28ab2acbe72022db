"""Every primitive's spec samples on the xla backend against the numpy_ref oracle (refjax.testing's
checks, as `python -m refjax.conformance --backend xla` runs them)."""
import pytest
from hypothesis import given, strategies as st

from refjax.backends.base import get_backend
from refjax.core.primitive import all_primitives
from refjax.spec import spec_for
from refjax.spec.checks import budget
from refjax.testing import checks, derivative_checks
from refjax.testing.checks import applicable

# Built at collection, before any test starts JAX (it sets JAX's CPU device count). When the
# backend cannot be built this module errors: the comparison must not be silently skipped.
XLA = get_backend("xla")

NAMES = sorted(all_primitives())
each_primitive = pytest.mark.parametrize("name", NAMES)


def run(check, name, data):
    applicable(check, spec_for(name), data, "xla")


@each_primitive
@given(data=st.data())
@budget(0.4)
def test_xla_matches_numpy_ref(name, data):
    run(checks.check_eager, name, data)


@each_primitive
@given(data=st.data())
@budget(0.25)
def test_xla_derivatives_and_batching_match_numpy_ref(name, data):
    run(derivative_checks.check_batched_and_vjp_vs_oracle, name, data)
