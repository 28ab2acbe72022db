"""The current-trace context, Trace and Tracer base classes, and EvalTrace at the bottom."""
import threading
from contextlib import contextmanager

import numpy as np

from . import avals, dtypes, errors, key_reuse, numerics, runtime
from .config import check_execution_allowed, checking_numerics
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
        if prim.impl is not None:  # a primitive defined outside refjax, with JAX's eager rule
            return prim.impl(*args, **params)
        # jax_debug_nans / jax_debug_infs / jax_no_execution / jax_debug_key_reuse
        if not checking_numerics():
            return runtime.eval_primitive(prim, args, params)
        check_execution_allowed(params.get("name", prim.name) if prim.name == "jit" else
                                prim.name)
        if key_reuse.enabled():
            outs = key_reuse.eval_checked(
                prim, args, params, lambda: runtime.eval_primitive(prim, args, params))
        else:
            outs = runtime.eval_primitive(prim, args, params)
        numerics.check(prim, args, params, outs)
        return outs

    def process_custom_jvp_call(self, call, fun, jvp, args, symbolic_zeros):
        """Evaluation runs a custom_jvp function itself (its rule is for differentiation)."""
        return fun(*args)

    def process_custom_vjp_call(self, call, fun, rule, args):
        return fun(*args)


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

    def __bool__(self):
        value = self.to_concrete_value()
        if value is not None:
            return bool(value)
        _check_size_one(self)
        raise errors.TracerBoolConversionError(self)

    def __int__(self):
        value = self.to_concrete_value()
        if value is not None:
            return int(value)
        raise _conversion_error(self, "int")

    def __index__(self):
        value = self.to_concrete_value()
        if value is not None:
            return value.__index__()
        if self.aval.shape != () or dtypes.kind(self.aval.dtype) not in "iu":
            raise TypeError("Only integer scalar arrays can be converted to a scalar index.")
        raise errors.TracerIntegerConversionError(self)

    # float(), complex(), np.asarray() and tolist() raise even where the value is known (under
    # grad, jvp, linearize): the Python or NumPy value would silently drop the derivative.
    def __float__(self):
        raise _conversion_error(self, "float")

    def __complex__(self):
        raise _conversion_error(self, "complex")

    def __array__(self, dtype=None, copy=None):
        raise errors.TracerArrayConversionError(self)

    def tolist(self):
        raise errors.ConcretizationTypeError(
            self, f"The tolist() method was called on {errors.describe(self)}.")

    def tobytes(self, order="C"):
        raise errors.ConcretizationTypeError(
            self, f"The tobytes() method was called on {errors.describe(self)}.")

    # Placement belongs to concrete arrays: JAX refuses these on every tracer.
    def delete(self):
        raise _method_error(self, "delete")

    def is_deleted(self):
        raise _method_error(self, "is_deleted")

    def on_device_size_in_bytes(self):
        raise _method_error(self, "on_device_size_in_bytes")

    @property
    def committed(self):
        raise errors.ConcretizationTypeError(
            self, f"The 'committed' attribute is not available on {errors.describe(self)}.")

    def item(self, *args):
        value = self.to_concrete_value()
        if value is None:
            raise errors.ConcretizationTypeError(
                self, f"The item() method was called on {errors.describe(self)}.")
        return value.item(*args)

    __hash__ = None

    def __repr__(self):
        return self.short_repr()

    __str__ = __repr__

    def short_repr(self):
        """What this tracer prints as, inside the repr of a tracer wrapping it too (JAX's
        `_short_repr`): `JitTracer(~float32[])`, `JVPTracer(primal=..., tangent=...)`..."""
        return f"{type(self).__name__}<{self.aval}>"


def _method_error(tracer, name):
    return errors.ConcretizationTypeError(
        tracer, f"The {name}() method was called on {errors.describe(tracer)}.")


def _check_size_one(x):
    if x.aval.size != 1:
        raise ValueError(errors.ambiguous_truth(x.aval.size))


def _conversion_error(x, fname):
    """float()/int()/complex() of a traced value: TypeError for non-scalars, as Python's
    conversion of a NumPy array; ConcretizationTypeError naming the function otherwise."""
    if x.aval.shape != ():
        return TypeError(f"Only scalar arrays can be converted to Python scalars; got "
                         f"{x.aval.ndim}-dimensional {errors.describe(x)}")
    return errors.ConcretizationTypeError(x, errors.conversion_context(fname))


def short_repr(x):
    """A tracer's short repr, or str() of a value: how tracers print what they carry."""
    return x.short_repr() if isinstance(x, Tracer) else str(x)


def get_aval(x):
    """The aval of any value refjax accepts: tracers, Arrays, NumPy arrays, Python scalars."""
    try:
        return x.aval
    except AttributeError:
        return _aval_of_constant(x)


def _aval_of_constant(x):
    if dtypes.is_python_scalar(x):
        return avals.ShapedArray((), dtypes.python_scalar_dtype(x), weak_type=type(x) is not bool)
    if isinstance(x, np.ma.MaskedArray):
        raise ValueError("numpy masked arrays are not supported as direct inputs to JAX "
                         "functions. Use arr.filled() to convert the value to a standard numpy "
                         "array.")
    if isinstance(x, (np.ndarray, np.generic)):
        if x.dtype.kind not in "biufcV":
            raise TypeError(f"Argument {x!r} of type {type(x)} is not a valid JAX type: JAX "
                            f"only supports number and bool dtypes, got dtype {x.dtype}")
        return avals.ShapedArray(x.shape, dtypes.canonicalize_dtype(x.dtype))
    if not hasattr(x, "__jax_array__"):
        raise TypeError(f"Argument {x!r} of type {type(x)} is not a valid JAX type")
    return get_aval(x.__jax_array__())


def as_value(x):
    """x as a value transformations compute with: tracers and Arrays pass through; Python
    scalars (weakly typed, as jnp.asarray makes them) and NumPy arrays become Arrays on the
    current backend. TypeError for anything that is not a JAX type."""
    if isinstance(x, Tracer) or hasattr(x, "aval"):
        return x
    if hasattr(x, "__jax_array__"):
        return as_value(x.__jax_array__())
    return runtime.make_array(x, _aval_of_constant(x))
