"""The jaxpr IR: Var, Literal, JaxprEqn, Jaxpr, ClosedJaxpr; printer, typecheck, eval_jaxpr."""
import re
from collections import Counter, deque
from typing import Any, NamedTuple

import numpy as np

from . import avals as avals_mod
from . import dtypes, runtime, source_info
from . import pretty_print as pp
from .config import config
from .errors import JaxprTypeError


class Var:
    """A variable of a jaxpr; identity is the object itself, names are given when printing."""

    __slots__ = ("aval", "__weakref__")  # weakly marked: jit's out_shardings outputs

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self):
        return f"Var({self.aval.str_short()})"


class Literal:
    """A scalar constant written inline in a jaxpr, like `2.0:f32[]`."""

    __slots__ = ("val", "aval", "text")

    def __init__(self, val, aval, text=None):
        self.val = val
        self.aval = aval
        self.text = text  # a Python scalar's own digits (JAX prints the scalar it keeps)

    def __repr__(self):
        return pp_literal(self)


class DropVar(Var):
    """An unused output (printed `_`)."""


class JaxprEqn(NamedTuple):
    primitive: Any
    invars: list
    outvars: list
    params: dict
    source_info: Any = None  # the user's line that bound it (core/source_info.py)


class Jaxpr(NamedTuple):
    constvars: list
    invars: list
    outvars: list
    eqns: list

    def __str__(self):
        return pp_jaxpr_text(self)

    __repr__ = __str__

    in_avals = property(lambda self: [v.aval for v in self.invars])
    out_avals = property(lambda self: [v.aval for v in self.outvars])

    def pretty_print(self, *, width=80, use_color=None):
        """The jaxpr as JAX prints it, laid out for `width` columns."""
        return pp_jaxpr_text(self, width, use_color)


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
    literals = property(lambda self: self.consts)  # JAX's other name for the consts

    def __str__(self):
        return pp_jaxpr_text(self.jaxpr)

    __repr__ = __str__

    def pretty_print(self, *, width=80, use_color=None):
        """The jaxpr as JAX prints it, laid out for `width` columns."""
        return pp_jaxpr_text(self.jaxpr, width, use_color)

    # Identity semantics: jaxprs are cache keys (by the object), never compared structurally.
    def __hash__(self):
        return id(self)

    def __eq__(self, other):
        return self is other


# ---------------------------------------------------------------- printing
#
# JAX's text for jaxprs, as documents for core/pretty_print.py. Names are given while the
# document is built, in JAX's order: an equation's binders, then its params (inner jaxprs),
# then its operands. A primitive's `pp` rule chooses which params print, in which order.

def _encode_name(n):
    s = ""
    while True:
        n, i = divmod(n, 26)
        s = chr(ord("a") + i) + s
        if n == 0:
            return s


class PpContext:
    """Names while printing one top-level jaxpr: variables (unused outputs of the top level
    are `_`), and jaxprs used more than once, printed first as `let name = ... in`."""

    def __init__(self, var_names=()):
        self.var_names = dict(var_names)
        self.shared_jaxprs = {}  # id(jaxpr) -> its name
        self.shared_names = set()
        self._next = 0

    def name(self, v):
        """The name of a variable, giving it the next free one on first sight."""
        if isinstance(v, DropVar):
            return "_"
        if v not in self.var_names:
            self.var_names[v] = self._fresh()
        return self.var_names[v]

    def _fresh(self):
        while True:
            name, self._next = _encode_name(self._next), self._next + 1
            if name not in self.shared_names:
                return name

    def type_of(self, v):
        """`f32[3]` for v (with the axes it varies over inside shard_map, as JAX)."""
        return pp_aval(v.aval)

    def suggest_same_var_names(self, for_vars, like_vars):
        """Name the binders `for_vars` of an inner jaxpr as the `like_vars` they stand for at
        the call site (each name once), as JAX does for jit."""
        if len(for_vars) != len(like_vars):
            return
        used = set()
        for for_v, like_v in zip(for_vars, like_vars):
            if (type(like_v) is not Literal and like_v not in used
                    and type(for_v) is not Literal and for_v not in self.var_names):
                used.add(like_v)
                self.var_names[for_v] = self.name(like_v)


def pp_literal(lit):
    """`2.0:f32[]`: the value as Python prints its item, then the type."""
    val = np.asarray(lit.val)
    text = lit.text if lit.text is not None else val.item() if val.ndim == 0 else "[...]"
    return f"{text}:{pp_aval(lit.aval)}"


