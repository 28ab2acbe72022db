"""Unreduced arrays on the xla backend: JAX computes and holds each device's partial value;
operations reading or making one run eagerly in JAX on its Explicit mesh, and programs with
them in one jax.jit there, with the types' unreduced and reduced axes passed on (elsewhere
the backend lays values out on Auto axes)."""
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

__all__ = ["execute", "in_program", "involved", "keeps_sets", "lowered", "op_by_op",
           "unreduced_axes", "whole_program"]

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
    if prim.call_param is not None:  # a call: its program, as a jit's
        return backend.compile(params[prim.call_param])(bufs)
    looped = by_iterations(backend, prim, bufs, params)
    mesh = _mesh(backend, bufs)
    if looped is not None:
        return [_typed(b, a, mesh) for b, a in zip(looped, out_avals)]
    with _keeping(mesh):
        if prim is sharding_constraint_p:
            target = backend.jax_sharding(params["sharding"])
            return [jax.sharding.reshard(bufs[0], target) if _on_mesh(bufs[0]) else
                    jax.device_put(bufs[0], target)]
        # under jax.jit: JAX's eager impls of some (slice) take paths refusing unreduced values
        return jax.jit(lambda *xs: backend.lower_eqn(prim, xs, params, out_avals))(*bufs)


def _typed(buf, aval, mesh):
    """A result computed lane by lane or iteration by iteration laid out as its type says
    (a shard_map's residual split over its axes, which the transposed shard_map's in_specs
    name: JAX checks its arguments' types against them)."""
    spec = getattr(aval.sharding, "spec", None)
    if spec is None or spec.unreduced or not _on_mesh(buf):
        return buf
    target = jsh.NamedSharding(mesh, jsh.PartitionSpec(*spec.partitions, reduced=spec.reduced))
    if buf.sharding.is_equivalent_to(target, aval.ndim):
        return buf
    with _keeping(mesh):
        return jax.device_put(buf, target)


def _on_mesh(buf):
    return isinstance(getattr(buf, "sharding", None), jsh.NamedSharding)


def _mesh(backend, bufs):
    for b in bufs:
        if _on_mesh(b):
            return b.sharding.mesh
    return backend.jax_sharding(sh.NamedSharding(sh.get_current_mesh(), sh.P())).mesh


def whole_program(backend, closed, scope):
    """A runner of a program with unreduced values (`in_program`): one jax.jit of its
    lowering on JAX's Explicit mesh of its arguments, the types' unreduced and reduced axes
    kept, so that JAX's SPMD program holds each device's partial values (a loop's carry too,
    reduced where the program reshards it, as JAX compiles it), its results named by their
    types; op by op where JAX refuses the lowering. `scope()`: the JAX configuration the
    program is traced and run under (x64, default device)."""
    fallback, programs = op_by_op(backend, closed), {}
    jitted = jax.jit(lambda *xs: backend.interpret(closed, list(xs)))

    def run(bufs):
        key = tuple((b.shape, b.dtype, getattr(b, "sharding", None)) for b in bufs)
        if key not in programs:
            program = lowered(jitted, _mesh(backend, bufs), scope, bufs)
            programs[key] = None if program is None else program.compile()
        program = programs[key]
        if program is None:
            return fallback(bufs)
        with scope():
            return list(program(*bufs))
    return run


def lowered(jitted, mesh, scope, args, kwargs=None):
    """jitted lowered for args on `mesh` (JAX's, with Explicit axes) with the types' unreduced
    and reduced axes; None where JAX refuses to lower refjax's equations so (its typing of a
    reduced value times a literal, which refjax's equations hold as an f32[] constant, is a
    ShardingTypeError; an eager operation lowers its literals as arguments)."""
    with _keeping(mesh), scope():
        try:
            return jitted.lower(*args, **(kwargs or {}))
        # any refusal: lowering runs nothing, and what refjax's types accept but JAX's lowering
        # refuses runs op by op (an error of the program itself is raised there again)
        except Exception:
            return None


def jax_mesh(backend, shardings):
    """JAX's mesh of the first of these refjax shardings on a mesh (else the context mesh)."""
    for s in shardings:
        if isinstance(s, sh.NamedSharding):
            return backend.jax_sharding(s).mesh
    return _mesh(backend, ())
