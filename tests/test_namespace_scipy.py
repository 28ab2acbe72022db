"""The namespaces the scipy engineer owns, against JAX 0.10.2's: jax.scipy and its submodules,
each jax.scipy.stats distribution, jax.random, jax.nn and jax.nn.initializers. Every public
name JAX has is in refjax or listed below with the reason it is not."""
import operator
import types

import pytest

import jax
import jax.nn.initializers  # noqa: F401
import jax.scipy.cluster  # noqa: F401
import jax.scipy.cluster.vq  # noqa: F401
import jax.scipy.fft  # noqa: F401
import jax.scipy.integrate  # noqa: F401
import jax.scipy.interpolate  # noqa: F401
import jax.scipy.linalg  # noqa: F401
import jax.scipy.ndimage  # noqa: F401
import jax.scipy.optimize  # noqa: F401
import jax.scipy.signal  # noqa: F401
import jax.scipy.sparse  # noqa: F401
import jax.scipy.sparse.linalg  # noqa: F401
import jax.scipy.special  # noqa: F401
import jax.scipy.stats  # noqa: F401

import refjax


LACKING = {
    "random": {
        "random_gamma_p": "JAX's internal gamma primitive: refjax's gamma is lax code, not a "
                          "primitive of its own",
    },
}

NAMESPACES = ["scipy", "scipy.special", "scipy.stats", "scipy.signal", "scipy.integrate",
              "scipy.ndimage", "scipy.fft", "scipy.cluster", "scipy.cluster.vq",
              "scipy.optimize", "scipy.interpolate", "scipy.sparse", "scipy.sparse.linalg",
              "random", "nn", "nn.initializers"]
DISTRIBUTIONS = sorted(n for n in dir(jax.scipy.stats)
                       if isinstance(getattr(jax.scipy.stats, n), types.ModuleType))


def _public(module):
    return {n for n in dir(module) if not n.startswith("_")}


def _lacking(path, jax_module, refjax_module):
    return sorted(n for n in _public(jax_module) - _public(refjax_module)
                  if n not in LACKING.get(path, {}))


@pytest.mark.parametrize("path", NAMESPACES)
def test_namespace(path):
    jax_module = operator.attrgetter(path)(jax)
    refjax_module = operator.attrgetter(path)(refjax)
    assert _lacking(path, jax_module, refjax_module) == []


@pytest.mark.parametrize("path", [p for p in NAMESPACES if p != "random"])
def test_no_names_jax_lacks(path):
    """No helper imports leak into the public namespaces (jax.random's older extras are kept:
    tests/test_random_namespace.py records them)."""
    jax_module = operator.attrgetter(path)(jax)
    refjax_module = operator.attrgetter(path)(refjax)
    assert sorted(_public(refjax_module) - _public(jax_module)) == []


@pytest.mark.parametrize("name", [d for d in DISTRIBUTIONS if d not in LACKING.get("scipy.stats", {})])
def test_distribution_functions(name):
    jax_module = getattr(jax.scipy.stats, name)
    refjax_module = getattr(refjax.scipy.stats, name)
    jax_functions = {n for n in _public(jax_module) if callable(getattr(jax_module, n))
                     and not isinstance(getattr(jax_module, n), type)}
    path = f"scipy.stats.{name}"
    missing = sorted(jax_functions - _public(refjax_module) - set(LACKING.get(path, {})))
    assert missing == []


def test_lacking_entries_are_still_lacking():
    """An entry here for a name refjax now has is stale: remove it."""
    stale = []
    for path, names in LACKING.items():
        refjax_module = operator.attrgetter(path)(refjax) if path != "scipy" else refjax.scipy
        stale += [f"{path}.{n}" for n in names if hasattr(refjax_module, n)]
    assert stale == []


def test_submodules_import_as_in_jax():
    import refjax.nn.initializers as init
    import refjax.scipy.signal as signal
    import refjax.scipy.special as special
    import refjax.scipy.ndimage as ndimage
    import refjax.scipy.stats as stats
    import refjax.scipy.sparse.linalg as sparse_linalg
    assert sparse_linalg is refjax.scipy.sparse.linalg
    assert init is refjax.nn.initializers and special is refjax.scipy.special
    assert stats is refjax.scipy.stats and signal is refjax.scipy.signal
    assert ndimage is refjax.scipy.ndimage
