"""Random programs: small DAGs of primitives over random inputs, run as Python functions."""
from typing import NamedTuple

import numpy as np
from hypothesis import note, strategies as st

from .base import Arg, arrays, floats, np_dtype, shapes


class Eqn(NamedTuple):
    """One step: primitive `prim` applied to earlier values (ints) or NumPy constants."""
    prim: str
    args: tuple
    params: dict


class Program(NamedTuple):
    """Inputs (shape, dtype), steps, and the indices of the values returned. Value i < len(inputs)
    is input i; value len(inputs) + k is the result of step k."""
    inputs: tuple
    eqns: tuple
    outs: tuple

    def in_args(self, elements=None):
        """The inputs as spec Args (for drawing values)."""
        return tuple(Arg(s, d, False, elements) for s, d in self.inputs)


# ---------------------------------------------------------------- the operations

_UNARY_SMOOTH = ("neg", "sin", "cos", "tanh", "logistic", "atan", "asinh", "square")
_UNARY_ROUGH = ("abs", "floor", "not", "sign")
_BINARY_SMOOTH = ("add", "sub", "mul")
_BINARY_ROUGH = ("max", "min", "and", "or")
_STRUCTURAL_SMOOTH = ("transpose", "rev", "reduce_sum", "broadcast_in_dim", "reshape", "slice",
                      "pad", "concatenate", "dot_general", "cumsum")
_STRUCTURAL_ROUGH = ("reduce_max", "cummax")


def _elementwise(draw, prim, values, a):
    return (a,), {}, values[a]


def _binary(draw, prim, values, a):
    partners = [i for i, s in enumerate(values) if s == values[a]]
    return (a, draw(st.sampled_from(partners))), {}, values[a]


@st.composite
def _subset(draw, n):
    perm = draw(st.permutations(range(n)))
    return tuple(sorted(perm[:draw(st.integers(0, n))]))


def _transpose(draw, prim, values, a):
    perm = tuple(draw(st.permutations(range(len(values[a])))))
    return (a,), {"permutation": perm}, tuple(values[a][p] for p in perm)


def _rev(draw, prim, values, a):
    return (a,), {"dimensions": draw(_subset(len(values[a])))}, values[a]


def _reduce(draw, prim, values, a):
    axes = draw(_subset(len(values[a])))
    params = {"axes": axes, "out_sharding": None} if prim == "reduce_sum" else {"axes": axes}
    return (a,), params, tuple(d for i, d in enumerate(values[a]) if i not in axes)


def _broadcast_in_dim(draw, prim, values, a):
    shape = values[a]
    size = draw(st.integers(1, 2))
    return (a,), {"shape": (size,) + shape, "sharding": None,
                  "broadcast_dimensions": tuple(range(1, len(shape) + 1))}, (size,) + shape


def _reshape(draw, prim, values, a):
    size = int(np.prod(values[a], dtype=np.int64))
    return (a,), {"new_sizes": (size,), "dimensions": None, "sharding": None}, (size,)


def _slice(draw, prim, values, a):
    starts, limits = [], []
    for d in values[a]:
        starts.append(draw(st.integers(0, d)))
        limits.append(draw(st.integers(starts[-1], d)))
    params = {"start_indices": tuple(starts), "limit_indices": tuple(limits), "strides": None}
    return (a,), params, tuple(lim - s for s, lim in zip(starts, limits))


def _pad(draw, prim, values, a, dtype):
    config = tuple((draw(st.integers(0, 1)), draw(st.integers(0, 1)), 0) for _ in values[a])
    out = tuple(d + lo + hi for d, (lo, hi, _) in zip(values[a], config))
    return (a, np.zeros((), np_dtype(dtype))), {"padding_config": config}, out


def _concatenate(draw, prim, values, a):
    if not values[a]:
        return None
    dim = draw(st.integers(0, len(values[a]) - 1))
    rest = values[a][:dim] + values[a][dim + 1:]
    partners = [i for i, s in enumerate(values)
                if len(s) == len(values[a]) and s[:dim] + s[dim + 1:] == rest]
    b = draw(st.sampled_from(partners))
    out = list(values[a])
    out[dim] += values[b][dim]
    return (a, b), {"dimension": dim}, tuple(out)


def _dot_general(draw, prim, values, a):
    partners = [i for i, s in enumerate(values) if s == values[a]]
    b = draw(st.sampled_from(partners))
    contract = draw(_subset(len(values[a])))
    free = tuple(d for i, d in enumerate(values[a]) if i not in contract)
    params = {"dimension_numbers": ((contract, contract), ((), ())), "precision": None,
              "preferred_element_type": None, "out_sharding": None}
    return (a, b), params, free + free


def _cumulative(draw, prim, values, a):
    if not values[a]:
        return None
    axis = draw(st.integers(0, len(values[a]) - 1))
    return (a,), {"axis": axis, "reverse": draw(st.booleans())}, values[a]