def pp_aval(aval):
    """`f32[3,4]`, with the varying manual axes as `{V:x}` or `{V:(x,y)}`."""
    return aval.str_short()


def _pp_var(v, context):
    return pp.text(pp_literal(v) if type(v) is Literal else context.name(v))


def pp_vars(vs, context, separator="", print_shapes=False):
    """Variables separated by `separator` and a break, with their types for binders."""
    docs = [_pp_var(v, context) + (pp.type_annotation(pp.text(":" + context.type_of(v)))
                                   if print_shapes else pp.nil()) for v in vs]
    return pp.nest(2, pp.group(pp.join(pp.text(separator) + pp.group(pp.brk()), docs)))


_ADDRESS = re.compile(r" at 0x([0-9a-fA-F]+)")


def pp_param_value(v, context):
    """A param's value: jaxprs as jaxprs, frozensets sorted, anything else as str() (with
    object addresses masked, so that printing is deterministic)."""
    if type(v) is tuple and all(isinstance(j, (Jaxpr, ClosedJaxpr)) for j in v):
        return pp_jaxprs(v, context)
    if isinstance(v, (Jaxpr, ClosedJaxpr)):
        return pp_jaxpr(_open(v), context)
    if isinstance(v, frozenset):
        return pp.text(f"frozenset({{{', '.join(repr(e) for e in sorted(v))}}})")
    return pp.text(_ADDRESS.sub(lambda m: " at 0x" + "X" * len(m.group(1)), str(v)))


def _pp_kv_pairs(pairs, context):
    if not pairs:
        return pp.nil()
    items = pp.join(pp.brk(), [pp.text(f"{k}=") + pp_param_value(v, context) for k, v in pairs])
    return pp.group(pp.nest(2, pp.concat([pp.text("["), pp.brk(""), items]))
                    + pp.brk("") + pp.text("]"))


def eqn_params(eqn, context):
    """The (name, value) params an equation prints, in order: its primitive's `pp` rule, or
    every param sorted by name."""
    rule = eqn.primitive.pp
    return rule(eqn, context) if rule else sorted(eqn.params.items())


# primitive -> rule(eqn, context) -> str: equations printed in a syntax of their own (the
# reference primitives' `r[i] <- v`), as JAX's pp_eqn_rules.
pp_eqn_rules = {}
# primitive -> rule(eqn) -> the name it prints under (JAX's name for this use of it), or None
pp_name_rules = {}


def pp_eqn(eqn, context):
    """`outs:types = name[params] operands` (effects without outputs print no binders)."""
    rule = pp_eqn_rules.get(eqn.primitive)
    if rule is not None:
        return pp.text(rule(eqn, context))
    params = eqn_params(eqn, context)
    lhs = pp_vars(eqn.outvars, context, print_shapes=True)
    name = pp_name_rules.get(eqn.primitive, lambda e: None)(eqn) or eqn.primitive.name
    rhs = [pp.text(name), _pp_kv_pairs(params, context),
           pp.text(" ") + pp_vars(eqn.invars, context)]
    return pp.concat([lhs, pp.text(" = "), *rhs] if eqn.outvars else rhs)


def _pp_skeleton(jaxpr, context):
    constvars = pp_vars(jaxpr.constvars, context, print_shapes=True)
    invars = pp_vars(jaxpr.invars, context, print_shapes=True)
    eqns = pp.join(pp.brk("; "), [pp_eqn(e, context) for e in jaxpr.eqns])
    outvars = pp.concat([pp.text("("), pp_vars(jaxpr.outvars, context, separator=","),
                         pp.text(",)" if len(jaxpr.outvars) == 1 else ")")])
    return pp.group(pp.nest(2, pp.concat([
        pp.text("{ "), pp.keyword(pp.text("lambda ")), constvars, pp.text("; "), invars,
        pp.text(". "), pp.keyword(pp.text("let")), pp.nest(2, pp.brk() + eqns), pp.brk(),
        pp.keyword(pp.text("in ")), outvars])) + pp.text(" }"))


def pp_jaxpr(jaxpr, context):
    """A jaxpr, or the name it is shared under."""
    name = context.shared_jaxprs.get(id(jaxpr))
    return pp.text(name) if name else _pp_skeleton(jaxpr, context)


def pp_jaxprs(jaxprs, context):
    """A tuple of jaxprs (cond's branches), one per line when they do not fit on one."""
    docs = [pp_jaxpr(_open(j), context) for j in jaxprs]
    return pp.group(pp.nest(2, pp.concat([pp.text("("), pp.brk(""), pp.join(pp.brk(), docs)]))
                    + pp.brk("") + pp.text(")"))


