"""jit's diagnostic options: jax_log_compiles, jax_explain_cache_misses, jax_no_tracing,
jax_no_execution and jax_enable_checks, logging what JAX logs under JAX's logger names."""
import functools
import inspect
import logging
import re
import time
from contextlib import contextmanager

from .. import pytree, source_info
from ..config import check_execution_allowed, config  # noqa: F401  (jit's)

# JAX's loggers for these messages, so that a user's logging configuration for JAX applies
DISPATCH_LOG = logging.getLogger("jax._src.dispatch")
COMPILE_LOG = logging.getLogger("jax._src.interpreters.pxla")
CACHE_MISS_LOG = logging.getLogger("jax._src.interpreters.partial_eval")
_WEAK_TYPES_URL = "https://docs.jax.dev/en/latest/type_promotion.html#weak-types"
# what each part of jit's signature key is (core/transforms/jit.py's signature_key)
KEY_PARTS = ("input pytree", "input types", "static arguments", "static keyword arguments",
             "backend", "jax_enable_x64", "jax_numpy_dtype_promotion", "jax_debug_key_reuse",
             "axis env", "mesh context", "jax_auto_pcast",
             "jax_remove_size_one_mesh_axis_from_type")


def _level():
    """JAX logs compilations at WARNING under jax_log_compiles, at DEBUG otherwise."""
    return logging.WARNING if config.read("jax_log_compiles") else logging.DEBUG


def fun_sourceinfo(fun):
    """'name at file:line' of a Python function (a partial's and a wrapper's underlying one),
    as JAX's error messages name it: a builtin by its name, other callables '<unknown>'
    (their reprs hold addresses)."""
    while isinstance(fun, functools.partial):
        fun = fun.func
    fun = inspect.unwrap(fun)
    code = getattr(fun, "__code__", None)
    if code is not None and hasattr(fun, "__name__"):
        return f"{fun.__name__} at {code.co_filename}:{code.co_firstlineno}"
    builtin = re.match(r"<built-in function (\S+)>", str(fun))
    return builtin.group(1) if builtin else "<unknown>"


def fun_name(fun):
    """The name jit gives fun in jaxprs, lowered modules and its own __name__, as JAX's: its
    __name__, a partial's function's, else '<unnamed function>' (an instance with __call__)."""
    name = getattr(fun, "__name__", None)
    if name is not None:
        return name
    return fun_name(fun.func) if isinstance(fun, functools.partial) else "<unnamed function>"


def check_tracing_allowed(fun):
    """jax_no_tracing: a jit cache miss is a RuntimeError, with JAX's message."""
    if config.read("jax_no_tracing"):
        raise RuntimeError(f"re-tracing function {fun_sourceinfo(fun)} for `jit`, but "
                           "'no_tracing' is set")


@contextmanager
def timed_trace(name):
    """Log 'Finished tracing' with the time the block took, as JAX's dispatch logger does."""
    start = time.perf_counter()
    yield
    if DISPATCH_LOG.isEnabledFor(_level()):
        DISPATCH_LOG.log(_level(), "Finished tracing %s for jit in %s sec", name,
                         time.perf_counter() - start)


def log_compile(name, avals, in_shardings):
    """JAX's 'Compiling jit(f) with global shapes and types ...' line."""
    if not COMPILE_LOG.isEnabledFor(_level()):
        return
    mapping = ["UnspecifiedValue"] * len(avals) if in_shardings is None else \
        [repr(s) for s in pytree.tree_leaves(in_shardings)]
    COMPILE_LOG.log(_level(), "Compiling jit(%s) with global shapes and types %s. Argument "
                    "mapping: %s.", name, _tuple_text([repr(a) for a in avals]),
                    _tuple_text(mapping))


def _tuple_text(items):
    return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"


_seen_callsites = set()


def explain_cache_miss(fun, key, old_keys, arg_names):
    """jax_explain_cache_misses: why this call traces again, as JAX's message explains it
    (naming the function as its errors do: '<unknown>' for a callable object)."""
    if not config.read("jax_explain_cache_misses"):
        return
    info = source_info.current()
    callsite = info.summarize() if info is not None else "<unknown>"
    lines = [f"TRACING CACHE MISS at {callsite}:"]
    name, _, defined = fun_sourceinfo(fun).partition(" at ")
    where = f" defined at {defined}" if defined else ""
    if not old_keys:
        lines.append(f"  never seen function:\n    {name} id={id(fun)}{where}")
        if callsite in _seen_callsites:
            lines.append("  but seen another function defined on the same line; maybe the "
                         "function is\n  being re-defined repeatedly, preventing caching?")
        _seen_callsites.add(callsite)
    else:
        lines.append(f"  for {name}{where}")
        lines.append("  all previously seen cache keys differ. For the closest previous key:")
        lines.append("  " + min(_diff(key, old, arg_names) for old in old_keys)[1])
    CACHE_MISS_LOG.warning("\n".join(lines))


def _diff(new, old, arg_names):
    """(severity, explanation) of what differs between two signature keys."""
    context = [f"  * {part} differs: now {n} and before {o}"
               for part, n, o in zip(KEY_PARTS[4:], new[4:], old[4:]) if n != o]
    if context:
        return 0, "Tracing context doesn't match, e.g. due to config or context manager.\n" + \
            "\n".join(context)
    if new[0] != old[0]:
        return 1, f"different input pytree:\n  * now {new[0]} and before {old[0]}"
    if new[2:4] != old[2:4]:
        return 2, f"different static arguments: now {new[2:4]} and before {old[2:4]}"
    return 3, _diff_types(new[1], old[1], arg_names)


def _diff_types(new, old, arg_names):
    diffs, weak = [], False
    for name, n, o in zip(arg_names, new, old):
        if n == o:
            continue
        ns, os_ = _short(n, len(n.shape) != len(o.shape)), _short(o, len(n.shape) != len(o.shape))
        if n.weak_type != o.weak_type:
            weak = True
            ns, os_ = ns + f"{{weak_type={n.weak_type}}}", os_ + f"{{weak_type={o.weak_type}}}"
        diffs.append(f"  * at {name}, now {ns} and before {os_}")
    return "different input types:\n" + "\n".join(diffs) + (_WEAK_TYPES_URL if weak else "")


def _short(aval, with_sharding):
    # JAX's avals carry a sharding whose spec has one entry per dimension: it is printed,
    # as '({})', where the shardings of two avals of different ranks differ
    return aval.str_short() + ("({})" if with_sharding else "")


def flat_arg_names(signature, args, kwargs):
    """JAX's names of a call's flattened arguments: the parameter, then the path inside it."""
    return [_param_name(signature, path[0], path[1]) + pytree.keystr(path[2:])
            for path, _ in pytree.tree_flatten_with_path((args, kwargs))[0]]


def _param_name(signature, head, top):
    key = getattr(top, "idx", getattr(top, "key", None))
    if getattr(head, "idx", 0) == 1:  # keyword arguments
        return str(key)
    params = list(signature.parameters.values()) if signature is not None else []
    if isinstance(key, int) and key < len(params) and params[key].kind.name != "VAR_POSITIONAL":
        return params[key].name
    return f"args[{key}]"
