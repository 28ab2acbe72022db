"""Eager control flow's traces, cached by the user's functions and argument types as JAX's
(its `_initial_style_jaxpr` cache): a cond, switch, while_loop or scan run outside jit twice
with the same functions traces them once (their trace-time Python runs once) and binds the
same jaxprs, so the program compiled for them, and the inspect_array_sharding callbacks JAX runs
when it compiles, are reused. Under a transformation or jit nothing is cached (the trace may
capture that transformation's tracers), nor under a scoped option."""
import weakref

from ... import runtime
from ...config import OVERRIDES, config
from ...sharding import get_abstract_mesh
from ...sharding.mesh import _CURRENT_MESH, _RESOURCE_MESH
from ...trace import EVAL_TRACE, Tracer, current_trace
from ..parallel import AXIS_ENV

_TRACES = weakref.WeakKeyDictionary()  # first function -> {(rest, types, context): traced}
_PER_FUNCTION = 64  # traces kept per function; past it its table starts again


def cached(funs, types, trace, captured):
    """trace(), or what it gave for these functions (by identity) and hashable `types`
    before, at the top level; `captured(traced)` lists the values a trace captured (a trace
    capturing a tracer is not kept)."""
    table = _table(funs[0])
    if table is None or current_trace() is not EVAL_TRACE or AXIS_ENV.frames \
            or OVERRIDES.get():  # (a scoped option, e.g. enable_x64, may change the trace)
        return trace()
    # what else a trace depends on: the meshes in context, the backend (whose Arrays the
    # captured constants are)
    key = (tuple(map(_weak, funs[1:])), types, config.version, get_abstract_mesh(),
           _CURRENT_MESH.get(), _RESOURCE_MESH.get(), runtime.current_backend_name())
    hit = table.get(key)
    if hit is None:
        hit = trace()
        if not any(isinstance(c, Tracer) for c in captured(hit)):
            if len(table) >= _PER_FUNCTION:
                table.clear()
            table[key] = hit
    return hit


def _weak(fun):
    """The function as a key that does not keep it alive (itself if it cannot be weakly
    referenced): a freed function's entries are never hit again."""
    try:
        return weakref.ref(fun)
    except TypeError:
        return fun


def _table(fun):
    """The function's table of traces (None for a function that cannot be weakly
    referenced, e.g. a builtin: never cached)."""
    try:
        return _TRACES.setdefault(fun, {})
    except TypeError:
        return None