def _open(j):
    return j.jaxpr if isinstance(j, ClosedJaxpr) else j


def pp_hiding(*names, **defaults):
    """A `pp` rule printing the params sorted by name but for `names` (JAX hides what the
    binder's type already says) and those equal to their value in `defaults`."""
    def rule(eqn, context):
        return [(k, v) for k, v in sorted(eqn.params.items())
                if k not in names and not (k in defaults and _same(v, defaults[k]))]
    return rule


def _same(value, default):
    return type(value) is type(default) and value == default


def pp_call(eqn, context):
    """The `pp` rule of call-like primitives with a `name` (jit): name first, then the other
    params sorted; the inner jaxpr's binders take the names of the call's operands and
    results."""
    inner = _open(eqn.primitive.call_jaxpr(eqn.params))
    if id(inner) not in context.shared_jaxprs:
        context.suggest_same_var_names(inner.invars, eqn.invars)
        context.suggest_same_var_names(inner.outvars, eqn.outvars)
    rest = sorted((k, v) for k, v in eqn.params.items() if k != "name")
    return [("name", eqn.params["name"])] + rest


def _dropvars(jaxpr):
    """The outputs of equations nothing reads, named `_`."""
    names, used = {}, {v for v in jaxpr.outvars if type(v) is not Literal}
    for eqn in reversed(jaxpr.eqns):
        names.update((v, "_") for v in eqn.outvars if v not in used)
        used.update(v for v in eqn.invars if type(v) is not Literal)
    return names


def _jaxprs_in_params(params):
    for val in params.values():
        for v in (val if type(val) is tuple else (val,)):
            if isinstance(v, (Jaxpr, ClosedJaxpr)):
                yield _open(v)


def _count_jaxprs(top):
    """How often each jaxpr is printed (long inner ones count twice, so that they are pulled
    to the top as JAX does), and the name each one would be shared under."""
    counts, names, queue = {}, {}, deque([top])
    while queue:
        jaxpr = queue.popleft()
        seen = counts.setdefault(id(jaxpr), [jaxpr, 0])
        seen[1] += 1 + (jaxpr is not top and len(jaxpr.eqns) > 10)
        for eqn in jaxpr.eqns:
            name = eqn.params.get("name")
            for sub in _jaxprs_in_params(eqn.params):
                queue.append(sub)
                if name is not None:
                    names.setdefault(id(sub), str(name).strip("<>"))
    return counts, names


def pp_toplevel_jaxpr(top):
    """The document of a jaxpr as JAX prints it: shared jaxprs first, then the jaxpr."""
    context = PpContext(_dropvars(top))
    counts, names = _count_jaxprs(top)
    name_counts, shared = Counter(), []
    for key, (jaxpr, count) in counts.items():
        if count == 1:
            continue
        name = names.get(key, "jaxpr")
        if name_counts[name] > 0:
            name_counts[name] += 1
            name += str(name_counts[name] - 1)
        name_counts[name] += 1
        context.shared_names.add(name)
        context.shared_jaxprs[key] = name
        shared.append((name, jaxpr))
    docs = [pp.concat([pp.text(f"let {name} = "), _pp_skeleton(jaxpr, context), pp.text(" in"),
                       pp.brk()]) for name, jaxpr in shared]
    return pp.concat(docs + [pp_jaxpr(top, context)])


def pp_jaxpr_text(jaxpr, width=80, use_color=None):
    """A jaxpr printed in JAX's format; colored (ANSI) when `use_color`, by default where JAX
    colors it (a notebook or a terminal, unless jax_pprint_use_color is off)."""
    if use_color is None:
        use_color = pp.CAN_USE_COLOR and config.read("jax_pprint_use_color")
    return pp_toplevel_jaxpr(jaxpr).format(width, use_color=use_color)


# ---------------------------------------------------------------- typecheck

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
        if eqn.primitive.impl is not None:  # defined outside refjax: its abstract eval is
            env.update(eqn.outvars)         # the user's code, run once when staged (as JAX)
            continue
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
    """Bind one equation on the current trace (keeping its source); returns the list of its
    outputs."""
    if eqn.source_info is None:
        outs = eqn.primitive.bind(*ins, **eqn.params)
    else:
        previous = source_info.set_rebinding(eqn.source_info)
        try:
            outs = eqn.primitive.bind(*ins, **eqn.params)
        finally:
            source_info.restore(previous)
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