_BUILDERS = {"transpose": _transpose, "rev": _rev, "reduce_sum": _reduce, "reduce_max": _reduce,
             "broadcast_in_dim": _broadcast_in_dim, "reshape": _reshape, "slice": _slice,
             "concatenate": _concatenate, "dot_general": _dot_general, "cumsum": _cumulative,
             "cummax": _cumulative}
for _name in _BINARY_SMOOTH + _BINARY_ROUGH:
    _BUILDERS[_name] = _binary


def _accepts(name, dtype):
    """Whether the primitive takes `dtype` values to `dtype` values (abs of complex does not)."""
    from .primitives import SPECS
    return name in SPECS and dtype in SPECS[name].dtypes and not (
        name == "abs" and dtype.startswith("complex"))


def _ops(dtype, smooth):
    """Primitives a program of `dtype` values may use: those whose spec accepts the dtype."""
    names = _UNARY_SMOOTH + _BINARY_SMOOTH + _STRUCTURAL_SMOOTH
    if not smooth:
        names += _UNARY_ROUGH + _BINARY_ROUGH + _STRUCTURAL_ROUGH
    return tuple(n for n in names if _accepts(n, dtype))


def unary_ops(dtype, smooth=False):
    """Unary elementwise primitives applicable to `dtype` values (smooth ones only if asked)."""
    names = _UNARY_SMOOTH + (() if smooth else _UNARY_ROUGH)
    return tuple(n for n in names if _accepts(n, dtype))


def _step(draw, prim, values, a, dtype):
    if prim == "pad":
        return _pad(draw, prim, values, a, dtype)
    return _BUILDERS.get(prim, _elementwise)(draw, prim, values, a)


# ---------------------------------------------------------------- the strategy

@st.composite
def programs(draw, dtype="float32", smooth=False, max_inputs=3, max_eqns=6, max_outs=2):
    """A random Program over `dtype` values; smooth=True uses only differentiable primitives."""
    ops = _ops(dtype, smooth)
    n_in = draw(st.integers(1, max_inputs))
    inputs = tuple((draw(shapes(max_rank=2)), dtype) for _ in range(n_in))
    values, eqns = [s for s, _ in inputs], []
    for _ in range(draw(st.integers(1, max_eqns)) if ops else 0):
        prim = draw(st.sampled_from(ops))
        # Counting back from the newest value: programs shrink towards chains.
        a = len(values) - 1 - draw(st.integers(0, len(values) - 1))
        step = _step(draw, prim, values, a, dtype)
        if step is not None:
            args, params, out = step
            eqns.append(Eqn(prim, args, params))
            values.append(tuple(out))
    extra = draw(st.lists(st.integers(0, len(values) - 1), max_size=max_outs - 1))
    return Program(inputs, tuple(eqns), tuple(sorted({len(values) - 1, *extra})))


@st.composite
def program_inputs(draw, program, elements=None):
    """Values for the program's inputs (smooth moderate floats when `elements` says so)."""
    return tuple(draw(arrays(d, s, elements)) for s, d in program.inputs)


def smooth_elements(dtype="float64"):
    """Input values for derivative tests of programs."""
    return floats(-2.0, 2.0, dtype)


# ---------------------------------------------------------------- running and printing

def _run(program, apply, inputs):
    env = list(inputs)
    for eqn in program.eqns:
        args = [env[a] if isinstance(a, int) else a for a in eqn.args]
        env.append(apply(eqn.prim, args, eqn.params))
    return [env[i] for i in program.outs]


def _bind(prim, args, params):
    from .primitives import SPECS
    out = SPECS[prim].bind(*args, **params)
    return out


def program_fn(program):
    """The program as a Python function of its inputs returning a list of outputs, binding
    refjax primitives (so it can be jitted, differentiated and vmapped)."""
    def fn(*inputs):
        return _run(program, _bind, inputs)
    fn.__name__ = "program"
    return fn


def program_reference(program, inputs):
    """The program's outputs computed with real JAX (each step by its spec's reference)."""
    import jax
    from .primitives import SPECS

    def apply(prim, args, params):
        return SPECS[prim].reference(jax, *args, **params)
    return _run(program, apply, inputs)


def program_jaxpr(program):
    """The program staged by refjax.make_jaxpr: the ClosedJaxpr of its computation."""
    import refjax
    from refjax.core.avals import ShapeDtypeStruct
    specs = [ShapeDtypeStruct(s, np_dtype(d)) for s, d in program.inputs]
    return refjax.make_jaxpr(program_fn(program))(*specs)


def note_program(program):
    """Record the program as a jaxpr in hypothesis' failure report."""
    try:
        text = str(program_jaxpr(program))
    except Exception as e:  # noqa: BLE001 - the report must show *something*
        text = f"{program!r}\n(could not stage it: {type(e).__name__}: {e})"
    note(f"program:\n{text}")
    return text
