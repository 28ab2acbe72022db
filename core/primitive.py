"""Primitive: a named operation carrying every rule it has (abstract eval, JVP, transpose,
batching, linearize, partial eval, sharding propagation, varying manual axes)."""
import os
import sys

from . import trace as trace_mod

# The rules a primitive may carry, with the signature each one has. Every rule of a primitive
# is set beside the primitive (in core/primitives/<family>.py, or the transformation module
# that defines a call-like primitive) with `prim.def_<rule>(fn)`.
RULES = {
    "abstract_eval": "(*avals, **params) -> aval, or [avals] for multiple results",
    "jvp": "(primals, tangents, **params) -> (out, out_tangent); tangents may be Zero",
    "transpose": "(cts, *args, **params) -> [ct or None per arg]; linear args are "
                 "UndefinedPrimal",
    "batch": "(axis_data, vals, dims, **params) -> (out, out_dim); None dims are unmapped",
    "linearize": "like jvp, for higher-order primitives under linearize: primal work runs "
                 "once, the tangent part is staged (transforms/linearize.py)",
    "partial_eval": "(eqn, unknowns_in) -> (known eqns, unknown eqns, out_unknowns): how an "
                    "equation splits when some inputs are unknown (transforms/partial_eval.py)",
    "sharding": "(in_specs, in_avals, out_avals, **params) -> [spec per output]; absent: "
                "outputs replicated (sharding_propagation.py)",
    "vma": "(eqn, in_vmas, strict) -> [vma per output]: the mesh axes each output varies "
           "over inside shard_map; absent: the union of the inputs' (vma.py)",
    "pp": "(eqn, context) -> [(param, value), ...]: the params a printed jaxpr shows, in "
          "order (JAX hides some and reorders others); absent: every param sorted by name "
          "(jaxpr.py)",
    "key_reuse": "(avals, keys, **params) -> key_reuse.Signature: the operands it consumes, "
                 "the outputs that are fresh keys or pass an operand on, under "
                 "jax_debug_key_reuse; `keys` says which operands are keys; absent: it "
                 "consumes its key operands (key_reuse.py)",
}


def named(fn, name, doc=None):
    """fn (made by a factory) called `name` everywhere Python shows it, including its own
    TypeErrors about arguments (`cos() takes 1 positional argument`, not
    `_unary.<locals>.fn()`, which Python takes from the code object)."""
    fn.__name__ = fn.__qualname__ = name
    code = fn.__code__.replace(co_name=name)
    if hasattr(code, "co_qualname"):  # Python 3.11+
        code = code.replace(co_qualname=name)
    fn.__code__ = code
    if doc is not None:
        fn.__doc__ = doc
    return fn


