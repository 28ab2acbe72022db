"""Which of JAX's partial evaluations a `partial_eval` rule stands for: its linearization's
(LinearizeTrace: scan, cond, jit and shard_map have linearize rules) or its JaxprTrace's (what
while loops and remat fall back to, and everything nested in them)."""
import contextlib
import contextvars
import functools

_jaxpr_trace = contextvars.ContextVar("refjax_jaxpr_trace_partial_eval", default=False)
_NOT_REMAT = object()
_remat_policy = contextvars.ContextVar("refjax_remat_policy", default=_NOT_REMAT)


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


@contextlib.contextmanager
def remat_policy(policy):
    """Within: partial evaluation on behalf of remat's (JAX's partial_eval_jaxpr_custom),
    which applies its policy inside the bodies of the shard_maps it splits too."""
    token = _remat_policy.set(policy)
    try:
        with jaxpr_trace_style():
            yield
    finally:
        _remat_policy.reset(token)


def in_remat():
    """(whether partial evaluation runs on behalf of remat's, its policy)."""
    policy = _remat_policy.get()
    return policy is not _NOT_REMAT, None if policy is _NOT_REMAT else policy
