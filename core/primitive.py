"""Primitive: a named operation carrying its abstract-eval, JVP, transpose and batching rules."""
from . import trace as trace_mod


class Primitive:
    """An operation of the IR. Its rules sit next to it in core/primitives/<family>.py.

    Each Primitive instance gets its own Python subclass so that backends can register
    implementations per (backend class, primitive class) with multipledispatch.
    """

    def __new__(cls, name, *args, **kwargs):
        sub = type(f"{name}_p", (cls,), {"__module__": cls.__module__, "__slots__": ()})
        return object.__new__(sub)

    def __init__(self, name, multiple_results=False):
        self.name = name
        self.multiple_results = multiple_results
        self.abstract_eval = None   # (*avals, **params) -> aval or [avals]
        self.jvp = None             # (primals, tangents, **params) -> (out, out_tangent)
        self.transpose = None       # (cts, *args, **params) -> cts per arg (UndefinedPrimal args)
        self.batch = None           # (axis_data, vals, dims, **params) -> (out, out_dim)
        self.linearize = None       # higher-order primitives only: see transforms/linearize.py
        self.nondiff_reason = None  # set for primitives that have no derivative

    def __repr__(self):
        return self.name

    def __reduce__(self):
        return (_lookup, (self.name,))

    def bind(self, *args, **params):
        """Apply the primitive to args through the current trace."""
        return trace_mod.current_trace().process_primitive(self, args, params)

    def def_abstract_eval(self, rule):
        self.abstract_eval = rule
        return rule

    def def_jvp(self, rule):
        self.jvp = rule
        return rule

    def def_transpose(self, rule):
        self.transpose = rule
        return rule

    def def_batch(self, rule):
        self.batch = rule
        return rule

    def missing(self, rule):
        """The error raised when a rule of this primitive is absent."""
        return NotImplementedError(
            f"primitive '{self.name}' has no {rule} rule; it cannot be used under the "
            f"transformation that needs it.")


_REGISTRY = {}


def register(prim):
    if prim.name in _REGISTRY:
        raise ValueError(f"primitive {prim.name!r} defined twice")
    _REGISTRY[prim.name] = prim
    return prim


def _lookup(name):
    return _REGISTRY[name]


def all_primitives():
    """Every registered primitive, by name (the property tests iterate over this)."""
    return dict(_REGISTRY)


def make_primitive(name, multiple_results=False):
    return register(Primitive(name, multiple_results))
