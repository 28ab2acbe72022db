"""Bad input at the API boundary, side by side with real JAX 0.10.2 (issue 12, items 6 and 7):
each call raises the class JAX raises, or, where JAX leaks an internal error, gives a wrong
answer or none, the clearer class listed with its reason in error_cases.py; and the message
names the operation."""
import warnings

import pytest

from error_cases import CASES, namespaces

REAL, OURS = namespaces()


def _raised(fn, ns):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fn(ns)
        except Exception as e:  # noqa: BLE001 - the class is what the test compares
            return e
    return None


def _class_names(err):
    return [c.__name__ for c in type(err).__mro__]


@pytest.mark.parametrize("case", [c for c in CASES if c.better is None], ids=lambda c: c.name)
def test_same_class_as_jax_and_names_the_operation(case):
    theirs, ours = _raised(case.fn, REAL), _raised(case.fn, OURS)
    assert theirs is not None, f"real JAX accepts {case.name}: the case is wrong"
    assert ours is not None, f"refjax accepts {case.name}; JAX raises {theirs!r}"
    assert type(theirs).__name__ in _class_names(ours), (ours, theirs)
    assert case.op in str(ours), ours


@pytest.mark.parametrize("case", [c for c in CASES if c.better is not None],
                         ids=lambda c: c.name)
def test_clearer_than_jax_where_jax_leaks_or_is_silent(case):
    """JAX's own outcome is checked too, so the listed reason stays true."""
    theirs, ours = _raised(case.fn, REAL), _raised(case.fn, OURS)
    assert isinstance(ours, case.better), (ours, case.why)
    assert case.op in str(ours), ours
    if case.jax_says is None:
        assert theirs is None, f"JAX now raises {theirs!r}: update the case"
    else:
        assert case.jax_says in str(theirs), f"JAX now says {theirs!r}: update the case"


def test_listed_clearer_errors_say_why():
    assert all(c.why for c in CASES if c.better is not None)
