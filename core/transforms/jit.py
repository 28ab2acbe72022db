"""jit: stage a function to a ClosedJaxpr once per signature and run it as the `jit` primitive."""
import functools
import inspect
import threading
import weakref

from .. import dtypes, errors, key_reuse, pytree, runtime
from ..array import Array
from ..avals import ShapedArray, ShapeDtypeStruct
from ..config import check_execution_allowed, config
from ..jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Var, pp_call, typecheck_jaxpr
from ..lru import LRU
from ..primitive import make_primitive
from ..primitives.parallel import axis_env_key
from ..primitives.sharding_ops import sharding_constraint_p
from ..sharding import (P, Sharding, get_current_mesh, mesh_context_key, placement_mesh,
                        resolve_spec)
from ..sharding_names import fix_outputs
from ..sharding_types import type_constraint, typed_aval
from ..state import Ref, is_ref
from ..trace import EVAL_TRACE, Tracer, current_trace, get_aval
from . import donation, fast_path, jit_args, jit_devices, staging
from . import jit_diagnostics as diagnostics
from .stages import Traced, arg_sharding
from .ad import UndefinedPrimal, Zero, instantiate
from .batching import moveaxis
from .dce import call_rule, def_dce
from .jvp import jvp_jaxpr
from .partial_eval import partial_eval_jaxpr
from .staging import stage_closed
from .transpose import backward_pass
from .vmap import batch_jaxpr

jit_p = make_primitive("jit", multiple_results=True)


@jit_p.def_abstract_eval
def _jit_abstract_eval(*avals, jaxpr, **_):
    return jaxpr.out_avals


jit_p.def_key_reuse(key_reuse.call_rule("jit"))


# ---------------------------------------------------------------- the trace cache

_MAX_STAGED = 256  # signatures remembered per function (least recently used dropped)


class TraceCache:
    """The staged jaxprs of one function under one set of jit options, by signature (LRU,
    bounded), and its fast-path runners. Shared, as JAX's cache is, by every jit wrapper of
    that function with those options (`jit(f)(x)` in a loop traces f once); safe under
    threads (two threads may trace the same signature at once: the last one is kept)."""

    __slots__ = ("_staged", "runners", "__weakref__")

    def __init__(self):
        self._staged = LRU(_MAX_STAGED)
        self.runners = {}  # fast_path's: read and written without the lock (single dict ops)

    def get(self, key):
        return self._staged.get(key)

    def put(self, key, staged):
        self._staged.put(key, staged)

    def clear(self):
        self._staged.clear()
        self.runners.clear()

    def __len__(self):
        return len(self._staged)

    def keys(self):
        """The signatures staged (jax_explain_cache_misses compares a new one with them)."""
        return self._staged.keys()


# function -> {jit options: TraceCache}. Weak keys: the cache (and the jaxprs, constants and
# compiled programs it keeps alive) goes when the function does.
_SHARED = weakref.WeakKeyDictionary()
_PRIVATE = weakref.WeakSet()  # caches of functions that cannot be weakly referenced, or unshared
_SHARED_LOCK = threading.Lock()


def trace_cache(fun, options):
    """The cache of `fun` under hashable jit `options` (None: a private one)."""
    if options is not None:
        try:
            with _SHARED_LOCK:
                per_fun = _SHARED.get(fun)
                if per_fun is None:
                    per_fun = _SHARED[fun] = {}
                cache = per_fun.get(options)
                if cache is None:
                    cache = per_fun[options] = TraceCache()
                return cache
        except TypeError:  # fun or options unhashable, or fun not weakly referenceable
            pass
    cache = TraceCache()
    _PRIVATE.add(cache)
    return cache


def signature_key(in_tree, avals, static=(), static_kw=()):
    """What, besides the function and its options, decides a trace: the arguments' structure,
    avals and static values, the backend, the dtype config, jax_debug_key_reuse (under which
    jax.random marks its keys), the bound axis names, the context mesh and the two options
    that change sharding types (jax_auto_pcast, jax_remove_size_one_mesh_axis_from_type).
    jit_diagnostics.KEY_PARTS names each part, in this order."""
    return (in_tree, avals, static, static_kw, runtime.current_backend_name(),
            config.read("jax_enable_x64"), config.read("jax_numpy_dtype_promotion"),
            key_reuse.enabled(), axis_env_key(), mesh_context_key(), config.read("jax_auto_pcast"),
            config.read("jax_remove_size_one_mesh_axis_from_type"))


