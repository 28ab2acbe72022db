"""The current-trace context, Trace and Tracer base classes, and EvalTrace at the bottom."""
import threading
from contextlib import contextmanager

from . import errors
from .sequence import LeadingAxis


class Trace:
    """A transformation's interpreter: processes each primitive bound while it is current."""

    def process_primitive(self, prim, args, params):
        raise NotImplementedError(f"{type(self).__name__} cannot process {prim}")

    def __repr__(self):
        return type(self).__name__


class EvalTrace(Trace):
    """The bottom of every stack: asks the current backend to execute the primitive."""

    def process_primitive(self, prim, args, params):
        return _eval_hook(prim, args, params)


def _no_backend(prim, args, params):
    raise RuntimeError("no backend is loaded; import refjax, not refjax.core, to run code")


_eval_hook = _no_backend


def set_eval_hook(fn):
    """Installed by backends/base: how EvalTrace executes a primitive."""
    global _eval_hook
    _eval_hook = fn


class _State(threading.local):
    trace = EvalTrace()


_state = _State()
EVAL_TRACE = _State.trace
TRACE_STATE = _state  # `.trace` is the current trace (jit's fast path reads it directly)


def current_trace():
    return _state.trace


@contextmanager
def set_current_trace(trace):
    """Make `trace` current for the block (the previous one comes back even on error)."""
    prev, _state.trace = _state.trace, trace
    try:
        yield trace
    finally:
        _state.trace = prev


class Tracer(LeadingAxis):
    """A value flowing through a trace. Array-like methods are installed by api/array_methods."""

    __slots__ = ("_trace",)
    __array_priority__ = 1000

    @property
    def aval(self):
        raise NotImplementedError

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: self.aval.ndim)
    size = property(lambda self: self.aval.size)
    weak_type = property(lambda self: self.aval.weak_type)

    def to_concrete_value(self):
        """The concrete Array behind this tracer, or None when it is abstract."""
        return None

    def _concrete_or_raise(self, error):
        value = self.to_concrete_value()
        if value is None:
            raise error(self)
        return value

    def __bool__(self):
        return bool(self._concrete_or_raise(errors.TracerBoolConversionError))

    def __int__(self):
        return int(self._concrete_or_raise(errors.TracerIntegerConversionError))

    def __index__(self):
        return self._concrete_or_raise(errors.TracerIntegerConversionError).__index__()

    def __float__(self):
        return float(self._concrete_or_raise(errors.ConcretizationTypeError))

    def __complex__(self):
        return complex(self._concrete_or_raise(errors.ConcretizationTypeError))

    def __array__(self, dtype=None, copy=None):
        value = self._concrete_or_raise(errors.TracerArrayConversionError)
        return value.__array__(dtype)

    __hash__ = None

    def __repr__(self):
        return f"Traced<{self.aval.str_short()}>with<{type(self._trace).__name__}>"

    def item(self):
        return self._concrete_or_raise(errors.ConcretizationTypeError).item()

    def tolist(self):
        return self._concrete_or_raise(errors.ConcretizationTypeError).tolist()


def get_aval(x):
    """The aval of any value refjax accepts: tracers, Arrays, NumPy arrays, Python scalars."""
    try:
        return x.aval
    except AttributeError:
        return _aval_of_constant(x)


def _aval_of_constant(x):
    from . import avals, dtypes
    import numpy as np
    if dtypes.is_python_scalar(x):
        return avals.ShapedArray((), dtypes.python_scalar_dtype(x), weak_type=type(x) is not bool)
    if isinstance(x, (np.ndarray, np.generic)):
        return avals.ShapedArray(x.shape, dtypes.canonicalize_dtype(x.dtype))
    raise TypeError(f"Value {x!r} of type {type(x).__name__} is not a valid JAX type")
