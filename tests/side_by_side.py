"""Scenarios run on real JAX and on refjax side by side: each scenario is a function of the
library (jax, jnp) returning thunks; their outcomes (value or error class and first line)
are compared. JAX's outcomes are recorded (tests/jax_recordings.py): the default run reads
them, keyed by the scenario's name and fingerprinted by its code and closure."""
import re
import warnings

import jax as real_jax
import jax.numpy as real_jnp
import numpy as np

import refjax
from jax_recordings import fingerprint, of_function, recorded


def outcome(fn):
    """('ok', repr of the result) or (exception class name, message)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return "ok", _plain(fn())
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return type(e).__name__, _sets_sorted(str(e).split("\n")[0])


def _sets_sorted(text):
    """Frozensets' elements in sorted order: their printed order follows the process' string
    hashing, which differs between the run that recorded JAX's message and the one reading it."""
    def sort(match):
        return "frozenset({" + ", ".join(sorted(match[1].split(", "))) + "})"
    return re.sub(r"frozenset\(\{([^{}]*)\}\)", sort, text)


def _plain(r):
    """Results comparable across libraries: arrays as NumPy values, devices by id, shardings
    by their text."""
    if isinstance(r, (real_jax.Array, refjax.Array)):
        return np.asarray(r).tolist()
    if isinstance(r, (list, tuple)):
        return [_plain(v) for v in r]
    if hasattr(r, "id") and hasattr(r, "platform"):
        return ("device", r.id)
    return str(r) if not isinstance(r, (bool, int, float, type(None))) else r


def same(ours, theirs, ulps=4):
    """Whether two outcomes agree: equal structure and text, floats within `ulps` float32 ulps
    (XLA's transcendental functions differ from NumPy's in the last bits)."""
    if isinstance(ours, float) and isinstance(theirs, float):
        return abs(ours - theirs) <= ulps * np.spacing(np.float32(max(abs(ours), abs(theirs))))
    if isinstance(ours, (list, tuple)) and isinstance(theirs, (list, tuple)):
        return type(ours) is type(theirs) and len(ours) == len(theirs) and all(
            same(a, b, ulps) for a, b in zip(ours, theirs))
    return ours == theirs


def both(scenario):
    """scenario(jax, jnp) run on real JAX and on refjax: the two outcome lists."""
    return jax_outcomes(scenario), [outcome(f) for f in scenario(refjax, refjax.numpy)]


def jax_outcomes(scenario, shown=None):
    """The outcomes of scenario(real JAX), each result passed through `shown` first
    (recorded: tests/jax_recordings.py, fingerprinted by both functions' code)."""
    def run():
        return [outcome(lambda f=f: shown(f()) if shown else f())
                for f in scenario(real_jax, real_jnp)]
    return recorded(scenario.__qualname__, run,
                    fingerprint(*of_function(scenario), *(of_function(shown) if shown else ())))