def clear_caches():
    """Drop every jit cache (and the backends' compiled executables)."""
    with _SHARED_LOCK:
        caches = [c for per_fun in list(_SHARED.values()) for c in per_fun.values()]
    for cache in caches + list(_PRIVATE):
        cache.clear()
    runtime.clear_backend_caches()


@functools.lru_cache(maxsize=64)
def _flat_tree(n):
    """The treedef of (args, kwargs) for n array arguments and no keywords."""
    return pytree.tree_flatten(((None,) * n, {}), is_leaf=lambda x: x is None)[1]


def _avals_of(leaves):
    return tuple(_arg_aval(x) for x in leaves)


def _is_jax_value(x):
    try:
        _arg_aval(x)
    except TypeError:
        return False
    return True


def _arg_aval(x):
    if isinstance(x, ShapeDtypeStruct):
        return type_constraint(ShapedArray(x.shape, dtypes.canonicalize_dtype(x.dtype),
                                           weak_type=x.weak_type),
                               x.sharding)
    return typed_aval(x)


class Staged:
    """The result of tracing: the closed jaxpr, captured tracers, and the output tree."""

    __slots__ = ("closed", "tracer_consts", "out_tree", "in_tree")

    def __init__(self, closed, tracer_consts, out_tree, in_tree):
        self.closed, self.tracer_consts = closed, tracer_consts
        self.out_tree, self.in_tree = out_tree, in_tree

    @property
    def jaxpr(self):
        return self.closed


def _normalize_argnums(argnums):
    return () if argnums is None else jit_args.index_tuple(argnums)


