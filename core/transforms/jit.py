"""jit: stage a function to a ClosedJaxpr once per signature and run it as the `jit` primitive."""
import functools
import inspect
import operator
import weakref

from .. import pytree, runtime
from ..config import OVERRIDES, config
from ..avals import ShapedArray, ShapeDtypeStruct
from ..primitive import make_primitive
from ..trace import EVAL_TRACE, TRACE_STATE, Tracer, get_aval
from . import staging
from ..array import Array
from ..primitives.parallel import AXIS_ENV, axis_env_key

jit_p = make_primitive("jit", multiple_results=True)


@jit_p.def_abstract_eval
def _jit_abstract_eval(*avals, jaxpr, **_):
    return jaxpr.out_avals


_all_caches = weakref.WeakSet()


def clear_caches():
    """Drop every jit cache (and the backends' compiled executables)."""
    for wrapped in list(_all_caches):
        wrapped.clear_cache()
    runtime.clear_backend_caches()


@functools.lru_cache(maxsize=64)
def _flat_tree(n):
    """The treedef of (args, kwargs) for n array arguments and no keywords."""
    return pytree.tree_flatten(((None,) * n, {}), is_leaf=lambda x: x is None)[1]


class _NotFast(Exception):
    """An argument the fast path does not handle (the call takes the full path)."""


def _fast_signature(x, leaves):
    """The structure and avals of arguments made of tuples, lists, dicts, None and Arrays,
    with the Arrays appended to `leaves` in tree_flatten's order; _NotFast otherwise."""
    t = type(x)
    if t is Array:
        leaves.append(x)
        return x.aval
    if t is tuple or t is list:
        return (t, *[_fast_signature(c, leaves) for c in x])
    if t is dict:
        try:
            keys = sorted(x)
        except TypeError:
            raise _NotFast from None
        return (dict, tuple(keys), *[_fast_signature(x[k], leaves) for k in keys])
    if x is None:
        return None
    raise _NotFast


def _tree_key(args):
    """(key, leaves) of arguments in tuples, lists, dicts and None for the fast path, or
    (None, None). _TREE keeps these keys apart from those of flat Array arguments."""
    leaves = []
    try:
        signature = _fast_signature(args, leaves)
    except _NotFast:
        return None, None
    return (config.version, runtime.current_backend_name(), _TREE, signature), leaves


_TREE = object()


_aval_attr = operator.attrgetter("aval")


def _rebuild(out_tree):
    """outs -> the output pytree, for the fast path (None: the output is one array)."""
    if pytree.treedef_is_leaf(out_tree):
        return None
    return functools.partial(pytree.tree_unflatten, out_tree)


_MAX_FAST = 256


def _avals_of(leaves):
    return tuple(_arg_aval(x) for x in leaves)


def _arg_aval(x):
    if isinstance(x, ShapeDtypeStruct):
        return ShapedArray(x.shape, x.dtype, weak_type=x.weak_type)
    return get_aval(x)


class Staged:
    """The result of tracing: the closed jaxpr, captured tracers, and the output tree."""

    __slots__ = ("closed", "tracer_consts", "out_tree", "in_tree")

    def __init__(self, closed, tracer_consts, out_tree, in_tree):
        self.closed, self.tracer_consts = closed, tracer_consts
        self.out_tree, self.in_tree = out_tree, in_tree

    @property
    def jaxpr(self):
        return self.closed


def _normalize_argnums(argnums, nargs_hint=None):
    if argnums is None:
        return ()
    if isinstance(argnums, int):
        return (argnums,)
    return tuple(argnums)


