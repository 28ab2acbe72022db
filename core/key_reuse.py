"""jax_debug_key_reuse: the key-reuse check of typed PRNG keys, static over jaxprs and eager on Arrays.

Each primitive's `key_reuse` rule gives its Signature: the operands it consumes (`Sink`), the
outputs that are fresh keys (`Source`) and the outputs that pass an operand on (`Forward`).
refjax's typed keys are uint32 key data (api/random wraps it), so a jaxpr's types do not say
which values are keys: api/random binds `random_wrap` where a typed key is made (its output is a
key) and `random_unwrap` where one is read (its operand is a key), and the walk below follows
keys from there through the primitives that pass them on. An Array of key data remembers how
much of it was consumed (`consumed`), so eager reuse and a jitted call's reuse of an argument
raise as in JAX.
"""
import weakref
from typing import Any, NamedTuple

import numpy as np

from . import source_info
from .config import config
from .errors import KeyReuseError
from .jaxpr import Literal


class Sink(NamedTuple):
    """Operand `idx` is consumed where `mask` is True (a bool, or a bool array of its shape)."""
    idx: int
    mask: Any = True


class Source(NamedTuple):
    """Output `idx` is a fresh key where `mask` is True."""
    idx: int
    mask: Any = True


class Forward(NamedTuple):
    """Output `out_idx` is operand `in_idx` passed on (consumed where the operand is)."""
    in_idx: int
    out_idx: int


class Signature:
    """What a primitive (or a jaxpr) does with keys. `keys_out`: the outputs that are keys (None:
    every output, when an operand is one); `name`: the operation errors name (default: the
    primitive's)."""

    def __init__(self, *items, keys_out=None, name=None):
        self.sinks = [_whole(i) for i in items if isinstance(i, Sink)]
        self.sources = [_whole(i) for i in items if isinstance(i, Source)]
        self.forwards = [i for i in items if isinstance(i, Forward)]
        self.keys_out, self.name = keys_out, name

    def __repr__(self):
        """As JAX prints it: its items sorted, sinks, then sources, then forwards."""
        items = sorted((*self.sinks, *self.sources), key=lambda i: (type(i).__name__, i.idx))
        return f"KeyReuseSignature{tuple(_Shown(i) for i in (*items, *self.forwards))}"


def _whole(item):
    """The item with a mask that is all True or all False as a Python bool, as JAX keeps it."""
    mask = item.mask
    if np.ndim(mask) and (np.all(mask) or not np.any(mask)):
        mask = bool(np.all(mask) and np.size(mask))
    return item._replace(mask=bool(mask) if np.ndim(mask) == 0 else mask)


class _Shown(NamedTuple):
    item: Any

    def __repr__(self):
        args = list(self.item) if isinstance(self.item, Forward) or self.item.mask is not True \
            else [self.item.idx]
        return f"{type(self.item).__name__}({', '.join(map(str, args))})"


def enabled():
    """Whether jax_debug_key_reuse is on."""
    return bool(config.read("jax_debug_key_reuse"))


def _any(mask):
    return bool(np.any(mask))


# ---------------------------------------------------------------- signatures of primitives

FORWARD = Signature(Forward(0, 0))
NO_KEYS = Signature(keys_out=())


def forward_rule(avals, keys, **params):
    """The key_reuse rule of primitives passing their first operand on (reshape, copy, ...)."""
    return FORWARD


def no_keys_rule(avals, keys, **params):
    """The key_reuse rule of primitives reading keys without consuming them (eq, ne)."""
    return NO_KEYS


def slice_rule(avals, keys, *, start_indices, limit_indices, strides, **params):
    """slice: consumes the sliced part of a key operand, and the slice is a fresh key."""
    if not keys[0]:
        return Signature()
    mask = np.zeros(avals[0].shape, bool)
    mask[tuple(map(slice, start_indices, limit_indices, strides or [1] * len(start_indices)))] = True
    return Signature(Sink(0, mask), Source(0))


