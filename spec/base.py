"""The vocabulary of the specification: PrimitiveSpec, signatures, samples, value strategies."""
from dataclasses import dataclass, field
from typing import Callable, NamedTuple, Optional

import ml_dtypes
import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

BOOL = ("bool",)
SIGNED = ("int8", "int32")
UNSIGNED = ("uint8", "uint32")
INT = SIGNED + UNSIGNED
FLOAT = ("float16", "bfloat16", "float32")
COMPLEX = ("complex64",)
NUM = INT + FLOAT
ALL = BOOL + NUM
# Under x64 the 64-bit types join the candidates (float64 is what the derivative tests use).
X64 = {"float64": "float32", "int64": "int32", "complex128": "complex64"}
CANDIDATES = ALL + COMPLEX
CANDIDATES_X64 = CANDIDATES + tuple(X64)
# Python scalars' dtypes: the only ones for which samples draw weakly-typed arguments.
WEAKABLE = ("int32", "float32", "int64", "float64", "complex64", "complex128")


def np_dtype(name):
    """The NumPy dtype called `name` (bfloat16 from ml_dtypes)."""
    return np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)


def kind(name):
    """'b', 'i', 'u', 'f' or 'c' for a dtype name."""
    return "f" if name == "bfloat16" else np.dtype(name).kind


def with_x64(names, x64):
    """`names` plus their 64-bit counterparts when x64 is on."""
    if not x64:
        return tuple(names)
    return tuple(names) + tuple(wide for wide, narrow in X64.items() if narrow in names)


def diff_dtype(names):
    """The dtype derivative tests run in: float64, complex128 for complex-only primitives,
    else (integer or boolean primitives) the first accepted dtype."""
    for wide, k in (("float64", "f"), ("complex128", "c")):
        if any(kind(n) == k for n in names):
            return wide
    return names[0]


# ---------------------------------------------------------------- argument values

class Arg(NamedTuple):
    """One argument of a signature: its aval and the strategy for its values."""
    shape: tuple
    dtype: str
    weak: bool = False
    elements: Optional[st.SearchStrategy] = None   # Python scalars; None: default_elements
    unique: bool = False                           # distinct values (ties make kinks)
    values: Optional[st.SearchStrategy] = None     # whole NumPy arrays (e.g. well-conditioned
    #                                                matrices), instead of elementwise draws


class Signature(NamedTuple):
    """The static part of a sample: argument avals and the primitive's params."""
    args: tuple
    params: dict


class Sample(NamedTuple):
    """A signature with concrete NumPy values for its arguments."""
    sig: Signature
    values: tuple

    @property
    def params(self):
        return self.sig.params

    def to_refjax(self):
        """The values as refjax Arrays (with their weak types) on the current backend."""
        return tuple(refjax_array(v, a.weak) for v, a in zip(self.values, self.sig.args))

    def to_jax(self):
        """The values as real JAX arrays (with their weak types)."""
        return tuple(jax_array(v, a.weak) for v, a in zip(self.values, self.sig.args))


def refjax_array(value, weak=False):
    """A refjax Array holding the NumPy `value`, weakly typed if `weak`."""
    from refjax.backends.base import make_array
    from refjax.core.avals import ShapedArray
    value = np.asarray(value)
    return make_array(value, ShapedArray(value.shape, value.dtype, weak_type=weak))


def jax_array(value, weak=False):
    """A real JAX array holding the NumPy `value`, weakly typed if `weak`."""
    import jax
    import jax.numpy as jnp
    x = jnp.asarray(value)
    if weak:
        x = jax.lax.convert_element_type_p.bind(x, new_dtype=x.dtype, weak_type=True, sharding=None)
    return x


_SPECIAL_FLOATS = (0.0, -0.0, 1.0, -1.0, 0.5, -2.5, float("inf"), float("-inf"), float("nan"))


def floats(lo=-8.0, hi=8.0, name="float32"):
    """Finite normal floats in [lo, hi] representable in dtype `name` (no subnormals, which
    XLA flushes to zero)."""
    width = {"float16": 16, "float64": 64, "complex128": 64}.get(name, 32)
    store = {16: np.float16, 32: np.float32, 64: np.float64}[width]
    return st.floats(_inward(lo, hi, store), _inward(hi, lo, store), width=width,
                     allow_subnormal=False)