class JitWrapped:
    """What jax.jit returns: callable, with .lower(), .trace(), .eval_shape(), .clear_cache()."""

    def __init__(self, fun, static_argnums, static_argnames, donate_argnums,
                 in_shardings, out_shardings):
        functools.update_wrapper(self, fun)
        self._fun = fun
        self._static_argnums = _normalize_argnums(static_argnums)
        self._static_argnames = (static_argnames,) if isinstance(static_argnames, str) else tuple(static_argnames or ())
        self._donate_argnums = _normalize_argnums(donate_argnums)
        self._in_shardings = in_shardings
        self._out_shardings = out_shardings
        self._signature = _signature(fun)
        self._resolve_static_names()
        self._cache = {}
        self._fast = {}
        self._name = _fun_name(fun)
        _all_caches.add(self)

    def _resolve_static_names(self):
        sig = self._signature
        if sig is None:
            return
        params = list(sig.parameters)
        nums = set(self._static_argnums)
        names = set(self._static_argnames)
        for i in list(nums):
            if 0 <= i < len(params) and sig.parameters[params[i]].kind in (
                    inspect.Parameter.POSITIONAL_OR_KEYWORD,):
                names.add(params[i])
        for n in list(names):
            if n in sig.parameters and sig.parameters[n].kind == inspect.Parameter.POSITIONAL_OR_KEYWORD:
                nums.add(params.index(n))
        self._static_argnums, self._static_argnames = tuple(sorted(nums)), tuple(sorted(names))

    def _split(self, args, kwargs):
        if not kwargs and not self._static_argnums:  # the common call, kept cheap
            return (), (), args, {}
        nargs = len(args)
        static_nums = {i if i >= 0 else i + nargs for i in self._static_argnums}
        static = tuple((i, _check_hashable(args[i], i)) for i in sorted(static_nums) if i < nargs)
        dyn_args = tuple(a for i, a in enumerate(args) if i not in static_nums)
        static_kw = tuple(sorted((k, _check_hashable(v, k)) for k, v in kwargs.items()
                                 if k in self._static_argnames))
        dyn_kwargs = {k: v for k, v in kwargs.items() if k not in self._static_argnames}
        return static, static_kw, dyn_args, dyn_kwargs

    def _call_fun(self, static, static_kw, dyn_args, dyn_kwargs):
        args = list(dyn_args)
        for i, v in static:
            args.insert(i, v)
        return self._fun(*args, **dict(static_kw), **dyn_kwargs)

    def _stage(self, args, kwargs):
        if not kwargs and not self._static_argnums and all([type(a) is Array for a in args]):
            # the steady-state call with array arguments: no pytree walk
            static = static_kw = ()
            leaves, in_tree = args, _flat_tree(len(args))
            avals = tuple([a.aval for a in args])
        else:
            static, static_kw, dyn_args, dyn_kwargs = self._split(args, kwargs)
            leaves, in_tree = pytree.tree_flatten((dyn_args, dyn_kwargs))
            avals = _avals_of(leaves)
        key = (in_tree, avals, static, static_kw, runtime.current_backend_name(),
               config.read("jax_enable_x64"), config.read("jax_numpy_dtype_promotion"),
               axis_env_key())
        staged = self._cache.get(key)
        if staged is None:
            staged = self._trace(static, static_kw, in_tree, avals)
            if not staged.tracer_consts:
                self._cache[key] = staged
        return staged, leaves

    def _trace(self, static, static_kw, in_tree, avals):
        out_tree_box = []

        def flat_fun(*flat_args):
            dyn_args, dyn_kwargs = pytree.tree_unflatten(in_tree, flat_args)
            if self._in_shardings is not None:
                dyn_args = _constrain(dyn_args, self._in_shardings, "in_shardings")
            out = self._call_fun(static, static_kw, dyn_args, dyn_kwargs)
            if self._out_shardings is not None:
                out = _constrain(out, self._out_shardings, "out_shardings")
            out_leaves, out_tree = pytree.tree_flatten(out)
            out_tree_box.append(out_tree)
            return [_check_output(x, self.__name__) for x in out_leaves]

        jaxpr, consts = staging.trace_to_jaxpr(flat_fun, avals)
        closed, tracer_consts = staging.closure_convert(jaxpr, consts)
        return Staged(closed, tracer_consts, out_tree_box[0], in_tree)

    def __call__(self, *args, **kwargs):
        # The steady state: at the top level (no transformation, no bound axis name, no
        # scoped config override), a runner recorded for these argument avals runs them
        # directly. Inline attribute reads only: each helper call here would cost a few
        # percent of jax.jit's whole dispatch.
        key = None
        if not kwargs and TRACE_STATE.trace is EVAL_TRACE and not AXIS_ENV.frames \
                and not OVERRIDES.get():
            try:  # positional Arrays (or values the runner declines): no tree walk
                # (one flat tuple, one argument spelt out: each level of tuples costs here)
                key = (config.version, runtime.current_backend_name(), args[0].aval) \
                    if len(args) == 1 else \
                    (config.version, runtime.current_backend_name(), *map(_aval_attr, args))
                leaves = args
            except AttributeError:
                key, leaves = _tree_key(args)
            hit = self._fast.get(key)
            if hit is not None:
                outs = hit[0](leaves)
                if outs is not None:
                    return outs[0] if hit[1] is None else hit[1](outs)
        if config.read("jax_disable_jit"):
            return self._fun(*args, **kwargs)
        return self._call_staged(args, kwargs, key)

    def _call_staged(self, args, kwargs, fast_key=None):
        """Stage (or reuse) the jaxpr for these arguments and bind the call primitive;
        with `fast_key` (this call's fast-path key), remember how to repeat it directly."""
        staged, leaves = self._stage(args, kwargs)
        outs = jit_p.bind(*staged.tracer_consts, *leaves, name=self._name,
                          jaxpr=staged.closed)
        if fast_key is not None and not staged.tracer_consts and not self._static_argnums:
            self._remember_fast(fast_key, staged)
        return pytree.tree_unflatten(staged.out_tree, outs)

    def _remember_fast(self, key, staged):
        """The steady-state path: the backend's runner for the staged jaxpr, called on the
        argument Arrays without binding jit_p (the runner declines what it cannot run
        exactly as the full path would, e.g. inputs on other devices)."""
        runner = runtime.get_backend(key[1]).fast_runner(staged.closed)
        if runner is None:
            return
        if len(self._fast) >= _MAX_FAST:
            self._fast.clear()
        self._fast[key] = runner, _rebuild(staged.out_tree)

    def trace(self, *args, **kwargs):
        """Stage without running: returns an object with .jaxpr and .lower()."""
        staged, _ = self._stage(args, kwargs)
        return Traced(self, staged)

    def lower(self, *args, **kwargs):
        return self.trace(*args, **kwargs).lower()

    def eval_shape(self, *args, **kwargs):
        return eval_shape(self, *args, **kwargs)

    def clear_cache(self):
        self._cache.clear()
        self._fast.clear()

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self, obj)