class Primitive:
    """An operation of the IR, with all of its rules as attributes (None where it has none).

    Each Primitive instance gets its own Python subclass so that backends can register
    implementations per (backend class, primitive class) with multipledispatch.

    Besides the RULES above, a primitive declares:
      call_param     call-like primitives (jit, custom_jvp_call, custom_vjp_call): the name of
                     the param holding the ClosedJaxpr applied to their operands;
      layout_param   primitives whose params set their outputs' layout whatever their
                     operands': the param holding it (a Sharding for sharding_constraint, a
                     Mesh for shard_map, whose sharding rule places outputs on it);
      uses_axis_env  collectives: their batching rule runs even on unbatched operands, since
                     their value depends on the named axis;
      nondiff_reason why the primitive has no derivative (shown in the error), if it has none.
    Primitives defined outside refjax (`jax.extend.core.Primitive(name)`, not registered)
    also carry JAX's eager rule `impl` (`def_impl`; bind outside transformations calls it and
    returns what it returns, as JAX) and `lowering` (set by refjax.interpreters.mlir: what a
    backend runs for them under jit). Registered primitives evaluate on backends (impl None).
    `rule_sites` records where each rule was set (file:line), for spec/PRIMITIVES.md."""

    def __new__(cls, name, *args, **kwargs):
        sub = type(f"{name}_p", (cls,), {"__module__": cls.__module__, "__slots__": ()})
        return object.__new__(sub)

    def __init__(self, name, multiple_results=False):
        self.name = name
        self.multiple_results = multiple_results
        for rule in RULES:
            setattr(self, rule, None)
        self.call_param = None
        self.layout_param = None
        self.uses_axis_env = False
        self.nondiff_reason = None
        self.rule_sites = {}
        self.impl = self._no_impl  # register() clears it: backends evaluate refjax's own
        self.lowering = None

    def _no_impl(self, *args, **params):
        raise NotImplementedError(f"Evaluation rule for '{self.name}' not implemented")

    def def_impl(self, impl):
        """JAX's eager rule: bind outside any transformation returns impl(*args, **params)."""
        self.impl = impl
        return impl

    def __repr__(self):
        return self.name

    def __reduce__(self):
        return (_lookup, (self.name,))

    def bind(self, *args, **params):
        """Apply the primitive to args through the current trace."""
        return trace_mod.current_trace().process_primitive(self, args, params)

    def set_rule(self, rule, fn):
        """Set one of RULES (recording where it was set); returns fn, to use as a decorator."""
        if rule not in RULES:
            raise ValueError(f"unknown rule {rule!r}; primitives have {tuple(RULES)}")
        setattr(self, rule, fn)
        self.rule_sites[rule] = source_site()
        return fn

    def def_abstract_eval(self, rule):
        return self.set_rule("abstract_eval", rule)

    def def_jvp(self, rule):
        return self.set_rule("jvp", rule)

    def def_transpose(self, rule):
        return self.set_rule("transpose", rule)

    def def_batch(self, rule):
        return self.set_rule("batch", rule)

    def def_linearize(self, rule):
        return self.set_rule("linearize", rule)

    def def_partial_eval(self, rule):
        return self.set_rule("partial_eval", rule)

    def def_sharding(self, rule):
        return self.set_rule("sharding", rule)

    def def_vma(self, rule):
        return self.set_rule("vma", rule)

    def def_pp(self, rule):
        return self.set_rule("pp", rule)

    def def_key_reuse(self, rule):
        return self.set_rule("key_reuse", rule)

    def def_call(self, param):
        """Declare a call-like primitive whose `param` holds the ClosedJaxpr it applies."""
        self.call_param = param
        self.rule_sites["call"] = source_site()

    def def_layout(self, param):
        """Declare that the param `param` (a Sharding or a Mesh) sets the outputs' layout."""
        self.layout_param = param
        self.rule_sites["layout"] = source_site()

    def def_uses_axis_env(self):
        self.uses_axis_env = True
        self.rule_sites["uses_axis_env"] = source_site()

    def call_jaxpr(self, params):
        """The ClosedJaxpr a call-like primitive applies (None for other primitives)."""
        return None if self.call_param is None else params[self.call_param]

    def missing(self, rule):
        """The error raised when a rule of this primitive is absent."""
        return NotImplementedError(
            f"primitive '{self.name}' has no {rule} rule; it cannot be used under the "
            f"transformation that needs it.")


def source_site(depth=2):
    """"path:line" of the module-level statement running the caller's caller: where a rule is
    set, seen through the helpers that set it (defjvp, unop, ...). Paths are relative to the
    repository root when inside it."""
    frame = sys._getframe(depth)
    while frame.f_back is not None and frame.f_code.co_name != "<module>":
        frame = frame.f_back
    path = os.path.abspath(frame.f_code.co_filename)
    if path.startswith(_ROOT + os.sep):
        path = os.path.relpath(path, _ROOT)
    return f"{path}:{frame.f_lineno}"


_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


_REGISTRY = {}


def register(prim):
    if prim.name in _REGISTRY:
        raise ValueError(f"primitive {prim.name!r} defined twice")
    _REGISTRY[prim.name] = prim
    prim.impl = None
    return prim


def _lookup(name):
    return _REGISTRY[name]


def all_primitives():
    """Every registered primitive, by name (the property tests iterate over this)."""
    return dict(_REGISTRY)


def make_primitive(name, multiple_results=False):
    return register(Primitive(name, multiple_results))
