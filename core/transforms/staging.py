"""StagingTrace: records bound primitives into a jaxpr (what jit and make_jaxpr build on)."""
import numpy as np

from .. import jaxpr as jx
from .. import dtypes, leaks, source_info
from ..config import config
from ..array import Array
from ..avals import ShapedArray
from ..state import Ref, check_no_refs
from ..sharding_types import type_outputs, typed_aval
from ..trace import Trace, Tracer, get_aval, set_current_trace
from ..vma import match_operands, typed_outputs


class StagingTracer(Tracer):
    """A value of the jaxpr being built: an aval and the Var it is bound to."""

    __slots__ = ("_var",)

    def __init__(self, trace, var):
        self._trace = trace
        self._var = var

    @property
    def aval(self):
        return self._var.aval

    def short_repr(self):
        return f"JitTracer({self.aval})"


class StagingTrace(Trace):
    """Builds a jaxpr. Values of other traces and concrete arrays become constants."""

    def __init__(self, record_source=True, inline_arrays=True):
        # Internal traces (a rule's helper, the tangents of linearize) skip looking up the
        # user's line for each equation: equations they re-bind keep their own source.
        self.current_source = source_info.current if record_source else source_info.rebound
        self.name_base = source_info.name_stack()  # equations record the names beyond it
        # linearize keeps concrete arrays as residuals (constvars), as JAX's does
        self.inline_arrays = inline_arrays
        self.invars = []
        self.eqns = []
        self.constvars = {}  # id(value) -> (Var, value)

    def new_arg(self, aval):
        var = jx.Var(aval)
        self.invars.append(var)
        return StagingTracer(self, var)

    def to_atom(self, x):
        if type(x) is StagingTracer and x._trace is self:
            return x._var
        literal = _as_literal(x) if self.inline_arrays or not isinstance(x, Array) else None
        if literal is not None:
            return literal
        return self._const_var(x)

    def _const_var(self, x):
        entry = self.constvars.get(id(x))
        if entry is None:
            aval = typed_aval(x)
            value = x
            if not isinstance(x, (Tracer, Array, Ref)):
                aval = aval.strip_weak_type() if not dtypes.is_python_scalar(x) else aval
                value = _private(x, aval)
            # keyed by the captured object, which stays alive (entry[2]) so its id stays unique
            entry = self.constvars[id(x)] = (jx.Var(aval), value, x)
        return entry[0]

    def process_primitive(self, prim, args, params):
        invars = [self.to_atom(x) for x in args]
        in_avals = [v.aval for v in invars]
        matched = match_operands(prim, args, in_avals, params)
        if matched is not args:
            return self.process_primitive(prim, matched, params)
        if prim.abstract_eval is None:  # only primitives defined outside refjax lack one
            raise NotImplementedError(f"Abstract evaluation for '{prim.name}' not implemented")
        check_no_refs(prim, in_avals, params)
        out = prim.abstract_eval(*in_avals, **params)
        out_avals = type_outputs(prim, in_avals, out if prim.multiple_results else [out], params)
        out_avals = typed_outputs(prim, invars, out_avals, params)
        outvars = [jx.Var(a) for a in out_avals]
        self.eqns.append(jx.JaxprEqn(prim, invars, outvars, params,
                                     self.current_source(self.name_base)))
        tracers = [StagingTracer(self, v) for v in outvars]
        return tracers if prim.multiple_results else tracers[0]

    def to_jaxpr(self, outs):
        """The jaxpr of the recorded equations; returns (jaxpr, const values)."""
        outvars = [self.to_atom(x) for x in outs]
        consts = list(self.constvars.values())
        jaxpr = jx.Jaxpr([v for v, _, _ in consts], list(self.invars), outvars, list(self.eqns))
        jx.typecheck_jaxpr(jaxpr)
        return jaxpr, [c for _, c, _ in consts]


def _private(x, aval):
    """A captured NumPy value as a read-only copy of its aval's dtype: the jaxpr is reused
    (jit's cache), so a later change to the caller's array must not change its results."""
    value = np.array(x, dtype=aval.dtype)
    value.flags.writeable = False
    return value


def _as_literal(x):
    """Python scalars and concrete scalar arrays are written inline, as JAX does."""
    if dtypes.is_python_scalar(x):
        aval = get_aval(x)
        return jx.Literal(np.asarray(x, aval.dtype)[()], aval, str(x))
    if isinstance(x, Array) and x.aval.shape == () and x.dtype != dtypes.float0:
        return jx.Literal(np.asarray(x)[()], x.aval)
    if isinstance(x, (np.ndarray, np.generic)) and x.shape == ():
        aval = ShapedArray((), dtypes.canonicalize_dtype(x.dtype))
        return jx.Literal(np.asarray(x, aval.dtype)[()], aval)
    return None


def trace_to_jaxpr(fun, in_avals, record_source=True):
    """Stage fun(*tracers) into (jaxpr, consts) where consts are the captured values."""
    trace = StagingTrace(record_source)
    args = [trace.new_arg(a) for a in in_avals]
    with set_current_trace(trace):
        outs = fun(*args)
    staged = trace.to_jaxpr(outs)
    if config.read("jax_check_tracer_leaks"):
        del args, outs  # the tracers still alive past here have leaked
        leaks.report(trace)
    return staged


def closure_convert(jaxpr, consts):
    """Split consts into concrete ones (kept in a ClosedJaxpr) and tracers (turned into
    leading inputs): returns (ClosedJaxpr, tracer_consts)."""
    keep = [not isinstance(c, Tracer) for c in consts]
    if all(keep):
        return jx.ClosedJaxpr(jaxpr, consts), []
    constvars = [v for v, k in zip(jaxpr.constvars, keep) if k]
    moved = [v for v, k in zip(jaxpr.constvars, keep) if not k]
    new = jx.Jaxpr(constvars, moved + list(jaxpr.invars), jaxpr.outvars, jaxpr.eqns)
    return (jx.ClosedJaxpr(new, [c for c, k in zip(consts, keep) if k]),
            [c for c, k in zip(consts, keep) if not k])


def stage(fun, in_avals, record_source=True):
    """Stage fun into (ClosedJaxpr, tracer consts): the concrete values it captures stay
    consts; captured tracers (of enclosing traces) become leading inputs, returned so the
    caller passes them (jit, custom_jvp/vjp, shard_map)."""
    jaxpr, consts = trace_to_jaxpr(fun, in_avals, record_source)
    return closure_convert(jaxpr, consts)


def stage_closed(fun, in_avals):
    """Stage a rule's helper function (a transformed body) to a ClosedJaxpr. It may capture
    concrete values only: a captured tracer here is a bug in the rule."""
    closed, tracer_consts = stage(fun, in_avals, record_source=False)
    if tracer_consts:
        raise RuntimeError("internal error: a transformation rule captured a traced value "
                           f"while staging {getattr(fun, '__name__', fun)}")
    return closed


def stage_with_const_inputs(fun, in_avals):
    """Stage a user's function (a loop body, a branch): (ClosedJaxpr whose captured values,
    concrete or traced, are leading inputs, those values). Captured values become operands
    so every transformation of the enclosing primitive sees them."""
    jaxpr, consts = trace_to_jaxpr(fun, in_avals)
    moved = jx.Jaxpr([], list(jaxpr.constvars) + list(jaxpr.invars), jaxpr.outvars, jaxpr.eqns)
    return jx.ClosedJaxpr(moved, []), consts

