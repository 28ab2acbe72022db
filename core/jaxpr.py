"""The jaxpr IR: Var, Literal, JaxprEqn, Jaxpr, ClosedJaxpr; printer, typecheck, eval_jaxpr."""
from typing import Any, NamedTuple

import numpy as np

from . import avals as avals_mod
from . import dtypes, runtime


class Var:
    """A variable of a jaxpr; identity is the object itself, names are given when printing."""

    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self):
        return f"Var({self.aval.str_short()})"


class Literal:
    """A scalar constant written inline in a jaxpr, like `2.0:f32[]`."""

    __slots__ = ("val", "aval")

    def __init__(self, val, aval):
        self.val = val
        self.aval = aval

    def __repr__(self):
        return f"{_format_scalar(self.val)}:{self.aval.str_short()}"


class DropVar(Var):
    """An unused output (printed `_`)."""


class JaxprEqn(NamedTuple):
    primitive: Any
    invars: list
    outvars: list
    params: dict


class Jaxpr(NamedTuple):
    constvars: list
    invars: list
    outvars: list
    eqns: list

    def __str__(self):
        return pp_jaxpr(self)

    in_avals = property(lambda self: [v.aval for v in self.invars])
    out_avals = property(lambda self: [v.aval for v in self.outvars])

    def pretty_print(self, **_):
        return str(self)


class ClosedJaxpr:
    """A jaxpr with the values of its constvars."""

    __slots__ = ("jaxpr", "consts", "_hash", "__weakref__")  # backends key caches weakly

    def __init__(self, jaxpr, consts):
        self.jaxpr = jaxpr
        self.consts = list(consts)
        self._hash = None

    in_avals = property(lambda self: self.jaxpr.in_avals)
    out_avals = property(lambda self: self.jaxpr.out_avals)
    eqns = property(lambda self: self.jaxpr.eqns)

    def __str__(self):
        return pp_jaxpr(self.jaxpr)

    __repr__ = __str__

    # Identity semantics: jaxprs are cache keys (by the object), never compared structurally.
    def __hash__(self):
        return id(self)

    def __eq__(self, other):
        return self is other


# ---------------------------------------------------------------- printing

def _encode_name(n):
    s = ""
    while True:
        s = chr(ord("a") + n % 26) + s
        n //= 26
        if n == 0:
            return s


def _format_scalar(val):
    val = np.asarray(val)
    if val.dtype == np.bool_:
        return str(bool(val))
    if val.dtype.kind in "iu":
        return str(int(val))
    if val.dtype.kind == "c":
        return str(complex(val))
    return repr(float(val))


class _Namer:
    def __init__(self):
        self.names = {}

    def __call__(self, v):
        if isinstance(v, Literal):
            return repr(v)
        if isinstance(v, DropVar):
            return "_"
        if v not in self.names:
            self.names[v] = _encode_name(len(self.names))
        return self.names[v]

    def binder(self, v):
        return f"{self(v)}:{v.aval.str_short()}"


def _format_param(value, namer, indent):
    if isinstance(value, ClosedJaxpr):
        value = value.jaxpr
    if isinstance(value, Jaxpr):
        return _pp(value, namer, indent + 2)
    if isinstance(value, (tuple, list)) and value and all(isinstance(v, (Jaxpr, ClosedJaxpr)) for v in value):
        inner = [_pp(v.jaxpr if isinstance(v, ClosedJaxpr) else v, namer, indent + 4) for v in value]
        return "(\n" + "".join(" " * (indent + 4) + s + "\n" for s in inner) + " " * (indent + 2) + ")"
    if isinstance(value, np.dtype):
        return value.name
    if isinstance(value, type) and issubclass(value, np.generic):
        return np.dtype(value).name
    if callable(value) and hasattr(value, "__name__"):
        return value.__name__
    return str(value)


def _pp_eqn(eqn, namer, indent):
    lhs = " ".join(namer.binder(v) for v in eqn.outvars)
    args = " ".join(namer(v) for v in eqn.invars)
    name = eqn.primitive.name
    params = [(k, _format_param(v, namer, indent)) for k, v in eqn.params.items()]
    one_line = f"{lhs} = {name}" + (f"[{' '.join(f'{k}={v}' for k, v in params)}]" if params else "")
    one_line += f" {args}" if args else ""
    if len(one_line) + indent <= 80 and "\n" not in one_line:
        return one_line
    pad = " " * (indent + 2)
    body = "".join(f"{pad}{k}={v}\n" for k, v in params)
    return f"{lhs} = {name}[\n{body}{' ' * indent}]" + (f" {args}" if args else "")


def _pp(jaxpr, namer, indent):
    consts = " ".join(namer.binder(v) for v in jaxpr.constvars)
    ins = " ".join(namer.binder(v) for v in jaxpr.invars)
    head = f"{{ lambda {consts}{'; ' if consts else ''}; {ins}. let".replace("; ;", ";")
    if not consts:
        head = f"{{ lambda ; {ins}. let"
    lines = [head] + [" " * (indent + 4) + _pp_eqn(e, namer, indent + 4) for e in jaxpr.eqns]
    outs = ", ".join(namer(v) for v in jaxpr.outvars)
    trailing = "," if len(jaxpr.outvars) == 1 else ""
    lines.append(" " * (indent + 2) + f"in ({outs}{trailing}) }}")
    return "\n".join(lines)


