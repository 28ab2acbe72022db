"""jax.stages: the ahead-of-time stages of a jitted function, `jit(f).trace(*args)` ->
Traced -> `.lower()` -> Lowered -> `.compile()` -> Compiled. On the xla backend the texts and
analyses are JAX's, of the program that runs the jaxpr; numpy_ref, which compiles to no
compiler IR, shows the jaxpr and has no analyses. Compiled checks its arguments' structure and
types as JAX's does and runs the staged program."""
import functools

import numpy as np

from .. import dtypes, pytree, runtime
from . import donation
from ..array import Array
from ..avals import ShapeDtypeStruct
from ..primitives.debugging import inspect_compiled
from ..pytree_prefix import _child_key, _metadata
from ..jaxpr import ClosedJaxpr, Jaxpr, Var
from ..primitives.sharding_ops import sharding_constraint_p
from ..sharding_names import is_fixed
from ..sharding_propagation import propagate_jaxpr
from ..config import check_execution_allowed
from ..sharding import placement_mesh
from ..trace import Tracer, get_aval

CompilerOptions = dict[str, str | bool]
_UNSET = object()


class ArgInfo:
    """The type of one argument of a staged function and whether it is donated."""

    def __init__(self, aval, donated):
        self._aval, self.donated = aval, donated

    shape = property(lambda self: self._aval.shape)
    dtype = property(lambda self: self._aval.dtype)

    def __repr__(self):
        return f"ArgInfo(_aval={self._aval!r}, donated={self.donated})"

    def __eq__(self, other):
        return isinstance(other, ArgInfo) and (self._aval, self.donated) == (other._aval,
                                                                             other.donated)

    __hash__ = None


class Wrapped:
    """The protocol of what jax.jit returns: callable, with .trace, .lower, .eval_shape."""

    def __call__(self, *args, **kwargs):
        raise NotImplementedError

    def trace(self, *args, **kwargs):
        raise NotImplementedError

    def lower(self, *args, **kwargs):
        raise NotImplementedError


def _out_info(staged, weak, shardings=None):
    """The outputs' types (weak types kept if `weak`) with their shardings: `shardings`, or
    those jit's out_shardings give them (as JAX's)."""
    outvars = staged.closed.jaxpr.outvars
    if shardings is None:
        fixed = _out_constraints(staged.closed.jaxpr)
        shardings = [fixed[v].params["sharding"] if v in fixed else None for v in outvars]
    return pytree.tree_unflatten(staged.out_tree, [
        ShapeDtypeStruct(v.aval.shape, v.aval.dtype, weak_type=weak and v.aval.weak_type,
                         sharding=s) for v, s in zip(outvars, shardings)])


def _out_constraints(jaxpr):
    """{output: equation} of the constraints jit stages last on its outputs (out_shardings)."""
    return {e.outvars[0]: e for e in jaxpr.eqns
            if e.primitive is sharding_constraint_p and is_fixed(e.outvars[0])}


def _args_info(staged, wrapped):
    avals = staged.closed.in_avals[len(staged.tracer_consts):]
    return pytree.tree_unflatten(staged.in_tree, [
        ArgInfo(a, d) for a, d in zip(avals, _donated_leaves(staged.in_tree, wrapped))])


def _donated_leaves(in_tree, wrapped):
    """Whether each argument leaf is donated (jit's donate_argnums and donate_argnames, each
    completed from the other through the signature, as JAX's)."""
    donated = set(donation.donated_leaves(wrapped._donate_argnums, wrapped._donate_argnames,
                                          wrapped._static_argnums, in_tree))
    return [i in donated for i in range(in_tree.num_leaves)]