def concatenate_rule(avals, keys, **params):
    """concatenate: of one operand, that operand passed on; else its keys consumed and the
    result a fresh key."""
    if len(keys) == 1:
        return FORWARD
    return Signature(*(Sink(i) for i, k in enumerate(keys) if k), *((Source(0),) * any(keys)))


def update_rule(update_idx):
    """The rule of an update (dynamic_update_slice, scatter): the operand passed on, the
    update (operand `update_idx`) consumed."""
    def rule(avals, keys, **params):
        return Signature(Forward(0, 0), *((Sink(update_idx),) * keys[update_idx]))
    return rule


def _default(keys):
    """No rule: every key operand is consumed, every output a consumed key (JAX's default)."""
    return Signature(*(Sink(i) for i, k in enumerate(keys) if k))


def signature_of(prim, avals, keys, params):
    """The Signature of one application of `prim` (keys: which operands are keys)."""
    if prim.key_reuse is None:
        return _default(keys)
    return prim.key_reuse(avals, keys, **params)


# ---------------------------------------------------------------- the walk over a jaxpr

class _Walk:
    """Consumption of each key value of one jaxpr, equation by equation."""

    def __init__(self, jaxpr, keys_in):
        self.consumed, self.forwards = {}, {}
        for var, is_key in zip([*jaxpr.invars, *jaxpr.constvars], keys_in):
            if is_key:
                self.consumed[var] = False

    def resolve(self, var):
        while var in self.forwards:
            var = self.forwards[var]
        return var

    def is_key(self, atom):
        return not isinstance(atom, Literal) and self.resolve(atom) in self.consumed

    def sink(self, atom, mask, name, idx):
        if isinstance(atom, Literal):
            return
        var = self.resolve(atom)
        before = self.consumed.get(var, False)
        if _any(np.logical_and(before, mask)):
            raise KeyReuseError(f"In {name}, argument {idx} is already consumed.")
        self.consumed[var] = np.logical_or(before, mask)

    def apply(self, eqn):
        keys = [self.is_key(v) for v in eqn.invars]
        sig = signature_of(eqn.primitive, [v.aval for v in eqn.invars], keys, eqn.params)
        for fwd in sig.forwards:
            if keys[fwd.in_idx]:
                self.forwards[eqn.outvars[fwd.out_idx]] = eqn.invars[fwd.in_idx]
        for snk in sig.sinks:
            if snk.idx < len(eqn.invars):  # not a const closed into a call's jaxpr
                self.sink(eqn.invars[snk.idx], snk.mask, sig.name or eqn.primitive.name,
                          snk.idx)
        keys_out = range(len(eqn.outvars)) if sig.keys_out is None and any(keys) else \
            sig.keys_out or ()
        for i in keys_out:
            if eqn.outvars[i] not in self.forwards:
                self.consumed[eqn.outvars[i]] = True
        for src in sig.sources:
            self.consumed[eqn.outvars[src.idx]] = np.logical_not(src.mask)

    def signature(self, jaxpr):
        inputs = [*jaxpr.invars, *jaxpr.constvars]
        where = {v: i for i, v in enumerate(inputs)}
        items = [Sink(i, self.consumed[v]) for i, v in enumerate(inputs)
                 if v in self.consumed and _any(self.consumed[v])]
        keys_out = []
        for j, out in enumerate(jaxpr.outvars):
            if not self.is_key(out):
                continue
            keys_out.append(j)
            var = self.resolve(out)
            if var in where:
                items.append(Forward(where[var], j))
            elif not _any(self.consumed[var]):
                items.append(Source(j))
        return Signature(*items, keys_out=tuple(keys_out))


def jaxpr_signature(jaxpr, keys_in=()):
    """The Signature of a Jaxpr whose inputs (invars, then constvars) are keys where `keys_in`
    says so (further inputs become keys where a primitive reads them as keys). KeyReuseError
    where a key is consumed twice."""
    walk = _Walk(jaxpr, keys_in)
    for eqn in jaxpr.eqns:
        walk.apply(eqn)
    return walk.signature(jaxpr)


# ClosedJaxpr -> {which inputs are keys: its Signature}, as long as the jaxpr lives.
_SIGNATURES = weakref.WeakKeyDictionary()


