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


_TRACED_SHAPES = {
    "lax.reshape": lambda j, n: j.lax.reshape(j.jnp.ones(3), (n,)),
    "jnp.reshape": lambda j, n: j.jnp.ones(3).reshape(n),
    "jnp.broadcast_to": lambda j, n: j.jnp.broadcast_to(j.jnp.ones(3), (n, 3)),
    "jnp.ones": lambda j, n: j.jnp.ones((n,)),
    "jnp.full": lambda j, n: j.jnp.full((n,), 1.0),
    "jnp.zeros_like": lambda j, n: j.jnp.zeros_like(j.jnp.ones(3), shape=(n,)),
    "lax.iota": lambda j, n: j.lax.iota("int32", n),
    "lax.full": lambda j, n: j.lax.full((n,), 1.0),
    "random.normal": lambda j, n: j.jax.random.normal(j.jax.random.key(0), (n,)),
}


def test_a_traced_shape_raises_plain_type_error_as_jax():
    """JAX raises TypeError itself (not a ConcretizationTypeError, which the notebooks would
    print under another name) when a shape holds a traced value, with its wording."""
    for name, fn in _TRACED_SHAPES.items():
        errs = [_raised(lambda ns: ns.jax.jit(lambda n: fn(ns, n))(3), ns) for ns in (REAL, OURS)]
        assert [type(e).__name__ for e in errs] == ["TypeError"] * 2, (name, errs)
        assert "Shapes must be 1D sequences of concrete values of" in str(errs[1]), name
