"""Linearize: JVP with tangents staged into a linear jaxpr while primals run on the parent."""
from ..trace import Trace, current_trace, get_aval
from .ad import Zero
from .jvp import jvp_flat
from .staging import StagingTrace, StagingTracer


class TangentDispatchTrace(Trace):
    """Current while a JVP rule runs under linearize: an operation touching a tangent (a tracer
    of the tangent staging trace) is staged into the linear jaxpr; anything else runs on the
    parent trace, so primal values stay concrete (Python control flow on them works)."""

    def __init__(self, parent, tangent_trace):
        self.parent = parent
        self.tangent_trace = tangent_trace

    def process_primitive(self, prim, args, params):
        s = self.tangent_trace
        if any(type(a) is StagingTracer and a._trace is s for a in args):
            return s.process_primitive(prim, args, params)
        return self.parent.process_primitive(prim, args, params)


def linearize_flat(fun, primals):
    """Returns (out primals, linear jaxpr, residuals, out tangent avals): the jaxpr maps input
    tangents to output tangents; its constvars are the residuals (values of the parent trace)."""
    parent = current_trace()
    tangent_trace = StagingTrace()
    tangents = [tangent_trace.new_arg(get_aval(p).to_tangent_aval()) for p in primals]
    dispatch = TangentDispatchTrace(parent, tangent_trace)
    out_p, out_t = jvp_flat(fun, primals, tangents, parent=parent, rule_trace=dispatch)
    out_t = [_instantiate_in(tangent_trace, t) for t in out_t]
    jaxpr, residuals = tangent_trace.to_jaxpr(out_t)
    return out_p, jaxpr, residuals


def _instantiate_in(trace, t):
    """Output tangents that are symbolic zeros become zeros staged into the linear jaxpr."""
    if type(t) is not Zero:
        return t
    from ..trace import set_current_trace
    from .ad import zeros_like_aval
    with set_current_trace(trace):
        return zeros_like_aval(t.aval)