def _inward(bound, other, store):
    """`bound` rounded to the nearest value of type `store` on the side of `other`."""
    rounded = store(bound)
    if (rounded < bound and other > bound) or (rounded > bound and other < bound):
        rounded = np.nextafter(rounded, store(other))
    return float(rounded)


def default_elements(name):
    """Values of dtype `name`: mostly moderate, sometimes the extremes or special values."""
    k = kind(name)
    if k == "b":
        return st.booleans()
    if k in "iu":
        info = np.iinfo(name)
        return st.one_of(st.integers(max(info.min, -4), 6), st.integers(info.min, info.max))
    base = floats(name=name)
    values = st.one_of(base, base, base, st.sampled_from(_SPECIAL_FLOATS))
    if k == "c":
        return st.builds(complex, base, base)
    return values


def arrays(name, shape, elements=None, unique=False):
    """A NumPy array of dtype `name` and `shape` with values from `elements`."""
    elements = elements if elements is not None else default_elements(name)
    k = kind(name)
    store = {"bfloat16": "float32", "float16": "float32"}.get(name, name)
    if k == "c":
        store = name
    out = hnp.arrays(np.dtype(store), shape, elements=elements, unique=unique)
    return out.map(lambda a: a.astype(np_dtype(name)))


def arg_values(arg):
    """The strategy of an argument's values: its own `values`, else arrays of its elements."""
    if arg.values is not None:
        return arg.values
    return arrays(arg.dtype, arg.shape, arg.elements, arg.unique)


def draw_values(draw, sig):
    """Concrete values for every argument of the signature."""
    return tuple(draw(arg_values(a)) for a in sig.args)


# ---------------------------------------------------------------- shapes and weak types

_SIDES = st.sampled_from((1, 2, 3, 2, 1, 3, 0))


def shapes(min_rank=0, max_rank=3, min_side=0):
    """Small shapes; sides are 0 about one time in seven."""
    side = _SIDES if min_side == 0 else _SIDES.filter(lambda s: s >= min_side)
    return st.integers(min_rank, max_rank).flatmap(lambda r: st.tuples(*[side] * r))


def weak_flag(name):
    """Whether an argument of dtype `name` is weakly typed (sometimes, for Python-scalar types)."""
    return st.sampled_from((False, False, False, True)) if name in WEAKABLE else st.just(False)


# ---------------------------------------------------------------- tolerances

_FLOAT_TOL = {"float16": (2e-3, 2e-3), "bfloat16": (1.6e-2, 1.6e-2), "float32": (1e-5, 1e-6),
              "float64": (1e-9, 1e-12), "complex64": (1e-5, 1e-6), "complex128": (1e-9, 1e-12)}


def tolerance(name, overrides=None):
    """(rtol, atol) for results of dtype `name`; integers and booleans are exact."""
    if kind(name) not in "fc":
        return (0.0, 0.0)
    return (overrides or {}).get(name, _FLOAT_TOL[name])


def scaled_tolerance(factor):
    """The default float tolerances times `factor` (for less accurate operations)."""
    return {n: (r * factor, a * factor) for n, (r, a) in _FLOAT_TOL.items()}


# ---------------------------------------------------------------- invalid inputs

UNCHECKED = False   # Invalid.jax_error when the reference does not reject the case itself


class Invalid(NamedTuple):
    """Arguments (NumPy values) and params the primitive must reject with `error`; real JAX
    raises `jax_error` (by default the same class; UNCHECKED: not compared) on them."""
    what: str
    args: tuple
    params: dict
    error: type = TypeError
    jax_error: Optional[type] = None

    def jax_raises(self):
        """Whether real JAX must reject the case too."""
        return self.jax_error is not UNCHECKED


# ---------------------------------------------------------------- the spec entry

def described(text):
    """Label an args function (diff_args / linear_args) for PRIMITIVES.md."""
    def label(fn):
        fn.description = text
        return fn
    return label


@described("-")
def no_args(sig):
    return ()