class Traced:
    """jit(f).trace(...): the staged jaxpr and its output structure."""

    def __init__(self, wrapped, staged):
        self._wrapped, self._staged = wrapped, staged
        self.jaxpr = staged.closed
        self.out_info = pytree.tree_unflatten(
            staged.out_tree, [ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type)
                              for a in staged.closed.out_avals])

    def lower(self):
        return Lowered(self)


class Lowered:
    """jit(f).lower(...): .as_text() prints the jaxpr; .compile() gives a callable."""

    def __init__(self, traced):
        self._traced = traced
        self.out_info = traced.out_info

    def as_text(self):
        return str(self._traced.jaxpr)

    def compile(self):
        return Compiled(self._traced)


class Compiled:
    def __init__(self, traced):
        self._traced = traced

    def __call__(self, *args, **kwargs):
        return self._traced._wrapped(*args, **kwargs)

    def as_text(self):
        return str(self._traced.jaxpr)


def _constrain(tree, shardings, what):
    """in_shardings/out_shardings become sharding constraints in the staged jaxpr, so the
    propagation rules (and both backends) place values exactly there."""
    from ..primitives.sharding_ops import sharding_constraint_p
    from ..sharding import Sharding
    from .vmap import _flatten_axes_generic
    leaves, treedef = pytree.tree_flatten(tree)
    is_target = lambda s: s is None or isinstance(s, Sharding)  # noqa: E731
    if isinstance(shardings, Sharding):
        targets = [shardings] * len(leaves)
    else:
        if isinstance(shardings, list):
            shardings = tuple(shardings)
        targets = _flatten_axes_generic(f"jit {what}", tree, shardings, is_target)
    return pytree.tree_unflatten(treedef, [
        x if s is None else sharding_constraint_p.bind(x, sharding=s)
        for x, s in zip(leaves, targets)])


def _signature(fun):
    try:
        return inspect.signature(fun)
    except (TypeError, ValueError):
        return None


def _fun_name(fun):
    return getattr(fun, "__name__", type(fun).__name__)


def _check_hashable(value, where):
    try:
        hash(value)
    except TypeError:
        raise ValueError(
            f"Non-hashable static arguments are not supported. An error occurred while trying to "
            f"hash an object of type {type(value)}, {value!r} (static argument {where!r}). "
            "Static arguments must be hashable; pass arrays as dynamic arguments.") from None
    return value


def _check_output(x, name):
    if isinstance(x, Tracer) or hasattr(x, "aval"):
        return x
    try:
        get_aval(x)
    except TypeError:
        raise TypeError(f"function {name} returned a value of type {type(x).__name__}, "
                        "which is not a valid JAX type") from None
    return x