class _Stage:
    """What every stage knows: the staged jaxpr, its trees, argument and output types."""

    def __init__(self, wrapped, staged, arg_shardings=None, default=None):
        self._wrapped, self._staged = wrapped, staged
        self._arg_shardings = arg_shardings  # of the arguments lowered for (None: unknown)
        # the default device when traced, where uncommitted arguments are laid out
        self._default = default or _default_sharding()
        self.in_tree, self.out_tree = staged.in_tree, staged.out_tree
        self.args_info = _args_info(staged, wrapped)
        self._backend, self._lowered = runtime.get_backend(), _UNSET

    @property
    def donate_argnums(self):
        """The positions of the donated argument leaves, flat (as JAX's)."""
        return tuple(i for i, info in enumerate(pytree.tree_leaves(self.args_info))
                     if info.donated)

    @property
    def out_info(self):
        """The outputs' types and the shardings jit's out_shardings give them; weak types
        only before lowering, as JAX's."""
        return _out_info(self._staged, weak=isinstance(self, Traced))

    @property
    def in_avals(self):
        """The arguments' types, in the arguments' tree."""
        return pytree.tree_map(lambda info: info._aval, self.args_info)

    def _lowering(self):
        """JAX's Lowered of the program on the xla backend (made once); None on a backend
        that lowers to no compiler IR (numpy_ref) or for a program it runs op by op."""
        if self._lowered is _UNSET:
            lower = getattr(self._backend, "jax_lowered", None)
            self._lowered = None if lower is None else lower(*self._jax_program())
        return self._lowered

    def _jax_program(self):
        """What the backend lowers: the staged jaxpr without jit's own in/out_shardings
        (constraints on its inputs and outputs), which JAX's program carries as its
        arguments' and results' shardings instead; the inputs' shardings (jit's, else the
        arguments'); the function's form; the outputs' shardings (None: not given)."""
        closed = self._staged.closed
        ins = _leading_input_constraints(closed.jaxpr) if self._wrapped._in_shardings else {}
        outs = _out_constraints(closed.jaxpr)
        by_input = {id(e.invars[0]): e.params["sharding"] for e in ins.values()}
        return _without(closed, {**ins, **outs}), [
            by_input.get(id(v), s) for v, s in zip(closed.jaxpr.invars, self._input_shardings())
        ], self._as_user_function, [outs[v].params["sharding"] if type(v) is Var and v in outs
                                    else None for v in closed.jaxpr.outvars]

    def _input_shardings(self):
        """The layouts of the jaxpr's inputs lowered for (None: uncommitted)."""
        n = len(self._staged.tracer_consts)
        return [None] * n + list(self._arg_shardings or
                                 [None] * (len(self._staged.closed.in_avals) - n))

    def _inspect(self, lowering):
        """inspect_array_sharding's callbacks, when JAX calls them (see inspect_compiled)."""
        inspect_compiled(self._staged.closed, self._input_shardings(), lowering)

    def _as_user_function(self, flat_fun, flat_args):
        """`flat_fun` (the jaxpr's inputs to its outputs) as a function of the user's
        arguments, named as theirs, with their parameters, returning their output tree;
        `flat_args` arranged as its (args, kwargs); how to arrange flat values (such as
        out_shardings) as its outputs; and jax.jit's options for it (the donated arguments):
        the program JAX lowers then carries JAX's names (module `jit_f`, arguments, `result`
        paths) and donations. Inputs (outputs) are flat where their tree holds other nodes
        than Python's containers, or the jaxpr closes over tracers."""
        staged = self._staged
        user_in = not staged.tracer_consts and _builtin(staged.in_tree)
        outs = functools.partial(pytree.tree_unflatten, staged.out_tree) \
            if _builtin(staged.out_tree) else list

        def fun(*args, **kwargs):
            return outs(flat_fun(*pytree.tree_leaves((args, kwargs)) if user_in else args))
        fun.__name__ = fun.__qualname__ = self._wrapped._name
        if not user_in:
            return fun, (tuple(flat_args), {}), outs, {}
        fun.__signature__ = _dynamic_signature(self._wrapped)
        return fun, pytree.tree_unflatten(staged.in_tree, flat_args), outs, \
            _donations(self.args_info)


class Traced(_Stage):
    """jit(f).trace(*args): the staged jaxpr (`.jaxpr`), its argument and output types."""

    def __init__(self, wrapped, staged, arg_shardings=None, default=None):
        super().__init__(wrapped, staged, arg_shardings, default)
        self.jaxpr = staged.closed
        self.fun_name = wrapped._name

    @property
    def out_avals(self):
        return pytree.tree_unflatten(self.out_tree, self._staged.closed.out_avals)

    def lower(self, *, lowering_platforms=None):
        """The Lowered stage of this trace (a program on one device calls back
        inspect_array_sharding's callbacks now, as JAX's lowering)."""
        self._inspect(lowering=True)
        return Lowered(self._wrapped, self._staged, arg_shardings=self._arg_shardings,
                       default=self._default)


