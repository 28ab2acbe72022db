"""ensure_compile_time_eval: inside the context, operations on values known now (no traced
operand) run immediately, even under jit or another transformation, so that their results
are concrete (usable in Python control flow); operations on traced values are traced as
usual."""
import contextlib

from ..trace import EVAL_TRACE, Trace, Tracer, current_trace, set_current_trace


class CompileTimeEvalTrace(Trace):
    """Evaluates primitives without traced operands; hands the others to `parent`."""

    def __init__(self, parent):
        self.parent = parent

    def process_primitive(self, prim, args, params):
        if any(isinstance(x, Tracer) for x in args):
            return self.parent.process_primitive(prim, args, params)
        return EVAL_TRACE.process_primitive(prim, args, params)

    def __getattr__(self, name):
        # the parent's other hooks (custom rules, ...) when a traced value reaches them
        return getattr(self.parent, name)


@contextlib.contextmanager
def ensure_compile_time_eval():
    """Context manager: computations on concrete values run now rather than being staged
    (jax.ensure_compile_time_eval), e.g. to branch in Python on a value computed inside a
    jitted function from constants."""
    parent = current_trace()
    if parent is EVAL_TRACE or isinstance(parent, CompileTimeEvalTrace):
        yield
        return
    with set_current_trace(CompileTimeEvalTrace(parent)):
        yield