def jit(fun=None, *, static_argnums=None, static_argnames=None, donate_argnums=None,
        donate_argnames=None, in_shardings=None, out_shardings=None, keep_unused=False,
        device=None, backend=None, inline=False, abstracted_axes=None, compiler_options=None):
    """Stage `fun` to a jaxpr once per argument signature and run it compiled by the backend."""
    if fun is None:
        return lambda f: jit(f, static_argnums=static_argnums, static_argnames=static_argnames,
                             donate_argnums=donate_argnums, in_shardings=in_shardings,
                             out_shardings=out_shardings)
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun!r}")
    return JitWrapped(fun, static_argnums, static_argnames, donate_argnums,
                      in_shardings, out_shardings)


def make_jaxpr(fun, static_argnums=(), axis_env=None, return_shape=False, abstracted_axes=None):
    """A function returning the ClosedJaxpr of `fun` at the given arguments."""
    wrapped = JitWrapped(fun, static_argnums, (), None, None, None)

    @functools.wraps(fun)
    def make(*args, **kwargs):
        staged, _ = wrapped._stage(args, kwargs)
        closed = staged.closed
        if staged.tracer_consts:
            closed = _recapture(closed, len(staged.tracer_consts))
        if return_shape:
            shapes = pytree.tree_unflatten(staged.out_tree, [
                ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type) for a in closed.out_avals])
            return closed, shapes
        return closed

    return make


def _recapture(closed, n):
    from ..jaxpr import ClosedJaxpr, Jaxpr
    j = closed.jaxpr
    return ClosedJaxpr(Jaxpr(j.invars[:n] + j.constvars, j.invars[n:], j.outvars, j.eqns),
                       closed.consts)


def eval_shape(fun, *args, **kwargs):
    """Output shapes and dtypes of fun(*args) as ShapeDtypeStructs, without computing."""
    wrapped = JitWrapped(fun, None, None, None, None, None)
    staged, _ = wrapped._stage(args, kwargs)
    return pytree.tree_unflatten(staged.out_tree, [
        ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type)
        for a in staged.closed.out_avals])


# ---------------------------------------------------------------- jit_p's transformation rules

def _stage_closed(fun, in_avals):
    from .partial_eval import stage
    closed, tracer_consts = stage(fun, in_avals)
    return closed, tracer_consts


def jvp_jaxpr(closed, nonzeros):
    """A closed jaxpr computing (primal outs, tangent outs) from (primals, nonzero tangents)."""
    from ..jaxpr import jaxpr_as_fun
    from .ad import Zero, instantiate
    from .jvp import jvp_flat
    n = len(closed.in_avals)
    t_avals = [a.to_tangent_aval() for a, nz in zip(closed.in_avals, nonzeros) if nz]

    def fun(*args):
        primals, nz_tangents = args[:n], iter(args[n:])
        tangents = [next(nz_tangents) if nz else Zero(a.to_tangent_aval())
                    for a, nz in zip(closed.in_avals, nonzeros)]
        outs, out_t = jvp_flat(jaxpr_as_fun(closed), primals, tangents)
        return list(outs) + [instantiate(t) for t in out_t]

    return _stage_closed(fun, list(closed.in_avals) + t_avals)


def _jit_jvp(primals, tangents, *, name, jaxpr):
    from .ad import Zero
    nonzeros = [type(t) is not Zero for t in tangents]
    new, consts = jvp_jaxpr(jaxpr, nonzeros)
    outs = jit_p.bind(*consts, *primals, *[t for t in tangents if type(t) is not Zero],
                      name=name, jaxpr=new)
    k = len(jaxpr.out_avals)
    return outs[:k], outs[k:]


def _jit_linearize(primals, tangents, *, name, jaxpr):
    """Known (primal) part runs as one jit on the parent; the tangent part is staged."""
    from .ad import Zero
    from .partial_eval import partial_eval_jaxpr
    nonzeros = [type(t) is not Zero for t in tangents]
    new, consts = jvp_jaxpr(jaxpr, nonzeros)
    n_t = sum(nonzeros)
    unknowns = [False] * (len(consts) + len(primals)) + [True] * n_t
    new = _with_leading_consts(new, len(consts))
    known, unknown, out_unknowns, n_res = partial_eval_jaxpr(new, unknowns)
    known_outs = jit_p.bind(*consts, *primals, name=name, jaxpr=known)
    n_known_out = len(known_outs) - n_res
    residuals = known_outs[n_known_out:]
    unknown_outs = jit_p.bind(*residuals, *[t for t in tangents if type(t) is not Zero],
                              name=name, jaxpr=unknown)
    return _merge_outs(known_outs[:n_known_out], unknown_outs, out_unknowns, len(jaxpr.out_avals))