class Lowered(_Stage):
    """jit(f).lower(*args): `.as_text()` prints the program, `.compile()` gives Compiled."""

    def cost_analysis(self):
        """XLA's estimate of the program's cost before optimization (flops, bytes accessed,
        ...) on the xla backend, as JAX's; None where the backend has no cost model
        (numpy_ref)."""
        lowering = self._lowering()
        return None if lowering is None else lowering.cost_analysis()

    def as_text(self, dialect=None, *, debug_info=False):
        """The program as text. On the xla backend JAX's lowering of the program that runs it:
        StableHLO by default, `dialect='hlo'` for HLO. numpy_ref has no compiler IR: its text
        is refjax's jaxpr (and a ValueError for another dialect); `dialect='jaxpr'` gives the
        jaxpr on any backend."""
        lowering = self._lowering()
        if dialect == "jaxpr" or lowering is None and dialect is None:
            return str(self._staged.closed)
        if lowering is None:
            raise ValueError(f"the {self._backend.name} backend has no {dialect!r} text; "
                             "as_text() gives the jaxpr")
        return lowering.as_text(dialect, debug_info=debug_info)

    def compile(self, compiler_options=None):
        """The Compiled stage: callable on arguments of the lowered types (a program on
        several devices calls back inspect_array_sharding's callbacks now, as JAX's
        compiler)."""
        self._inspect(lowering=False)
        compiled = Compiled(self._wrapped, self._staged, arg_shardings=self._arg_shardings,
                            default=self._default)
        compiled._backend, compiled._lowered = self._backend, self._lowered
        compiled._options = compiler_options  # XLA's, on the xla backend (numpy_ref has none)
        if compiler_options:  # checked now, as JAX compiles now
            compiled._executable()
        return compiled

    def compiler_ir(self, dialect=None):
        """The program in the backend's IR: on the xla backend JAX's (an MLIR module for
        'stablehlo', the default; an XlaComputation for 'hlo'); on numpy_ref, which has no
        compiler IR, the ClosedJaxpr for the default dialect and None (JAX's "unavailable")
        for the others."""
        lowering = self._lowering()
        if lowering is None:
            return self._staged.closed if dialect in (None, "jaxpr") else None
        return lowering.compiler_ir(dialect)