@dataclass(frozen=True)
class PrimitiveSpec:
    """The executable specification of one primitive.

    `signature(dtype, diff)` returns a strategy of Signatures whose main operand has dtype
    `dtype`; with diff=True its values respect the derivative domain (away from poles, kinks
    and branch cuts, so that central differences are accurate). `reference(jax, *args,
    **params)` computes the expected result with real JAX. `diff_args(sig)` and
    `linear_args(sig)` name the arguments the primitive is differentiable, resp. has a
    transpose rule, in. Primitives without derivative declare `nondiff` = "zero" (zero or
    float0 tangents) or "raises" (`nondiff_error`, by default NotImplementedError, naming the
    primitive); those with forward- but no reverse-mode derivative declare reverse="raises"
    (ValueError), those with
    reverse- but no forward-mode derivative (custom_vjp) forward="raises" (TypeError).
    `jax_dtype_errors` maps a rejected dtype to what real JAX does with it where that is not
    a TypeError: the error class it raises later (OverflowError...) or UNCHECKED (it
    accepts the dtype; refjax rejects it to avoid a meaningless result)."""
    name: str
    dtypes: tuple
    signature: Callable
    reference: Callable
    apply: Optional[Callable] = None
    tol: dict = field(default_factory=dict)
    exact: bool = False
    diff_args: Callable = no_args
    nondiff: Optional[str] = None
    nondiff_error: type = NotImplementedError
    linear_args: Callable = no_args
    invalid: tuple = ()
    signed_zeros: bool = True
    reverse: str = "ok"
    forward: str = "ok"
    fd_tol: tuple = (1e-6, 1e-6)
    x64_dtypes: bool = True
    jax_dtype_errors: dict = field(default_factory=dict)
    family: str = ""
    notes: str = ""

    @property
    def primitive(self):
        """The registered refjax Primitive of this name."""
        from refjax.core.primitive import all_primitives
        return all_primitives()[self.name]

    def bind(self, *args, **params):
        """Apply the primitive (or the spec's wrapper of it) to refjax values."""
        if self.apply is not None:
            return self.apply(*args, **params)
        return self.primitive.bind(*args, **params)

    def available_dtypes(self, x64=False):
        """Accepted dtypes that exist in the current mode."""
        return with_x64(self.dtypes, x64 and self.x64_dtypes)

    def rejected_dtypes(self):
        """Candidate (32-bit) dtypes the primitive must reject with a TypeError."""
        return tuple(d for d in CANDIDATES if d not in self.dtypes)

    def jax_dtype_error(self, dtype_name):
        """What real JAX raises for a rejected dtype (TypeError unless `jax_dtype_errors` says
        otherwise; UNCHECKED where it accepts it)."""
        return self.jax_dtype_errors.get(dtype_name, TypeError)

    def tolerance(self, dtype_name):
        if self.exact:
            return (0.0, 0.0)
        return tolerance(dtype_name, self.tol)

    def samples(self, x64=False, dtypes=None):
        """A strategy of Samples over the accepted dtypes (or the given ones)."""
        return _samples(self, tuple(dtypes or self.available_dtypes(x64)), False)

    def diff_samples(self):
        """Float64 (or complex128) Samples in the derivative domain (draw and run them under
        x64)."""
        return _samples(self, (diff_dtype(self.dtypes),), True)

    def invalid_cases(self):
        """The Invalid cases (`invalid` may be a function building them lazily)."""
        return tuple(self.invalid() if callable(self.invalid) else self.invalid)


@st.composite
def _samples(draw, spec, dtypes, diff):
    dtype = draw(st.sampled_from(dtypes))
    sig = draw(spec.signature(dtype, diff))
    return Sample(sig, draw_values(draw, sig))


@described("all")
def all_args(sig):
    """Every argument (for diff_args / linear_args)."""
    return tuple(range(len(sig.args)))


def args_from(start):
    """Arguments start, start+1, ... (for diff_args / linear_args)."""
    return described(f"#{start} on")(lambda sig: tuple(range(start, len(sig.args))))


def args_at(*idx):
    """The given arguments (for diff_args / linear_args)."""
    return described(", ".join(f"#{i}" for i in idx))(
        lambda sig: tuple(i for i in idx if i < len(sig.args)))


@described("inexact args")
def float_args(sig):
    """The arguments of inexact dtype."""
    return tuple(i for i, a in enumerate(sig.args) if kind(a.dtype) in "fc")