def pp_jaxpr(jaxpr):
    """Print a jaxpr in JAX's format."""
    return _pp(jaxpr, _Namer(), 0)


# ---------------------------------------------------------------- typecheck

class JaxprTypeError(TypeError):
    """An ill-typed jaxpr: a bug in a rule or a transformation, reported with the jaxpr."""


def typecheck_jaxpr(jaxpr):
    """Check that every var is bound once before use and every eqn's output types follow from
    its primitive's abstract eval. Raises JaxprTypeError naming the equation."""
    env = set(jaxpr.constvars) | set(jaxpr.invars)
    if len(env) != len(jaxpr.constvars) + len(jaxpr.invars):
        raise JaxprTypeError("a jaxpr binds an input variable twice")
    for eqn in jaxpr.eqns:
        for v in eqn.invars:
            if not isinstance(v, Literal) and v not in env:
                raise JaxprTypeError(f"variable {v} used before it is defined in {eqn.primitive}")
        out_avals = eqn.primitive.abstract_eval(*(v.aval for v in eqn.invars), **eqn.params)
        if not eqn.primitive.multiple_results:
            out_avals = [out_avals]
        for v, aval in zip(eqn.outvars, out_avals):
            if not avals_mod.same_type(v.aval, aval):
                raise JaxprTypeError(f"{eqn.primitive}: output typed {v.aval.str_short()} but "
                                     f"its rule gives {aval.str_short()}")
            env.add(v)
    for v in jaxpr.outvars:
        if not isinstance(v, Literal) and v not in env:
            raise JaxprTypeError(f"jaxpr output {v} is never defined")


# ---------------------------------------------------------------- evaluation

def bind_eqn(eqn, ins):
    """Bind one equation on the current trace; returns the list of its outputs."""
    outs = eqn.primitive.bind(*ins, **eqn.params)
    return outs if eqn.primitive.multiple_results else [outs]


def eval_jaxpr(jaxpr, consts, *args, read_literal=None, apply=bind_eqn, drops=None):
    """Interpret a jaxpr: the one interpreter of refjax. Each equation goes to
    `apply(eqn, input values) -> output values` (by default it is bound on the current trace,
    so evaluating a jaxpr under a transformation transforms it); literals are read with
    `read_literal` (by default `literal_value`: weak scalars as Python scalars). Each value is
    dropped after its last use, so a long program holds only its live values (`drops`, the
    result of `last_uses(jaxpr)`, saves recomputing them for a jaxpr run many times)."""
    read_literal = read_literal or literal_value
    env = dict(zip(jaxpr.constvars, consts))
    env.update(zip(jaxpr.invars, args))
    del consts, args

    def read(v):
        return read_literal(v) if type(v) is Literal else env[v]

    for eqn, dead in zip(jaxpr.eqns, drops or last_uses(jaxpr)):
        ins = [read(v) for v in eqn.invars]
        for v in dead:  # inputs read for the last time: `ins` alone holds them now, so
            env.pop(v, None)  # `apply` may reuse their memory (see numpy_ref's donors)
        env.update(zip(eqn.outvars, apply(eqn, ins)))
        del ins
        for v in dead:  # outputs nothing reads
            env.pop(v, None)
    return [read(v) for v in jaxpr.outvars]


def last_uses(jaxpr):
    """Per equation, the variables no later equation (nor the outputs) reads: those it may
    drop once it has run (its inputs whose last use it is, and its unused outputs)."""
    live = {v for v in jaxpr.outvars if type(v) is not Literal}
    dead_after = []
    for eqn in reversed(jaxpr.eqns):
        dead = [v for v in eqn.outvars if v not in live]
        for v in eqn.invars:
            if type(v) is not Literal and v not in live:
                live.add(v)
                dead.append(v)
        dead_after.append(dead)
    dead_after.reverse()
    return dead_after


def literal_array(lit):
    """A literal as an Array of its exact (weak) type: for rules that need a shape (batching)."""
    return runtime.make_array(lit.val, lit.aval)


def literal_value(lit):
    """The value a Literal stands for when bound again: weak scalars stay Python scalars."""
    aval = lit.aval
    if aval.weak_type and type(lit.val.item()) in _WEAK_PY and aval.dtype == _default_of(lit.val):
        return lit.val.item()
    return lit.val


_WEAK_PY = (int, float, complex)


def _default_of(val):
    return dtypes.python_scalar_dtype(val.item())


def subjaxprs(params):
    """The Jaxprs among an equation's param values (ClosedJaxprs unwrapped, sequences
    searched)."""
    for p in params:
        if isinstance(p, Jaxpr):  # before tuple: a Jaxpr is a NamedTuple
            yield p
        elif isinstance(p, ClosedJaxpr):
            yield p.jaxpr
        elif isinstance(p, (list, tuple)):
            yield from subjaxprs(p)


def jaxpr_as_fun(closed, read_literal=None):
    """A function evaluating the closed jaxpr on the current trace."""
    return lambda *args: eval_jaxpr(closed.jaxpr, closed.consts, *args,
                                    read_literal=read_literal)


def with_binders(closed, invars=None, outvars=None):
    """closed with other input and/or output variables (typechecked)."""
    j = closed.jaxpr
    new = Jaxpr(j.constvars, list(j.invars if invars is None else invars),
                list(j.outvars if outvars is None else outvars), j.eqns)
    typecheck_jaxpr(new)
    return ClosedJaxpr(new, closed.consts)