class Compiled(_Stage):
    """jit(f).lower(*args).compile(): runs the program on arguments of the types it was
    lowered for (TypeError, as JAX, for another structure or other types)."""

    _compiled = None  # JAX's Compiled of the program on the xla backend, made on first use
    _options = None

    def __call__(self, *args, **kwargs):
        leaves, tree = pytree.tree_flatten((args, kwargs))
        if tree != self.in_tree:
            errs = list(_mismatches(tree, self.in_tree))
            raise TypeError("Function compiled with input pytree does not match the input "
                            f"pytree it was called with. There are {len(errs)} mismatches, "
                            "including:\n" + "\n".join(
                                f"    * at {('args', 'kwargs')[first.idx]}"
                                f"{pytree.keystr(tuple(rest))}, seen {seen} but now given "
                                f"{given}, so {why}" for (first, *rest), given, seen, why in errs))
        _check_untraced(leaves)
        self._check_types(leaves)
        return pytree.tree_unflatten(self.out_tree, self._run(self._placed(leaves)))

    call = __call__

    def as_text(self):
        """The compiled program as text: XLA's optimized HLO module on the xla backend (as
        JAX's); on numpy_ref, which compiles to no HLO, refjax's jaxpr, which it runs."""
        executable = self._executable()
        return str(self._staged.closed) if executable is None else executable.as_text()

    def cost_analysis(self):
        """XLA's cost estimate of the optimized program on the xla backend (as JAX's); None on
        numpy_ref, which has no cost model."""
        executable = self._executable()
        return None if executable is None else executable.cost_analysis()

    def memory_analysis(self):
        """XLA's memory statistics of the executable on the xla backend (argument, output and
        temporary sizes in bytes, as JAX's); None on numpy_ref."""
        executable = self._executable()
        return None if executable is None else executable.memory_analysis()

    def runtime_executable(self):
        """The backend's executable (JAX's on the xla backend); None on numpy_ref."""
        executable = self._executable()
        return None if executable is None else executable.runtime_executable()

    def _executable(self):
        lowering = self._lowering()
        if lowering is not None and self._compiled is None:
            self._compiled = self._backend.jax_compile(lowering, self._options)
        return self._compiled

    @property
    def input_shardings(self):
        """The arguments' shardings, as the (args, kwargs) tree: jit's in_shardings where
        given, else those of the arguments lowered for (the default device's for values
        without one)."""
        return pytree.tree_unflatten(self.in_tree, self._in_shardings())

    @property
    def out_info(self):
        """The outputs' types with their shardings (JAX's also hold memory layouts, which
        refjax has not)."""
        return _out_info(self._staged, False,
                         pytree.tree_leaves(self.output_shardings))

    @property
    def output_shardings(self):
        """The outputs' shardings, in the outputs' tree: the layouts the program's
        propagation gives them from the input shardings."""
        default = self._default
        ins = [default] * len(self._staged.tracer_consts) + \
            [default if s is None else s for s in self._in_shardings()]
        outs = propagate_jaxpr(self._staged.closed, ins)
        return pytree.tree_unflatten(self.out_tree,
                                     [default if s is None else s for s in outs])

    def _run(self, leaves):
        """The staged program on the arguments (not a new trace of the function: its results
        have the compiled types, as JAX's executable's)."""
        from .jit import _ctx_mesh, jit_p  # jit imports this module
        check_execution_allowed(self._wrapped._name)
        with placement_mesh(self._wrapped._who):
            return jit_p.bind(*self._staged.tracer_consts, *leaves, name=self._wrapped._name,
                              jaxpr=self._staged.closed, **_ctx_mesh())

    def _in_shardings(self):
        jaxpr, n = self._staged.closed.jaxpr, len(self._staged.tracer_consts)
        constrained = {id(e.invars[0]): e.params["sharding"] for e in jaxpr.eqns
                       if e.primitive is sharding_constraint_p}
        given = self._arg_shardings or [None] * (len(jaxpr.invars) - n)
        if self._wrapped._in_shardings is not None:  # JAX reports jit's, None where unset
            return [constrained.get(id(v)) for v in jaxpr.invars[n:]]
        return [self._default if s is None else s for s in given]

    def _placed(self, leaves):
        """The arguments on the shardings the program was compiled for, as JAX's: values
        placed by default moved there; committed arrays elsewhere refused (ValueError)."""
        required = self._in_shardings()
        paths = [path for path, _ in pytree.tree_leaves_with_path(self.args_info)]
        bad = [(path, x, s) for path, x, s in zip(paths, leaves, required)
               if s is not None and _committed(x) and not x.sharding.is_equivalent_to(s, x.ndim)]
        if bad:
            raise ValueError(
                "Computation was compiled for input shardings that disagree with the shardings "
                f"of arguments passed to it. Here are the {len(bad)} mismatches:\n" + "\n".join(
                    f"Argument {self._arg_name(path)} with shape {x.aval.str_short(False)}:\n"
                    f"  Passed sharding: {x.sharding}\n  Required sharding: {s}"
                    for path, x, s in bad))
        return [x if s is None or s == self._default or _committed(x) else _put(x, s)
                for x, s in zip(leaves, required)]

    def _check_types(self, leaves):
        bad = [(path, info, get_aval(x)) for (path, info), x in zip(
            pytree.tree_leaves_with_path(self.args_info), leaves)
            if not _same_type(info._aval, get_aval(x))]
        if bad:
            lines = [f"Argument '{self._arg_name(path)}' compiled with "
                     f"{info._aval.str_short(False)} and called with {aval.str_short(False)}"
                     for path, info, aval in bad]
            raise TypeError("Argument types differ from the types for which this computation "
                            "was compiled. Perhaps you are calling the compiled executable "
                            "with a different enable_x64 mode than when it was AOT compiled? "
                            "The mismatches are:\n" + "\n".join(lines))

    def _arg_name(self, path):
        names = self._wrapped._signature
        kind, first, *rest = path
        params = [] if names is None else list(names.parameters)
        if kind.idx == 0 and first.idx < len(params):
            return params[first.idx] + pytree.keystr(tuple(rest))
        return (str(first.key) if kind.idx == 1 else f"args[{first.idx}]") + \
            pytree.keystr(tuple(rest))


_CONTAINERS = (tuple, list, dict, type(None))


def _builtin(tree):
    """Whether a tree's nodes are all Python containers (which JAX flattens alike)."""
    return tree._handler is None or issubclass(tree._type, _CONTAINERS) and \
        all(map(_builtin, tree._children))


def _dynamic_signature(wrapped):
    """The function's signature without its static parameters (None: it has none)."""
    sig = wrapped._signature
    if sig is None:
        return None
    static = {*wrapped._static_argnames, *[list(sig.parameters)[i] for i in
                                           wrapped._static_argnums if i < len(sig.parameters)]}
    return sig.replace(parameters=[p for p in sig.parameters.values() if p.name not in static])


