"""Which of JAX's partial evaluations a `partial_eval` rule stands for: its linearization's
(LinearizeTrace: scan, cond, jit and shard_map have linearize rules) or its JaxprTrace's (what
while loops and remat fall back to, and everything nested in them)."""
import contextlib
import contextvars
import functools

_jaxpr_trace = contextvars.ContextVar("refjax_jaxpr_trace_partial_eval", default=False)


@contextlib.contextmanager
def jaxpr_trace_style():
    """Within: partial_eval rules split equations as JAX's JaxprTrace does (a shard_map's
    known part outputs its known outputs before its residuals)."""
    token = _jaxpr_trace.set(True)
    try:
        yield
    finally:
        _jaxpr_trace.reset(token)


def in_jaxpr_trace_style():
    """Whether a partial_eval rule runs on behalf of JAX's JaxprTrace."""
    return _jaxpr_trace.get()


def as_jaxpr_trace(rule):
    """`rule` run within jaxpr_trace_style (for the rules of primitives JAX partially
    evaluates with its JaxprTrace)."""
    @functools.wraps(rule)
    def wrapped(*args, **kwargs):
        with jaxpr_trace_style():
            return rule(*args, **kwargs)
    return wrapped