class JitWrapped:
    """What jax.jit returns: callable, with .lower(), .trace(), .eval_shape(), .clear_cache()."""

    _donate_argnames = ()

    def __init__(self, fun, static_argnums, static_argnames, donate_argnums,
                 in_shardings, out_shardings, shared=True, who="jit", donate_argnames=None):
        functools.update_wrapper(self, fun)
        self._fun = fun
        self._static_argnums = _normalize_argnums(static_argnums)
        self._static_argnames = _names(static_argnames)
        self._donate_argnums = _normalize_argnums(donate_argnums)
        self._in_shardings = in_shardings
        self._out_shardings = out_shardings
        self._who = who  # "pjit" resolves PartitionSpecs against `with mesh:` too
        self._signature = _signature(fun)
        self._resolve_static_names()
        self._donate_argnums, self._donate_argnames = _by_number_and_name(
            self._signature, self._donate_argnums, _names(donate_argnames))
        self._name = self.__name__ = diagnostics.fun_name(fun)
        self._cache = trace_cache(fun, self._options() if shared else None)
        self._fast = self._cache.runners

    def _options(self):
        """What, besides the function, decides its traces (the shared cache's key)."""
        return (type(self), self._name, self._static_argnums, self._static_argnames,
                self._donate_argnums, self._donate_argnames, self._in_shardings,
                self._out_shardings, self._who)

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
            avals = tuple([typed_aval(a) for a in args])
        else:
            static, static_kw, dyn_args, dyn_kwargs = self._split(args, kwargs)
            leaves, in_tree = pytree.tree_flatten((dyn_args, dyn_kwargs))
            avals = self._arg_avals(leaves, dyn_args, dyn_kwargs)
        key = signature_key(in_tree, avals, static, static_kw)
        staged = self._cache.get(key)
        if staged is None:
            staged = self._miss(key, (static, static_kw, in_tree, avals), leaves)
            if not staged.tracer_consts:
                self._cache.put(key, staged)
        if any([type(x) is Ref for x in leaves]):
            self._check_ref_aliasing(leaves, staged.closed.consts, dyn_args, dyn_kwargs)
        return staged, leaves

    def _check_ref_aliasing(self, leaves, consts, args, kwargs):
        """JAX's errors for a reference passed twice, or passed and closed over: the
        program's writes through one name would be unseen through the other."""
        names = diagnostics.flat_arg_names(self._signature, args, kwargs)
        seen = {}
        for name, x in zip(names, leaves):
            if type(x) is not Ref:
                continue
            if any(c is x for c in consts):
                raise ValueError(
                    f"when tracing {diagnostics.fun_sourceinfo(self._fun)} for jit, a mutable "
                    f"array reference of type {x.aval} was both closed over and passed as the "
                    f"argument {name}")
            if id(x) in seen:
                raise ValueError(
                    "only one reference to a mutable array may be passed as an argument to a "
                    f"function, but when tracing {diagnostics.fun_sourceinfo(self._fun)} for jit the mutable "
                    f"array reference of type {x.aval} appeared at both {seen[id(x)]} and {name}.")
            seen[id(x)] = name

    def _ref_origin(self, flat_args, args, kwargs, out, ref):
        """(where in the result, where from) of a returned reference, as JAX says them: its
        output path, and the argument passing it or the line that made it."""
        return _output_path(out, ref), self._ref_source(flat_args, args, kwargs, ref)

    def _ref_source(self, flat_args, args, kwargs, ref):
        at = [i for i, a in enumerate(flat_args) if a is ref]
        if at:
            name = diagnostics.flat_arg_names(self._signature, args, kwargs)[at[0]]
            return f"\n\nThe returned mutable array was passed in as the argument {name}."
        made = next((e for e in getattr(getattr(ref, "_trace", None), "eqns", ())
                     if e.outvars and ref._var in e.outvars), None)
        if made is None or made.source_info is None:
            return ""
        return ("\n\nThe returned mutable array was created on line "
                f"{made.source_info.summarize()}.")

    def _arg_avals(self, leaves, dyn_args, dyn_kwargs):
        """The avals of the dynamic arguments; TypeError in JAX's words naming the first one
        that is no JAX value (its path by the function's parameter names)."""
        try:
            return _avals_of(leaves)
        except TypeError as err:
            if isinstance(err, errors.JAXTypeError):
                raise
            bad = next(i for i, x in enumerate(leaves) if not _is_jax_value(x))
            names = errors.arg_names(self._fun, dyn_args, dyn_kwargs) \
                if not self._static_argnums else [f"leaf {i}" for i in range(len(leaves))]
            raise TypeError(
                f"Error interpreting argument to {self._fun} as an abstract array. The "
                f"problematic value is of type {type(leaves[bad])} and was passed to the "
                f"function at path {names[bad].removeprefix('argument ')}.\nThis typically "
                "means that a jit-wrapped function was called with a non-array argument, and "
                "this argument was not marked as static using the static_argnums or "
                "static_argnames parameters of jax.jit.") from None

    def _miss(self, key, signature, leaves):
        """Trace on a cache miss, with the diagnostics JAX's options ask for."""
        diagnostics.check_tracing_allowed(self._fun)
        if config.read("jax_explain_cache_misses"):
            args, kwargs = pytree.tree_unflatten(signature[2], leaves)
            names = diagnostics.flat_arg_names(
                None if signature[0] else self._signature, args, kwargs)
            diagnostics.explain_cache_miss(self._fun, key, self._cache.keys(), names)
        with diagnostics.timed_trace(self._name):
            staged = self._trace(*signature)
        if config.read("jax_enable_checks"):
            typecheck_jaxpr(staged.closed.jaxpr)
        if key_reuse.enabled():  # as JAX, a jaxpr reusing a key fails when traced
            key_reuse.closed_signature(staged.closed, [
                key_reuse.is_key_array(x) for x in (*staged.tracer_consts, *leaves)])
        if current_trace() is EVAL_TRACE:
            diagnostics.log_compile(self._name, signature[3], self._in_shardings)
            if self._donate_argnums or self._donate_argnames:
                donation.warn_unusable(signature[3], *self._donation(staged))
        return staged

    def _donation(self, staged):
        """(the donated flat arguments, those an output reuses) of a staged call."""
        n = len(staged.tracer_consts)
        kept = jit_devices.used_inputs(staged.closed)[n:]  # JAX prunes the unused ones
        donated = [i for i in donation.donated_leaves(
            self._donate_argnums, self._donate_argnames, self._static_argnums, staged.in_tree)
            if kept[i]]
        avals = staged.closed.in_avals[n:]
        return donated, donation.reused(avals, donated, staged.closed.out_avals)

    def _trace(self, static, static_kw, in_tree, avals):
        out_tree_box, fixed, own = [], [], ([], [])

        def flat_fun(*flat_args):
            dyn_args, dyn_kwargs = pytree.tree_unflatten(in_tree, flat_args)
            if self._in_shardings is not None:
                dyn_args = _constrain(dyn_args, self._in_shardings, "in_shardings", self._who,
                                      targets=own[0])
            out = self._call_fun(static, static_kw, dyn_args, dyn_kwargs)
            if self._out_shardings is not None:
                out = _constrain(out, self._out_shardings, "out_shardings", self._who, fixed,
                                 own[1])
            out_leaves, out_tree = pytree.tree_flatten(out)
            out_tree_box.append(out_tree)
            origin = functools.partial(self._ref_origin, flat_args, dyn_args, dyn_kwargs, out)
            return [_check_output(x, self._fun, out_tree, i, origin)
                    for i, x in enumerate(out_leaves)]

        jaxpr, consts = staging.trace_to_jaxpr(flat_fun, avals)
        closed, tracer_consts = staging.closure_convert(jaxpr, consts)
        jit_devices.remember_own(closed, [None] * len(tracer_consts) + own[0], own[1])
        # results laid out by out_shardings keep their spec (JAX renames the others)
        fix_outputs([v for v, f in zip(closed.jaxpr.outvars, fixed) if f])
        return Staged(closed, tracer_consts, out_tree_box[0], in_tree)

    # The steady state (the same arguments' types as an earlier call) skips staging and
    # binding: see fast_path.py. Everything else goes through _call_staged.
    __call__ = fast_path.call

    def _call_staged(self, args, kwargs, fast_key=None):
        """Stage (or reuse) the jaxpr for these arguments and bind the call primitive;
        with `fast_key` (this call's fast-path key), remember how to repeat it directly."""
        staged, leaves = self._stage(args, kwargs)
        top = current_trace() is EVAL_TRACE
        donating = top and (self._donate_argnums or self._donate_argnames)
        ctx = _ctx_mesh()  # set_mesh's, not pjit's resource mesh (JAX prints none for it)
        with placement_mesh(self._who):  # (pjit's `with mesh:` is its context mesh)
            if top:
                check_execution_allowed(self._name)
                leaves = self._on_its_devices(staged, leaves, args, kwargs)
            if donating:
                reused = self._donation(staged)[1]
                donation.check_aliasing(leaves, reused)
            outs = jit_p.bind(*staged.tracer_consts, *leaves, name=self._name,
                              jaxpr=staged.closed, **ctx)
        if donating:  # each call deletes what it donates: no fast path
            donation.donate(leaves, reused, outs)
            fast_key = None
        if fast_key is not None and not staged.tracer_consts and not self._static_argnums:
            fast_path.remember(self._fast, fast_key, staged)
        return pytree.tree_unflatten(staged.out_tree, outs)

    def _on_its_devices(self, staged, leaves, args, kwargs):
        """The arguments, checked (JAX's ValueError when the call would span several device
        assignments), those committed to other devices than their explicit in_shardings
        moved there (as JAX moves them; the staged constraints lay out the rest)."""
        in_tree = self._split(args, kwargs)[2] if self._in_shardings is not None else ()
        ins = _targets(in_tree, self._in_shardings, "in_shardings", self._who)
        outs = () if self._out_shardings is None else _targets(
            pytree.tree_unflatten(staged.out_tree, [0] * staged.out_tree.num_leaves),
            self._out_shardings, "out_shardings", self._who)
        static = {*self._static_argnums, *self._static_argnames}
        jit_devices.check_call(self._fun, staged, leaves, lambda: jit_devices.arg_names(
            self._signature, args, kwargs, static), ins, outs)
        return [x if s is None or not isinstance(x, Array) or not x.committed
                or x.sharding._device_assignment == s._device_assignment else
                runtime.make_array(x._value(), x.aval, sharding=s, transfer="device_to_device")
                for x, s in zip(leaves, ins + [None] * (len(leaves) - len(ins)))]

    def trace(self, *args, **kwargs):
        """Stage without running: returns an object with .jaxpr and .lower()."""
        staged, leaves = self._stage(args, kwargs)
        return Traced(self, staged, [arg_sharding(x) for x in leaves])

    def lower(self, *args, **kwargs):
        return self.trace(*args, **kwargs).lower()

    def eval_shape(self, *args, **kwargs):
        return eval_shape(self, *args, **kwargs)

    def clear_cache(self):
        """Forget this function's traces (for every jit wrapper of it with these options)."""
        self._cache.clear()

    def __repr__(self):
        return f"<PjitFunction of {self._fun!r}>"

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self, obj)


