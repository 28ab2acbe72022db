"""jax_check_tracer_leaks (jax.checking_leaks): when a transformation's trace ends (jit's and
make_jaxpr's staging, vmap), any of its tracers still alive has leaked out of it (stored in a
global, a closure, an object...): UnexpectedTracerError with JAX's "Leaked trace" report,
naming what holds each tracer. Off by default: the check collects garbage."""
import gc
import sys
import types

from .errors import UnexpectedTracerError


def report(trace):
    """Raise if tracers of `trace` outlive it."""
    from .trace import Tracer
    gc.collect()
    leaked = [o for o in gc.get_objects() if isinstance(o, Tracer) and o._trace is trace]
    if leaked:
        ignore = {id(leaked)}
        details = []
        for tracer in leaked:
            details.append(f"{tracer!r}\n{_holders(tracer, ignore)}")
        details = "\n\n".join(details)
        raise UnexpectedTracerError(f"Leaked trace {type(trace).__name__}. Leaked tracer(s):"
                                    f"\n\n{details}")


def _holders(obj, ignore, depth=3):
    """Lines '<A id> is referred to by <B id>[key]' up the chain of what keeps obj alive."""
    lines = []
    for _ in range(depth):
        found = _holder(obj, ignore)
        if found is None:
            break
        holder, text = found
        del found  # that pair refers to the holder too: it must not show up next round
        lines.append(f"<{type(obj).__name__} {id(obj)}> is referred to by {text}")
        obj = holder
        if isinstance(obj, types.ModuleType):
            break
    return "\n".join(lines)


def _holder(obj, ignore):
    """(the first referrer of obj outside the interpreter's frames, how it is named)."""
    for ref in gc.get_referrers(obj):
        if isinstance(ref, (types.FrameType, types.GeneratorType)) or id(ref) in ignore:
            continue
        if isinstance(ref, dict):
            module, owner, key = _module_of(ref), _owner_of(ref), _key_of(ref.items(), obj)
            if module is not None:
                return module, f"{module.__name__}.{key}"
            if owner is not None:  # an object's attribute
                return owner, f"<{type(owner).__name__} {id(owner)}>.{key}"
            return ref, f"<dict {id(ref)}>[{key!r}]"
        if isinstance(ref, (list, tuple)):
            return ref, f"<{type(ref).__name__} {id(ref)}>[{_key_of(enumerate(ref), obj)}]"
        attr = _key_of(getattr(ref, "__dict__", {}).items(), obj)
        return ref, f"<{type(ref).__name__} {id(ref)}>" + ("" if attr == "?" else f".{attr}")
    return None


def _key_of(pairs, obj):
    # a loop, not a generator expression: a closure over obj would itself refer to it
    for key, value in pairs:
        if value is obj:
            return key
    return "?"


def _owner_of(namespace):
    """The object whose attribute dictionary `namespace` is, if any."""
    for ref in gc.get_referrers(namespace):
        if getattr(ref, "__dict__", None) is namespace and not isinstance(ref, types.ModuleType):
            return ref
    return None


def _module_of(namespace):
    for module in list(sys.modules.values()):
        if getattr(module, "__dict__", None) is namespace:
            return module
    return None
