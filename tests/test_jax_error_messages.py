"""JAX's own regex checks of its error messages (tests/jax_error_table.py: the call, the class
and the regex copied from JAX's tests), asserted on real JAX 0.10.2 (so each entry stays an
independent truth) and on refjax, on both backends: refjax raises JAX's class with a message
JAX's regex matches, or, where the table records a departure, its clearer message."""
import builtins
import re
import warnings

import pytest

from error_cases import namespaces
from jax_error_table import CHECKS

REAL, OURS = namespaces()


def _raised(check, ns):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            check.fn(ns)
        except Exception as e:  # noqa: BLE001 - the exception is what the test compares
            return e
    raise AssertionError(f"{check.where}: no error raised")


def _assert_raises(check, ns, regex):
    err = _raised(check, ns)
    cls = getattr(builtins, check.cls, None) or getattr(ns.jax.errors, check.cls)
    assert isinstance(err, cls), (check.where, err)
    assert re.search(regex, str(err), check.flags), (check.where, regex, str(err))


@pytest.mark.backends()
@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.id)
def test_jax_raises_what_its_test_expects(check):
    _assert_raises(check, REAL, check.regex)


@pytest.mark.backends("numpy_ref", "xla")
@pytest.mark.parametrize("check", CHECKS, ids=lambda c: c.id)
def test_refjax_raises_with_jax_wording(check):
    _assert_raises(check, OURS, check.ours or check.regex)


def test_departures_say_why_and_differ_from_jax():
    departures = [c for c in CHECKS if c.ours is not None]
    assert all(c.why and c.ours != c.regex for c in departures)