def _constrain(tree, shardings, what, who, fixed=None, targets=None):
    """in_shardings/out_shardings become sharding constraints in the staged jaxpr, so the
    propagation rules (and both backends) place values exactly there. `fixed`, a list, gets
    whether each leaf is constrained; `targets`, a list, gets each leaf's sharding."""
    leaves, treedef = pytree.tree_flatten(tree)
    shardings = _targets(tree, shardings, what, who)
    if fixed is not None:
        fixed.extend(s is not None for s in shardings)
    if targets is not None:
        targets.extend(shardings)
    return pytree.tree_unflatten(treedef, [
        x if s is None else sharding_constraint_p.bind(x, sharding=s)
        for x, s in zip(leaves, shardings)])


def _targets(tree, shardings, what, who):
    """The sharding in/out_shardings give each leaf of tree (None: none). PartitionSpecs
    resolve against the context mesh (`who`'s: see sharding/context.py)."""
    n = len(pytree.tree_leaves(tree))
    if shardings is None:
        return [None] * n
    is_target = lambda s: s is None or isinstance(s, (Sharding, P))  # noqa: E731
    if isinstance(shardings, (Sharding, P)):
        targets = [shardings] * n
    else:
        if isinstance(shardings, list):
            shardings = tuple(shardings)
        targets = pytree.broadcast_prefix(f"{who} {what}", tree, shardings, is_target)
    return [None if s is None else resolve_spec(s, who, what) for s in targets]