def _with_leading_consts(closed, n):
    """consts already became leading invars in closure conversion: nothing to do."""
    return closed


def _merge_outs(known, unknown, out_unknowns, n_primal):
    known, unknown = iter(known), iter(unknown)
    outs = [next(unknown) if u else next(known) for u in out_unknowns]
    return outs[:n_primal], outs[n_primal:]


def _jit_batch(axis_data, vals, dims, *, name, jaxpr):
    from ..jaxpr import jaxpr_as_fun
    from .batching import moveaxis
    from .vmap import vmap_flat
    vals = [v if d is None else moveaxis(v, d, 0) for v, d in zip(vals, dims)]
    in_dims = [None if d is None else 0 for d in dims]
    in_avals = [a if d is None else a.update(shape=(axis_data.size,) + a.shape)
                for a, d in zip(jaxpr.in_avals, dims)]
    in_avals = [ShapedArray(a.shape, a.dtype, a.weak_type) for a in in_avals]

    def fun(*args):
        return vmap_flat(jaxpr_as_fun(jaxpr), args, in_dims, axis_data)

    new, consts = _stage_closed(fun, in_avals)
    outs = jit_p.bind(*consts, *vals, name=name, jaxpr=new)
    return outs, [0] * len(outs)


def _jit_transpose(cts, *args, name, jaxpr):
    from .ad import UndefinedPrimal, Zero, instantiate
    from .transpose import backward_pass
    linear = [type(a) is UndefinedPrimal for a in args]
    known = [a for a in args if type(a) is not UndefinedPrimal]
    ct_avals = [a.to_tangent_aval() for a in jaxpr.out_avals]
    known_avals = [get_aval(a) for a in known]
    lin_avals = [a.aval for a in args if type(a) is UndefinedPrimal]

    def fun(*flat):
        kn, ct = iter(flat[:len(known)]), flat[len(known):]
        lin_in = [True if lin else next(kn) for lin in linear]
        res = backward_pass(jaxpr.jaxpr, jaxpr.consts, lin_in, list(ct))
        return [instantiate(r) if type(r) is Zero else r
                for r, lin in zip(res, linear) if lin]

    ct_vals = [instantiate(c) for c in cts]
    new, consts = _stage_closed(fun, known_avals + ct_avals)
    outs = iter(jit_p.bind(*consts, *known, *ct_vals, name=name, jaxpr=new))
    del lin_avals
    return [next(outs) if lin else None for lin in linear]


def _jit_partial_eval(eqn, unknowns_in):
    """A jit equation with some unknown inputs becomes a known jit and an unknown jit."""
    from ..jaxpr import JaxprEqn, Var
    from .partial_eval import partial_eval_jaxpr
    closed = eqn.params["jaxpr"]
    known, unknown, out_unknowns, n_res = partial_eval_jaxpr(closed, unknowns_in)
    res_vars = [Var(a) for a in known.out_avals[len(known.out_avals) - n_res:]]
    known_out = [v for v, u in zip(eqn.outvars, out_unknowns) if not u]
    unknown_out = [v for v, u in zip(eqn.outvars, out_unknowns) if u]
    k_in = [v for v, u in zip(eqn.invars, unknowns_in) if not u]
    u_in = [v for v, u in zip(eqn.invars, unknowns_in) if u]
    name = eqn.params["name"]
    k_eqn = JaxprEqn(jit_p, k_in, known_out + res_vars, dict(name=name, jaxpr=known))
    u_eqn = JaxprEqn(jit_p, res_vars + u_in, unknown_out, dict(name=name, jaxpr=unknown))
    return [k_eqn], [u_eqn], out_unknowns


def _register_jit_rules():
    from .partial_eval import partial_eval_rules
    jit_p.def_jvp(_jit_jvp)
    jit_p.linearize = _jit_linearize
    jit_p.def_batch(_jit_batch)
    jit_p.def_transpose(_jit_transpose)
    partial_eval_rules[jit_p] = _jit_partial_eval


_register_jit_rules()
