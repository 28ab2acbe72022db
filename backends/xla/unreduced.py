"""Unreduced arrays on the xla backend: JAX computes and holds each device's partial value;
operations reading or making one run eagerly in JAX on its Explicit mesh, with the types'
unreduced and reduced axes passed on (elsewhere the backend lays values out on Auto axes)."""
import contextlib
import threading

import jax
import jax.sharding as jsh

from ...core import sharding as sh
from ...core.primitives.sharding_ops import sharding_constraint_p
from ...core.primitives.control_flow.iterations import ITERATIONS
from ...core.sharding_unreduced import sets_of
from ..partial_values import by_iterations, in_program, op_by_op, unreduced_axes
from ..partial_values import involved as _involved

__all__ = ["execute", "in_program", "involved", "keeps_sets", "op_by_op", "unreduced_axes"]

_STATE = threading.local()


def keeps_sets():
    """Whether the rules running now pass unreduced/reduced axes on to JAX (else they drop
    them: a type on Explicit axes, which the backend's Auto-axis programs cannot carry)."""
    return getattr(_STATE, "keep", False)


@contextlib.contextmanager
def _keeping(mesh):
    saved, _STATE.keep = keeps_sets(), True
    try:
        with jax.set_mesh(mesh):
            yield
    finally:
        _STATE.keep = saved


def involved(bufs, out_avals, prim=None):
    """Whether an operation reads or makes an unreduced value, or is a loop or branch with
    reduced results (JAX's lax.cond/switch compares its branches' reduced types, which its
    lowering of refjax's equations need not keep alike): those run as `execute` runs them."""
    return _involved(bufs, out_avals) or (
        prim in ITERATIONS and any(sets_of(a)[1] for a in out_avals if a.sharding is not None))


def execute(backend, prim, bufs, params, out_avals):
    """prim run eagerly by JAX on its Explicit mesh (JAX computes each device's partial value,
    sums them in reshard and places values on devices as it does)."""
    if prim.call_param is not None:  # a call: its equations, each as above
        return op_by_op(backend, params[prim.call_param])(bufs)
    looped = by_iterations(backend, prim, bufs, params)
    if looped is not None:
        return looped
    mesh = _mesh(backend, bufs)
    with _keeping(mesh):
        if prim is sharding_constraint_p:
            target = backend.jax_sharding(params["sharding"])
            return [jax.sharding.reshard(bufs[0], target) if _on_mesh(bufs[0]) else
                    jax.device_put(bufs[0], target)]
        # under jax.jit: JAX's eager impls of some (slice) take paths refusing unreduced values
        return jax.jit(lambda *xs: backend.lower_eqn(prim, xs, params, out_avals))(*bufs)


def _on_mesh(buf):
    return isinstance(getattr(buf, "sharding", None), jsh.NamedSharding)


def _mesh(backend, bufs):
    for b in bufs:
        if _on_mesh(b):
            return b.sharding.mesh
    return backend.jax_sharding(sh.NamedSharding(sh.get_current_mesh(), sh.P())).mesh
