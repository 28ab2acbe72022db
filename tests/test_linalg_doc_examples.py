"""The examples in JAX 0.10.2's own docstrings of jnp.linalg, jax.scipy.linalg, jnp.polyfit
and jnp.roots, run by doctest with `jax` being refjax: each prints what JAX's documentation
shows (doctest's exact text, whitespace normalised). The few examples that cannot pass are
listed with the reason; the test fails if one of them starts passing, or another fails."""
import doctest
import io

import jax
import jax.numpy
import jax.scipy.linalg
import numpy as np
import pytest

import refjax
import refjax.numpy

pytestmark = pytest.mark.backends("numpy_ref", "xla")


def _needs(attr_owner, attr, reason):
    """An expected failure for examples that use a name refjax lacks (owned elsewhere)."""
    return reason if not hasattr(attr_owner, attr) else None


_PRINTOPTIONS = _needs(refjax.numpy, "printoptions",
                       "jnp.printoptions is not in refjax yet (the jnp namespace's work)")
_COST = ("numpy_ref has no cost model: Lowered.cost_analysis() is None (the xla backend's is "
         "XLA's, as JAX's)")

# (namespace, function) -> {example source prefix: reason}
KNOWN_FAILURES = {
    ("jsl", "sqrtm"): {"with jnp.printoptions(precision=2, suppress=True):\n  print(sqrt_a)":
                       "fails in real JAX too (the signs of zero imaginary parts differ from "
                       "the documented output)"},
    ("jsl", "dft"): {"jax.scipy.linalg.dft(4).round(3)": "jnp.round of a complex value drops "
                                                         "the sign of a zero real part (the "
                                                         "jnp namespace's round)"},
    ("jnp.linalg", "multi_dot"): {"jax.jit(": _COST},
}


def _cases():
    spaces = (("jnp.linalg", jax.numpy.linalg, [n for n in dir(jax.numpy.linalg) if n[0] != "_"]),
              ("jsl", jax.scipy.linalg, [n for n in dir(jax.scipy.linalg) if n[0] != "_"]),
              ("jnp", jax.numpy, ["polyfit", "roots"]))
    return [(space, name, getattr(mod, name).__doc__) for space, mod, names in spaces
            for name in names if ">>>" in (getattr(mod, name).__doc__ or "")]


def _failures(doc, name):
    """The sources of the examples that fail when `jax` is refjax."""
    globs = {"jax": refjax, "jnp": refjax.numpy, "np": np}
    test = doctest.DocTestParser().get_doctest(doc, globs, name, None, 0)
    failed = []

    class Runner(doctest.DocTestRunner):
        def report_failure(self, out, test, example, got):
            failed.append(example.source.strip())

        def report_unexpected_exception(self, out, test, example, exc_info):
            failed.append(example.source.strip())

    flags = doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS
    Runner(optionflags=flags).run(test, out=io.StringIO().write)
    return failed


def _known(space, name):
    """The listed failures of a function's examples on the current backend."""
    known = KNOWN_FAILURES.get((space, name), {})
    if refjax.current_backend_name() == "numpy_ref":
        return dict(known)
    return {prefix: why for prefix, why in known.items() if why is not _COST}


def _expected(space, name, failed):
    known = _known(space, name)
    if _PRINTOPTIONS:
        known.update({f: _PRINTOPTIONS for f in failed if "printoptions(" in f})
    return [f for f in failed if not any(f.startswith(prefix) for prefix in known)], known


@pytest.mark.parametrize("space,name,doc", _cases(), ids=lambda v: v if isinstance(v, str)
                         and len(v) < 40 else "")
def test_jax_docstring_examples_run_unchanged(space, name, doc):
    failed = _failures(doc, name)
    unexpected, known = _expected(space, name, failed)
    assert unexpected == [], unexpected
    listed = _known(space, name)
    assert all(any(f.startswith(p) for f in failed) for p in listed), \
        f"a listed failure now passes: update KNOWN_FAILURES {listed}"
