"""The xla backend's caches: bounded, safe under threads, and tied to the lifetime of the
jaxprs they serve (a discarded jitted function takes its compiled programs with it)."""
import threading
import weakref

import numpy as np

from ...core.jaxpr import Literal
from ...core.lru import LRU
from ...core.sharding_names import is_fixed



class _Locked:
    """A map (`_entries`) behind one lock."""

    def __init__(self, entries):
        self._entries = entries
        self._lock = threading.Lock()

    def clear(self):
        with self._lock:
            self._entries.clear()

    def __len__(self):
        return len(self._entries)


class PerJaxpr(_Locked):
    """Values made from a ClosedJaxpr (and a hashable detail), kept exactly as long as that
    ClosedJaxpr lives: its owner (a jitted function's cache, a transformation) decides.
    A value must not refer to its ClosedJaxpr, or it would keep it alive."""

    def __init__(self):
        super().__init__(weakref.WeakKeyDictionary())

    def get_or_make(self, closed, detail, make):
        """The value for (closed, detail), made by make() on first use. make() runs outside
        the lock (it may take long, or use this cache for nested jaxprs); when two threads
        race, both make one and the first stored is kept."""
        with self._lock:
            value = self._entries.get(closed, {}).get(detail)
        if value is not None:
            return value
        value = make()
        with self._lock:
            return self._entries.setdefault(closed, {}).setdefault(detail, value)


class Shared:
    """Values shared by equal keys (one jax.jit per jaxpr structure): alive while anything
    else holds them (PerJaxpr entries, fast-path runners), and the `recent` most recently used
    besides, since transformations stage new but equal jaxprs on every call, which would
    otherwise be compiled again each time."""

    def __init__(self, recent):
        self._live = weakref.WeakValueDictionary()
        self._recent = LRU(recent)
        self._lock = threading.Lock()

    def get_or_make(self, key, make):
        """The value for key, made by make() (outside the lock) when none is alive."""
        with self._lock:
            value = self._live.get(key)
        if value is None:
            value = make()
            with self._lock:
                value = self._live.setdefault(key, value)
        self._recent.put(key, value)
        return value

    def clear(self):
        with self._lock:
            self._live.clear()
        self._recent.clear()

    def __len__(self):
        return len(self._live)


# ---------------------------------------------------------------- structural keys

def jaxpr_key(jaxpr):
    """A hashable fingerprint of a jaxpr: equal for jaxprs that lower to the same program.
    Constants of nested closed jaxprs are baked into that program, so they enter the key by
    identity (the program keeps its jaxpr, hence those objects, alive)."""
    ids = {}

    def var(v):
        if type(v) is Literal:
            return ("lit", np.asarray(v.val).tobytes(), v.aval.dtype)
        return ids.setdefault(v, len(ids))

    # sharding types (Explicit mesh axes) decide layouts, so they are part of the program
    binders = tuple((var(v), v.aval.shape, v.aval.dtype, v.aval.sharding)
                    for v in list(jaxpr.constvars) + list(jaxpr.invars))
    eqns = tuple((eqn.primitive, tuple(map(var, eqn.invars)),
                  tuple((var(v), v.aval.shape, v.aval.dtype, v.aval.sharding)
                        for v in eqn.outvars),
                  tuple((k, _param_key(p)) for k, p in eqn.params.items()))
                 for eqn in jaxpr.eqns)
    # A constant and an argument bind alike: the split keeps `c * 2` with c a constant
    # apart from the same jaxpr taking c as its argument.
    # outputs laid out by jit's out_shardings name their shardings otherwise
    return len(jaxpr.constvars), binders, eqns, tuple((var(v), is_fixed(v)) for v in jaxpr.outvars)


def _param_key(p):
    inner = getattr(p, "jaxpr", None)
    if inner is not None and hasattr(p, "consts"):  # a ClosedJaxpr
        return ("closed", jaxpr_key(inner), tuple(map(id, p.consts)))
    if hasattr(p, "eqns") and hasattr(p, "outvars"):  # a Jaxpr
        return ("jaxpr", jaxpr_key(p))
    if isinstance(p, (list, tuple)):
        return (type(p).__name__, tuple(map(_param_key, p)))
    if isinstance(p, dict):
        return ("dict", tuple((k, _param_key(v)) for k, v in p.items()))
    if isinstance(p, np.ndarray):
        return ("array", p.tobytes(), p.dtype, p.shape)
    try:
        hash(p)
    except TypeError:
        return ("id", id(p))
    return p