def _signature(fun):
    try:
        return inspect.signature(fun)
    except (TypeError, ValueError):
        return None


def _check_hashable(value, where):
    try:
        hash(value)
    except TypeError:
        raise ValueError(
            f"Non-hashable static arguments are not supported. An error occurred while trying to "
            f"hash an object of type {type(value)}, {value!r} (static argument {where!r}). "
            "Static arguments must be hashable; pass arrays as dynamic arguments.") from None
    return value


def _output_path(out, leaf):
    """' at output tree path result...' for a leaf below the top of the function's result."""
    path = next(p for p, x in pytree.tree_flatten_with_path(out)[0] if x is leaf)
    return f" at output tree path result{pytree.keystr(path)}" if path else ""


def _check_output(x, fun, tree, i, origin=lambda ref: ("", "")):
    """x, output leaf i of fun; TypeError in JAX's words (naming the function, where it is
    defined and the leaf's key path) when it is no JAX value; ValueError for a reference
    (`origin(x)`: where in the result, and where it came from)."""
    if is_ref(x):
        where, came = origin(x)
        raise ValueError(f"function {diagnostics.fun_sourceinfo(fun)} traced for jit returned "
                         f"a mutable array reference of type {get_aval(x)}{where}, but mutable "
                         f"array references cannot be returned.{came}")
    if isinstance(x, Tracer) or hasattr(x, "aval"):
        return x
    try:
        get_aval(x)
    except TypeError:
        path = pytree.keystr(pytree.tree_flatten_with_path(
            pytree.tree_unflatten(tree, range(tree.num_leaves)))[0][i][0])
        where = f" at output component {path}" if path else ""  # as JAX: none for the output
        raise TypeError(f"function {diagnostics.fun_sourceinfo(fun)} traced for jit returned a "
                        f"value of type {type(x)}{where}, which is not a valid JAX type") from None
    return x


def jit(fun=None, *, static_argnums=None, static_argnames=None, donate_argnums=None,
        donate_argnames=None, in_shardings=None, out_shardings=None, keep_unused=False,
        device=None, backend=None, inline=False, abstracted_axes=None, compiler_options=None):
    """Stage `fun` to a jaxpr once per argument signature and run it compiled by the backend."""
    if fun is None:
        return lambda f: jit(f, static_argnums=static_argnums, static_argnames=static_argnames,
                             donate_argnums=donate_argnums, donate_argnames=donate_argnames,
                             in_shardings=in_shardings, out_shardings=out_shardings)
    if not callable(fun):
        raise TypeError(f"Expected a callable value, got {fun!r}")
    if inspect.isgeneratorfunction(fun):
        raise TypeError(f"Expected a function, got a generator function: {fun}")
    jit_args.check_argnums(fun, _signature(fun), static_argnums, static_argnames,
                           donate_argnums, donate_argnames)
    return JitWrapped(fun, static_argnums, static_argnames, donate_argnums,
                      in_shardings, out_shardings, donate_argnames=donate_argnames)