def closed_signature(closed, keys_in):
    """jaxpr_signature of a ClosedJaxpr (remembered): its consts are keys when they are key
    Arrays."""
    keys = (*map(bool, keys_in), *(is_key_array(c) for c in closed.consts))
    known = _SIGNATURES.setdefault(closed, {})
    if keys not in known:
        known[keys] = jaxpr_signature(closed.jaxpr, keys)
    return known[keys]


def call_rule(name=None):
    """The key_reuse rule of a call-like primitive applying its `jaxpr` param: that jaxpr's
    signature, its errors naming `name`."""
    def rule(avals, keys, *, jaxpr, **params):
        sig = closed_signature(jaxpr, keys)
        return Signature(*sig.sinks, *sig.sources, *sig.forwards, keys_out=sig.keys_out,
                         name=name)
    return rule


# ---------------------------------------------------------------- eager: Arrays remember

# id(Array) -> (weak reference, consumed mask, where it was last consumed): Arrays are neither
# hashable nor extensible.
_CONSUMED = {}


def consumed(value):
    """How much of a key Array is consumed (False: fresh), or None for values not known as keys."""
    entry = _CONSUMED.get(id(value))
    return entry[1] if entry is not None and entry[0]() is value else None


def is_key_array(value):
    return consumed(value) is not None


def _remember(value, mask, where=None):
    try:
        ref = weakref.ref(value, lambda _, i=id(value): _CONSUMED.pop(i, None))
    except TypeError:  # Python scalars and other values that are no Arrays
        return
    _CONSUMED[id(value)] = (ref, np.logical_or(False, mask), where)


def _reuse_error(message, value):
    """KeyReuseError caused, as JAX's, by one saying where the key was consumed before."""
    err = KeyReuseError(message)
    where = _CONSUMED[id(value)][2]
    if where is not None:
        err.__cause__ = KeyReuseError(
            "PRNG key first used at the above location was subsequently reused at the "
            f"following location:\n(first used at {where.summarize()})")
    return err


def _eager_name(prim, sig):
    name = sig.name or prim.name
    return "jit-compiled function" if name == "jit" else name


def _eager_signature(prim, args, params):
    """(signature, operands with the consts of a call) of an eager application; no signature
    for primitives without a key_reuse rule, which JAX does not check eagerly either."""
    closed = prim.call_jaxpr(params)
    operands = [*args, *(closed.consts if closed is not None else ())]
    if prim.key_reuse is None:
        return None, operands
    keys = [is_key_array(a) for a in args]
    avals = [getattr(a, "aval", None) for a in args]
    return signature_of(prim, avals, keys, params), operands


def eval_checked(prim, args, params, run):
    """`run()` (the eager evaluation of prim on args) with JAX's checks of key Arrays: a
    consumed key passed where the primitive consumes raises KeyReuseError; afterwards operands
    and outputs remember what is consumed."""
    sig, operands = _eager_signature(prim, args, params)
    if sig is None:
        return run()
    sinks = [s for s in sig.sinks if s.idx < len(operands)]
    for snk in sinks:
        state = consumed(operands[snk.idx])
        if state is not None and _any(np.logical_and(state, snk.mask)):
            raise _reuse_error(f"Previously-consumed key passed to {_eager_name(prim, sig)} "
                               f"at index {snk.idx}", operands[snk.idx])
    outs = run()
    _update(sig, sinks, operands, outs if prim.multiple_results else [outs])
    return outs


def _update(sig, sinks, operands, outs):
    for snk in sinks:
        before = consumed(operands[snk.idx])
        _remember(operands[snk.idx], np.logical_or(False if before is None else before,
                                                   snk.mask), source_info.current())
    keys_out = range(len(outs)) if sig.keys_out is None and \
        any(map(is_key_array, operands)) else sig.keys_out or ()
    for i in keys_out:
        _remember(outs[i], True)
    for src in sig.sources:
        _remember(outs[src.idx], np.logical_not(src.mask))
    for fwd in sig.forwards:
        state = consumed(operands[fwd.in_idx])
        if state is not None:
            _remember(outs[fwd.out_idx], state)
