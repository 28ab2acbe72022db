"""jax.stages: the ahead-of-time stages of a jitted function, `jit(f).trace(*args)` ->
Traced -> `.lower()` -> Lowered -> `.compile()` -> Compiled. refjax's lowered text is its
jaxpr (the xla backend also gives JAX's StableHLO with `as_text(dialect="stablehlo")`);
Compiled checks its arguments' structure and types as JAX's does before running."""
from .. import dtypes, pytree, runtime
from ..array import Array
from ..avals import ShapeDtypeStruct
from ..primitives.sharding_ops import sharding_constraint_p
from ..sharding_propagation import propagate_jaxpr
from ..trace import get_aval

CompilerOptions = dict[str, str | bool]


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


def _out_info(staged):
    return pytree.tree_unflatten(staged.out_tree, [
        ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type)
        for a in staged.closed.out_avals])


def _args_info(staged, donated):
    avals = staged.closed.in_avals[len(staged.tracer_consts):]
    return pytree.tree_unflatten(staged.in_tree,
                                 [ArgInfo(a, i in donated) for i, a in enumerate(avals)])


class _Stage:
    """What every stage knows: the staged jaxpr, its trees, argument and output types."""

    def __init__(self, wrapped, staged, donated=(), arg_shardings=None, default=None):
        self._wrapped, self._staged = wrapped, staged
        self._arg_shardings = arg_shardings  # of the arguments lowered for (None: unknown)
        # the default device when traced, where uncommitted arguments are laid out
        self._default = default or _default_sharding()
        self.in_tree, self.out_tree = staged.in_tree, staged.out_tree
        self.out_info = _out_info(staged)
        self.args_info = _args_info(staged, set(donated))
        self.donate_argnums = tuple(wrapped._donate_argnums)

    @property
    def in_avals(self):
        """The arguments' types, in the arguments' tree."""
        return pytree.tree_map(lambda info: info._aval, self.args_info)

    def cost_analysis(self):
        """The backend's estimate of the program's cost (flops, bytes accessed, ...) as a
        dict, or None where the backend cannot tell (numpy_ref)."""
        estimate = getattr(runtime.get_backend(), "cost_analysis", None)
        return None if estimate is None else estimate(self._staged.closed)

    def as_text(self, dialect=None, *, debug_info=False):
        """The program as text: refjax's jaxpr; dialect='stablehlo' asks the backend (the
        xla backend gives JAX's lowering)."""
        if dialect is None or dialect == "jaxpr":
            return str(self._staged.closed)
        lowered = getattr(runtime.get_backend(), "lowered_text", None)
        if lowered is None:
            raise ValueError(f"the {runtime.current_backend_name()} backend has no "
                             f"{dialect!r} text; as_text() gives the jaxpr")
        return lowered(self._staged.closed, dialect, debug_info)


class Traced(_Stage):
    """jit(f).trace(*args): the staged jaxpr (`.jaxpr`), its argument and output types."""

    def __init__(self, wrapped, staged, arg_shardings=None, default=None):
        super().__init__(wrapped, staged, wrapped._donate_argnums, arg_shardings, default)
        self.jaxpr = staged.closed
        self.fun_name = wrapped._name

    @property
    def out_avals(self):
        return pytree.tree_unflatten(self.out_tree, self._staged.closed.out_avals)

    def lower(self, *, lowering_platforms=None):
        """The Lowered stage of this trace."""
        return Lowered(self._wrapped, self._staged, arg_shardings=self._arg_shardings,
                       default=self._default)


class Lowered(_Stage):
    """jit(f).lower(*args): `.as_text()` prints the program, `.compile()` gives Compiled."""

    def compile(self, compiler_options=None):
        """The Compiled stage: callable on arguments of the lowered types."""
        return Compiled(self._wrapped, self._staged, arg_shardings=self._arg_shardings,
                        default=self._default)

    def compiler_ir(self, dialect=None):
        """The program in the backend's IR: the jaxpr (ClosedJaxpr) for refjax."""
        return self._staged.closed


class Compiled(_Stage):
    """jit(f).lower(*args).compile(): runs the program on arguments of the types it was
    lowered for (TypeError, as JAX, for another structure or other types)."""

    def __call__(self, *args, **kwargs):
        leaves, tree = pytree.tree_flatten((args, kwargs))
        if tree != self.in_tree:
            raise TypeError("Function compiled with input pytree does not match the input "
                            "pytree it was called with. It was compiled for the arguments "
                            f"{self.in_tree} and called with {tree}.")
        self._check_types(leaves)
        return self._wrapped(*args, **kwargs)

    call = __call__

    @property
    def input_shardings(self):
        """The arguments' shardings, as the (args, kwargs) tree: jit's in_shardings where
        given, else those of the arguments lowered for (the default device's for values
        without one)."""
        return pytree.tree_unflatten(self.in_tree, self._in_shardings())

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

    def _in_shardings(self):
        jaxpr, n = self._staged.closed.jaxpr, len(self._staged.tracer_consts)
        constrained = {id(e.invars[0]): e.params["sharding"] for e in jaxpr.eqns
                       if e.primitive is sharding_constraint_p}
        given = self._arg_shardings or [None] * (len(jaxpr.invars) - n)
        if self._wrapped._in_shardings is not None:  # JAX reports jit's, None where unset
            return [constrained.get(id(v)) for v in jaxpr.invars[n:]]
        return [self._default if s is None else s for s in given]

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
