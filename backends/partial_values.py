"""Unreduced arrays on backends that hold each device's partial value (`partial_values`):
which operations involve them, and programs with them run equation by equation."""
import numpy as np

from ..core.array import Array
from ..core.trace import get_aval
from ..core.jaxpr import eval_jaxpr, subjaxprs
from ..core.primitives.control_flow.iterations import ITERATIONS, operand_avals
from ..core.transforms.shard_map import global_in_avals, shard_map_lanes, shard_map_p
from ..core.transforms.shard_map_eager import on_auto_axes
from ..core.sharding_unreduced import sets_of


def unreduced_axes(sharding):
    """The unreduced mesh axes of a layout (empty for any other than a NamedSharding)."""
    return getattr(getattr(sharding, "spec", None), "unreduced", frozenset())


def involved(bufs, out_avals):
    """Whether an operation reads or makes an unreduced value (so runs device by device)."""
    return any(unreduced_axes(getattr(b, "sharding", None)) for b in bufs) or \
        any(sets_of(a)[0] for a in out_avals)


def in_program(jaxpr):
    """Whether a program reads, makes or returns a value of unreduced type, or holds a loop,
    branch or call that does (a shard_map body's unreduced values are its lanes' own: the
    backends' lowerings of shard_map hold them)."""
    avals = [v.aval for v in (*jaxpr.invars, *jaxpr.outvars) if hasattr(v, "aval")]
    avals += [v.aval for e in jaxpr.eqns for v in e.outvars]
    return any(sets_of(a)[0] for a in avals if getattr(a, "sharding", None) is not None) or \
        any(in_program(j) for e in jaxpr.eqns if e.primitive is not shard_map_p
            for j in subjaxprs(e.params.values()))


def splits_partials(params):
    """Whether an equation's sub-jaxprs (at any depth) hold a shard_map splitting an argument
    by an unreduced in_spec: it needs each device's partial value, which an interpreter of
    whole values does not hold (it holds their sum)."""
    return any(e.primitive is shard_map_p and any(s.unreduced for s in e.params["in_specs"])
               or splits_partials(e.params.values())
               for j in subjaxprs(params) for e in j.eqns)


def op_by_op(backend, closed_jaxpr):
    """A runner of a program with unreduced values: each equation executed as an eager
    operation, device by device where the values are partial (JAX's SPMD program computes
    the same per-device values; a whole-array interpreter holds only sums)."""
    def run(bufs):
        args = [Array(v.aval.update(sharding=None), b, backend)
                for v, b in zip(closed_jaxpr.jaxpr.invars, bufs)]
        outs = eval_jaxpr(closed_jaxpr.jaxpr, closed_jaxpr.consts, *args)
        return [_as_buffer(backend, o, a) for o, a in zip(outs, closed_jaxpr.out_avals)]
    return run


def by_iterations(backend, prim, bufs, params):
    """A loop, branch or shard_map reading or making unreduced values (None: prim is none of
    these), run iteration by iteration or lane by lane, each equation an eager operation
    (device by device where the values are partial)."""
    if prim is shard_map_p:
        avals = global_in_avals(params)
        run = lambda args: shard_map_lanes(list(map(on_auto_axes, args)), **params)[0]  # noqa: E731
    elif prim in ITERATIONS:
        avals, run = operand_avals(prim, params), lambda args: ITERATIONS[prim](args, **params)
    else:
        return None
    outs = run([Array(a.update(sharding=None), b, backend) for a, b in zip(avals, bufs)])
    return [_as_buffer(backend, o, get_aval(o)) for o in outs]


def _as_buffer(backend, x, aval):
    if type(x) is Array:
        return x._buf
    return backend.put(np.asarray(x, aval.dtype), aval.update(sharding=None))