def _by_number_and_name(signature, nums, names):
    """Argument numbers and names completed from each other through the signature, as JAX
    completes donate_argnums and donate_argnames."""
    params = [] if signature is None else [
        n for n, p in signature.parameters.items() if p.kind.name == "POSITIONAL_OR_KEYWORD"]
    nums = {*nums, *(params.index(n) for n in names if n in params)}
    names = {*names, *(params[i] for i in nums if 0 <= i < len(params))}
    return tuple(sorted(nums)), tuple(sorted(names))


def _names(argnames):
    return (argnames,) if isinstance(argnames, str) else tuple(argnames or ())


def make_jaxpr(fun, static_argnums=(), axis_env=None, return_shape=False, abstracted_axes=None):
    """A function returning the ClosedJaxpr of `fun` at the given arguments."""
    wrapped = JitWrapped(fun, static_argnums, (), None, None, None, shared=False)

    @functools.wraps(fun)
    def make(*args, **kwargs):
        staged, _ = wrapped._stage(args, kwargs)
        closed = staged.closed
        if staged.tracer_consts:
            closed = _recapture(closed, len(staged.tracer_consts))
        if return_shape:
            shapes = pytree.tree_unflatten(staged.out_tree, [
                ShapeDtypeStruct.from_aval(a) for a in closed.out_avals])
            return closed, shapes
        return closed

    return make


def _recapture(closed, n):
    j = closed.jaxpr
    return ClosedJaxpr(Jaxpr(j.invars[:n] + j.constvars, j.invars[n:], j.outvars, j.eqns),
                       closed.consts)


def eval_shape(fun, *args, **kwargs):
    """Output shapes and dtypes of fun(*args) as ShapeDtypeStructs, without computing."""
    wrapped = JitWrapped(fun, None, None, None, None, None, shared=False)
    staged, _ = wrapped._stage(args, kwargs)
    return pytree.tree_unflatten(staged.out_tree, [
        ShapeDtypeStruct.from_aval(a)
        for a in staged.closed.out_avals])


# ---------------------------------------------------------------- jit_p's transformation rules

def _ctx_mesh():
    """jit's `ctx_mesh` param: the mesh set (set_mesh) when it is bound, which JAX's printed
    jaxprs show; absent without one."""
    mesh = get_current_mesh()
    return {} if mesh is None or mesh.empty else {"ctx_mesh": mesh}


# The rules pass `ctx_mesh` (in **ctx) on to the jits they bind, as JAX's do.

def _jit_jvp(primals, tangents, *, name, jaxpr, **ctx):
    nonzeros = [type(t) is not Zero for t in tangents]
    new, _ = jvp_jaxpr(jaxpr, nonzeros)
    outs = jit_p.bind(*primals, *[t for t in tangents if type(t) is not Zero],
                      name=name, jaxpr=new, **ctx)
    k = len(jaxpr.out_avals)
    return outs[:k], outs[k:]


def _jit_linearize(primals, tangents, *, name, jaxpr, **ctx):
    """The known (primal) part runs as one jit on the parent; the tangent part is staged."""
    nonzeros = [type(t) is not Zero for t in tangents]
    new, _ = jvp_jaxpr(jaxpr, nonzeros)
    nz_tangents = [t for t in tangents if type(t) is not Zero]
    unknowns = [False] * len(primals) + [True] * len(nz_tangents)
    known, unknown, out_unknowns, n_res = partial_eval_jaxpr(new, unknowns, dce=True)
    known, forwarded = _forward_residuals(known, n_res)
    known_outs = jit_p.bind(*primals, name=name, jaxpr=known, **ctx)
    n_known_out = len(known_outs) - forwarded.count(None)
    computed = iter(known_outs[n_known_out:])
    residuals = [next(computed) if i is None else primals[i] for i in forwarded]
    unknown_outs = iter(jit_p.bind(*residuals, *nz_tangents, name=name, jaxpr=unknown, **ctx))
    known_outs = iter(known_outs[:n_known_out])
    outs = [next(unknown_outs) if u else next(known_outs) for u in out_unknowns]
    n_primal = len(jaxpr.out_avals)
    return outs[:n_primal], outs[n_primal:]