def _without(closed, constraints):
    """The program without the constraint equations {output: equation}: their outputs are
    their operands."""
    if not constraints:
        return closed
    jaxpr, rename = closed.jaxpr, {v: e.invars[0] for v, e in constraints.items()}
    stripped = {id(e) for e in constraints.values()}

    def renamed(v):
        return rename.get(v, v) if type(v) is Var else v
    eqns = [e._replace(invars=list(map(renamed, e.invars))) for e in jaxpr.eqns
            if id(e) not in stripped]
    return ClosedJaxpr(Jaxpr(jaxpr.constvars, jaxpr.invars, list(map(renamed, jaxpr.outvars)),
                             eqns), closed.consts)


def _leading_input_constraints(jaxpr):
    """{output: equation} of the constraints jit stages first on its inputs (in_shardings)."""
    found = {}
    for eqn in jaxpr.eqns:
        if eqn.primitive is not sharding_constraint_p or eqn.invars[0] not in jaxpr.invars:
            break
        found[eqn.outvars[0]] = eqn
    return found


def _mismatches(given, compiled, path=()):
    """Where two trees' structures differ, as JAX's equality errors: (path, the given node,
    the compiled one, why), the first difference on each path."""
    if given._handler is None and compiled._handler is None:
        return
    if given._handler is None or compiled._handler is None or given._type is not compiled._type:
        yield path, _node(given), _node(compiled), "their Python types differ"
        return
    n, m = len(given._children), len(compiled._children)
    if given._type in (tuple, list) and n != m:
        kind = given._type.__name__
        yield path, f"{kind} of length {n}", f"{kind} of length {m}", "the lengths do not match"
        return
    if n != m:
        keys = " ".join(map(repr, set(given._data or ()) ^ set(compiled._data or ()))) \
            if given._type is dict else ""
        yield (path, _children(given), _children(compiled), "the numbers of children do not "
               "match" + (keys and f", with the symmetric difference of key sets: {{{keys}}}"))
        return
    if _metadata(given) != _metadata(compiled):
        yield (path, f"{given._type} with pytree metadata {_metadata(given)}",
               f"{compiled._type} with pytree metadata {_metadata(compiled)}",
               "the pytree node metadata does not match")
        return
    for i, (a, b) in enumerate(zip(given._children, compiled._children)):
        yield from _mismatches(a, b, (*path, _child_key(given, i)))


def _node(tree):
    return "pytree leaf" if tree._handler is None else str(tree._type)


def _children(tree):
    n = len(tree._children)
    return f"{tree._type} with {n} child{'ren' if n > 1 else ''}"


def _donations(args_info):
    """jax.jit's options donating the arguments donated here, for a function of the dynamic
    arguments alone (static ones taken out)."""
    args, kwargs = args_info
    donated = lambda info: any(i.donated for i in pytree.tree_leaves(info))  # noqa: E731
    return {"donate_argnums": tuple(i for i, a in enumerate(args) if donated(a)),
            "donate_argnames": tuple(k for k, v in kwargs.items() if donated(v))}


def _committed(x):
    return isinstance(x, Array) and x.committed


def _put(x, sharding):
    """A value placed by default, laid out by `sharding` (the transfer JAX makes)."""
    if isinstance(x, Array):
        return runtime.make_array(x._value(), x.aval, sharding=sharding,
                                  transfer="device_to_device")
    aval = get_aval(x)
    return runtime.make_array(np.asarray(x, aval.dtype), aval, sharding=sharding)


def _check_untraced(leaves):
    """JAX's refusal to transform a compiled call: its signature is fixed."""
    tracer = next((x for x in leaves if isinstance(x, Tracer)), None)
    if tracer is not None:
        raise TypeError("Cannot apply JAX transformations to a function lowered and compiled "
                        "for a particular signature. Detected argument of Tracer type "
                        f"{type(tracer)}.")


def _default_sharding():
    return runtime.get_backend().default_sharding()


def arg_sharding(x):
    """The sharding an argument of a lowered call has (None: placed by default, as an
    uncommitted Array is, wherever it is)."""
    if isinstance(x, Array):
        return x.sharding if x.committed else None
    return x.sharding if isinstance(x, ShapeDtypeStruct) else None


def _same_type(compiled, given):
    """JAX's check: shape and dtype (given values canonicalised, weak types ignored)."""
    return compiled.shape == given.shape and \
        dtypes.canonicalize_dtype(given.dtype) == compiled.dtype


__all__ = ["ArgInfo", "Compiled", "CompilerOptions", "Lowered", "Traced", "Wrapped"]
