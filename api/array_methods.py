"""Operators and methods of Array and Tracer (installed onto both, as JAX does)."""
import builtins

from ..core.array import Array
from ..core.trace import Tracer


def _np():
    from . import numpy as jnp
    return jnp


def _swap(fn):
    return lambda self, other: fn(other, self)


def _defer(name):
    """Binary operators return NotImplemented for operand types JAX would not accept."""
    def op(self, other):
        if not _acceptable(other):
            return NotImplemented
        return getattr(_np(), name)(self, other)
    return op


def _rdefer(name):
    def op(self, other):
        if not _acceptable(other):
            return NotImplemented
        return getattr(_np(), name)(other, self)
    return op


def _acceptable(x):
    import numpy as np
    from ..core import dtypes
    return isinstance(x, (Array, Tracer, np.ndarray, np.generic)) or dtypes.is_python_scalar(x)


_BINOPS = {
    "add": "add", "sub": "subtract", "mul": "multiply", "truediv": "true_divide",
    "floordiv": "floor_divide", "mod": "remainder", "pow": "power", "matmul": "matmul",
    "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor", "lshift": "left_shift",
    "rshift": "right_shift",
}
_COMPARE = {"eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal",
            "gt": "greater", "ge": "greater_equal"}


def _methods():
    m = {}
    for op, name in _BINOPS.items():
        m[f"__{op}__"] = _defer(name)
        m[f"__r{op}__"] = _rdefer(name)
    for op, name in _COMPARE.items():
        m[f"__{op}__"] = _defer(name)
    m["__neg__"] = lambda self: _np().negative(self)
    m["__pos__"] = lambda self: self
    m["__abs__"] = lambda self: _np().absolute(self)
    m["__invert__"] = lambda self: _np().invert(self)
    m["__getitem__"] = lambda self, idx: _np()._index(self, idx)
    m["__divmod__"] = lambda self, o: (_np().floor_divide(self, o), _np().remainder(self, o))
    m["__round__"] = lambda self, ndigits=None: _np().round(self, ndigits or 0)
    m["T"] = property(lambda self: _np().transpose(self))
    m["mT"] = property(lambda self: _np().swapaxes(self, -1, -2))
    m["real"] = property(lambda self: _np().real(self))
    m["imag"] = property(lambda self: _np().imag(self))
    m["reshape"] = _reshape
    m["astype"] = lambda self, dtype, copy=False, device=None: _np().astype(self, dtype)
    m["transpose"] = lambda self, *axes: _np().transpose(
        self, axes[0] if len(axes) == 1 and isinstance(axes[0], (tuple, list)) else (axes or None))
    m["conj"] = m["conjugate"] = lambda self: _np().conjugate(self)
    m["nbytes"] = property(lambda self: self.size * self.dtype.itemsize)
    m["itemsize"] = property(lambda self: self.dtype.itemsize)
    for name in ("sum", "mean", "prod", "max", "min", "all", "any", "std", "var", "argmax",
                 "argmin", "cumsum", "cumprod", "ravel", "flatten", "squeeze", "swapaxes",
                 "clip", "sort", "argsort", "round", "dot", "nonzero", "repeat", "take",
                 "trace", "diagonal", "ptp", "flatten"):
        m[name] = _method(name)
    m["flatten"] = lambda self, order="C": _np().ravel(self, order)
    return m


def _method(name):
    def method(self, *args, **kwargs):
        return getattr(_np(), name)(self, *args, **kwargs)
    method.__name__ = name
    return method


def _reshape(self, *shape, order="C"):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return _np().reshape(self, shape, order=order)


def install():
    for cls in (Array, Tracer):
        for name, value in _methods().items():
            setattr(cls, name, value)
    # Python truthiness of comparisons of concrete arrays goes through Array.__bool__.
    builtins  # keep the import used for readers: builtins are never shadowed here
