"""dir(jax.numpy.linalg) and dir(jax.scipy.linalg) against refjax's: every public name of
JAX 0.10.2's is present (LACKING lists those still missing, with the reason; it is empty),
and refjax's namespaces export nothing JAX's do not. Also the linear-algebra names this work
adds to jnp and jax.random."""
import jax
import jax.numpy
import jax.scipy.linalg
import pytest

import refjax
import refjax.numpy
import refjax.scipy.linalg

LACKING = {
    "numpy.linalg": {},
    "scipy.linalg": {},
}


def _public(module):
    return {n for n in dir(module) if not n.startswith("_")}


@pytest.mark.parametrize("name,theirs,ours", [
    ("numpy.linalg", jax.numpy.linalg, refjax.numpy.linalg),
    ("scipy.linalg", jax.scipy.linalg, refjax.scipy.linalg),
])
def test_namespace_matches_jax(name, theirs, ours):
    missing = _public(theirs) - _public(ours)
    assert missing == set(LACKING[name]), missing
    assert _public(ours) - _public(theirs) == set()
    for n in _public(ours):
        assert callable(getattr(ours, n)), n
        assert getattr(ours, n).__doc__, f"{name}.{n} has no docstring"


def test_linalg_names_outside_the_linalg_namespaces():
    for module, theirs, names in ((refjax.numpy, jax.numpy, ("polyfit", "roots")),
                                  (refjax.random, jax.random,
                                   ("multivariate_normal", "orthogonal"))):
        for n in names:
            assert hasattr(theirs, n) and callable(getattr(module, n)), n


def test_submodules_import_as_in_jax():
    import refjax.numpy.linalg as a
    import refjax.scipy.linalg as b
    assert a is refjax.numpy.linalg and b is refjax.scipy.linalg