def _forward_residuals(known, n_res):
    """Residuals that are inputs of the known jaxpr are passed on by the caller instead of
    returned (JAX's forwarding): the known jaxpr without those outputs, and for each residual
    the index of the input it is, or None."""
    jaxpr = known.jaxpr
    n_out = len(jaxpr.outvars) - n_res
    position = {v: i for i, v in enumerate(jaxpr.invars)}
    forwarded = [position.get(v) for v in jaxpr.outvars[n_out:]]
    outvars = jaxpr.outvars[:n_out] + [v for v, i in zip(jaxpr.outvars[n_out:], forwarded)
                                       if i is None]
    return ClosedJaxpr(jaxpr._replace(outvars=outvars), known.consts), forwarded


def _jit_batch(axis_data, vals, dims, *, name, jaxpr, **ctx):
    vals = [v if d is None else moveaxis(v, d, 0) for v, d in zip(vals, dims)]
    new, _ = batch_jaxpr(jaxpr, axis_data, [d is not None for d in dims], True)
    outs = jit_p.bind(*vals, name=name, jaxpr=new, **ctx)
    return outs, [0] * len(outs)


def transpose_call(bind, cts, args, jaxpr):
    """The transpose of a call-like primitive over `jaxpr`: its body run backwards (the
    equations not depending on the linear inputs evaluated again first, then the linear ones
    transposed), staged and bound with `bind(*operands, jaxpr=...)`; cotangents for the
    linear arguments, None for the others."""
    linear = [type(a) is UndefinedPrimal for a in args]
    known = [a for a in args if type(a) is not UndefinedPrimal]
    ct_avals = [a.to_tangent_aval() for a in jaxpr.out_avals]

    def fun(*flat):
        kn, ct = iter(flat[:len(known)]), flat[len(known):]
        lin_in = [True if lin else next(kn) for lin in linear]
        res = backward_pass(jaxpr.jaxpr, jaxpr.consts, lin_in, list(ct))
        return [instantiate(r) for r, lin in zip(res, linear) if lin]

    new = stage_closed(fun, [get_aval(a) for a in known] + ct_avals)
    outs = iter(bind(*known, *map(instantiate, cts), jaxpr=new))
    return [next(outs) if lin else None for lin in linear]


def _jit_transpose(cts, *args, name, jaxpr, **ctx):
    return transpose_call(functools.partial(jit_p.bind, name=name, **ctx), cts, args, jaxpr)


def _jit_partial_eval(eqn, unknowns_in):
    """A jit equation with some unknown inputs becomes a known jit and an unknown jit."""
    closed = eqn.params["jaxpr"]
    known, unknown, out_unknowns, n_res = partial_eval_jaxpr(closed, unknowns_in, dce=True)
    res_vars = [Var(a) for a in known.out_avals[len(known.out_avals) - n_res:]]
    known_out = [v for v, u in zip(eqn.outvars, out_unknowns) if not u]
    unknown_out = [v for v, u in zip(eqn.outvars, out_unknowns) if u]
    k_in = [v for v, u in zip(eqn.invars, unknowns_in) if not u]
    u_in = [v for v, u in zip(eqn.invars, unknowns_in) if u]
    rest = {k: v for k, v in eqn.params.items() if k != "jaxpr"}
    k_eqn = JaxprEqn(jit_p, k_in, known_out + res_vars, dict(rest, jaxpr=known))
    u_eqn = JaxprEqn(jit_p, res_vars + u_in, unknown_out, dict(rest, jaxpr=unknown))
    return [k_eqn], [u_eqn], out_unknowns


jit_p.def_call("jaxpr")
jit_p.def_jvp(_jit_jvp)
jit_p.def_linearize(_jit_linearize)
jit_p.def_batch(_jit_batch)
jit_p.def_transpose(_jit_transpose)
jit_p.def_partial_eval(_jit_partial_eval)
jit_p.def_pp(pp_call)
def_dce(jit_p)(call_rule())
