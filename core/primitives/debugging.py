"""debug_callback and debug_print: effects that call Python with the runtime values of their
operands (eagerly, when a jitted program runs, once per batch element under vmap, on primal
values under differentiation, once per device in shard_map), and jax.debug's functions
binding them; inspect_sharding, which calls Python with its operand's sharding when the
program is compiled (jax.debug.inspect_array_sharding)."""
import copy
import logging
import string
import sys
import weakref

import numpy as np

from .. import pytree, runtime, source_info
from .. import sharding_propagation as sp
from ..jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Var, subjaxprs
from ..primitive import make_primitive
from ..sharding import Mesh, NamedSharding, P, SingleDeviceSharding, get_current_mesh
from ..trace import get_aval
from .structural import index_in_dim

debug_callback_p = make_primitive("debug_callback", multiple_results=True)
debug_print_p = make_primitive("debug_print", multiple_results=True)


def _no_outputs(*avals, **params):
    return []


def _debug_jvp(prim):
    """Under differentiation the callback sees the primal values; it has no tangents."""
    def jvp(primals, tangents, **params):
        return prim.bind(*primals, **params), []
    return jvp


def _debug_batch(prim):
    """Under vmap the callback runs once per batch element, in order (as JAX unrolls it)."""
    def batch(axis_data, vals, dims, **params):
        for i in range(axis_data.size):
            prim.bind(*[v if d is None else index_in_dim(v, i, d)
                        for v, d in zip(vals, dims)], **params)
        return [], []
    return batch


for _prim in (debug_callback_p, debug_print_p):
    _prim.def_abstract_eval(_no_outputs)
    _prim.def_sharding(sp.replicated_outputs)  # (no outputs to type)
    _prim.def_jvp(_debug_jvp(_prim))
    _prim.def_batch(_debug_batch(_prim))
    _prim.def_vma(lambda eqn, ins, strict: [])


# ---------------------------------------------------------------- inspect_sharding

inspect_sharding_p = make_primitive("inspect_sharding", multiple_results=True)
inspect_sharding_p.def_abstract_eval(_no_outputs)
inspect_sharding_p.def_sharding(sp.replicated_outputs)
inspect_sharding_p.def_vma(lambda eqn, ins, strict: [])


# JAX's eager rule, as an impl: outside transformations the array's sharding is known and
# nothing is computed, so no backend runs it (under jit, the backends' rules do nothing).
@inspect_sharding_p.def_impl
def _inspect_now(value, *, callback):
    """Outside transformations: called back at once with the array's sharding."""
    callback(value.sharding)
    return []


@inspect_sharding_p.def_jvp
def _inspect_jvp(primals, tangents, **params):
    return inspect_sharding_p.bind(*primals, **params), []


@inspect_sharding_p.def_batch
def _inspect_batch(axis_data, vals, dims, **params):
    """JAX's: the batched value is inspected, once."""
    inspect_sharding_p.bind(*vals, **params)
    return [], []


def inspect_array_sharding(value, *, callback):
    """Call `callback(sharding)` for each array of the pytree `value`: at once for arrays;
    for traced values when the jitted program is compiled (once per compilation: per
    staged program and input shardings), with the sharding its layout gives the value."""
    for leaf in pytree.tree_leaves(value):
        inspect_sharding_p.bind(leaf, callback=callback)


# jaxprs -> whether they inspect shardings; the input shardings each was compiled for
_INSPECTS = weakref.WeakKeyDictionary()
_COMPILED_FOR = weakref.WeakKeyDictionary()


def inspect_compiled(closed, in_shardings, lowering=False):
    """JAX's compile-time calls of inspect_sharding's callbacks, for a jitted program run or
    compiled on inputs laid out by `in_shardings` (None: uncommitted), once per program and
    input layouts. When `lowering`, only a program on one device calls back (JAX calls back
    when lowering then, and when compiling otherwise)."""
    if not inspects(closed):
        return
    key = tuple(in_shardings)
    done = _COMPILED_FOR.setdefault(closed, set())
    if key in done:
        return
    found = _inspections(closed, list(in_shardings))
    if lowering and any(len(s.device_set) > 1 for _, s, _ in found):
        return
    done.add(key)
    for callback, sharding in _lowered_once(found):
        callback(sharding)


def inspect_eager(prim, params, in_shardings):
    """JAX compiles the control flow (cond, while, scan) and the partially manual shard_map it
    runs outside jit: their inspections call back then, with the layouts of the operands (a
    loop's or cond's once per body and input layouts; a shard_map's each time, as JAX's)."""
    if prim.name not in _EAGERLY_COMPILED or not any(map(_has_inspection,
                                                        subjaxprs(params.values()))):
        return
    if prim.name != "shard_map":
        # the program compiled for these jaxprs (each branch, a loop's condition and body)
        jaxprs = [p for v in params.values() for p in (v if type(v) is tuple else (v,))
                  if type(p) is ClosedJaxpr]
        done = _COMPILED_FOR.setdefault(jaxprs[0], set())
        key = (*map(weakref.ref, jaxprs[1:]), *in_shardings)  # (ids of freed ones recur)
        if key in done:
            return
        done.add(key)
    eqn = JaxprEqn(prim, [], [], params)
    for callback, sharding in _lowered_once(_nested_inspections(eqn, list(in_shardings))):
        callback(_as_compiled(sharding))


_EAGERLY_COMPILED = ("cond", "while", "scan", "shard_map")


def inspects(closed):
    """Whether a program inspects shardings (jax.debug.inspect_array_sharding)."""
    found = _INSPECTS.get(closed)
    if found is None:
        found = _INSPECTS[closed] = _has_inspection(closed.jaxpr)
    return found


def _has_inspection(jaxpr):
    return any(e.primitive is inspect_sharding_p or any(map(_has_inspection, subjaxprs(
        e.params.values()))) for e in jaxpr.eqns)


def _inspections(closed, in_shardings):
    """[(callback, sharding of its operand, its type)] of the inspections in a program, in
    order: the layout pass run to each inspected value (into called jaxprs)."""
    jaxpr = closed.jaxpr
    sites = [e for e in jaxpr.eqns if e.primitive is inspect_sharding_p or
             any(map(_has_inspection, subjaxprs(e.params.values())))]
    probe = Jaxpr(jaxpr.constvars, jaxpr.invars,
                  [v for e in sites for v in e.invars if type(v) is Var], jaxpr.eqns)
    laid_out = iter(sp.propagate_jaxpr(ClosedJaxpr(probe, closed.consts), in_shardings))
    found = []
    for eqn in sites:
        ins = [next(laid_out) if type(v) is Var else None for v in eqn.invars]
        if eqn.primitive is inspect_sharding_p:
            found.append((eqn.params["callback"], _as_compiled(ins[0]), eqn.invars[0].aval))
        else:
            found += _nested_inspections(eqn, ins)
    return found


def _nested_inspections(eqn, ins):
    """The inspections in an equation's jaxprs: a call's and each branch of a cond's on the
    operands' layouts; a loop body's on its carry's and consts' (as XLA lays out a loop's
    carry as its initial value); in a shard_map body, each device's block on the mesh's
    other axes (manual over every axis: JAX's P() over the mesh)."""
    prim, params = eqn.primitive, eqn.params
    if prim.call_jaxpr(params) is not None:
        return _inspections(prim.call_jaxpr(params), ins)
    if prim.name == "cond":
        return [found for branch in params["branches"] for found in _inspections(branch, ins[1:])]
    if prim.name in _LOOPS:
        return _LOOPS[prim.name](params, ins)
    mesh = params["mesh"]
    mesh = get_current_mesh() if getattr(mesh, "devices", None) is None else mesh
    if set(params["axis_names"]) == set(mesh.axis_names):
        manual = NamedSharding(Mesh(mesh.devices, mesh.axis_names), P())
        return [(callback, manual, None) for callback in _callbacks(params["jaxpr"])]
    blocks = [_auto_part(s, params["axis_names"]) for s in ins]
    return _inspections(params["jaxpr"], blocks)


def _lowered_once(found):
    """[(callback, sharding)] called back: on one device JAX calls back as it lowers each
    inspection, and lowers alike ones (the same callback on the same type) once per program
    (its lowering cache); on several, XLA's partitioner calls back for each."""
    if any(len(s.device_set) > 1 for _, s, _ in found):
        return [(callback, s) for callback, s, _ in found]
    once = {}
    for callback, s, aval in found:
        once.setdefault((id(callback), aval), (callback, s))
    return list(once.values())


def _while_inspections(params, ins):
    """JAX's order: the body's, then the condition's."""
    n_cond, n_body = params["cond_nconsts"], params["body_nconsts"]
    carry = ins[n_cond + n_body:]
    return (_inspections(params["body_jaxpr"], ins[n_cond:n_cond + n_body] + carry)
            + _inspections(params["cond_jaxpr"], ins[:n_cond] + carry))


def _scan_inspections(params, ins):
    """The body sees one slice of each scanned operand: its layout without the first entry;
    the body's inspections repeat in each copy of the body the lowering makes."""
    n = params["num_consts"] + params["num_carry"]
    found = _inspections(params["jaxpr"], ins[:n] + [_drop_first(s) for s in ins[n:]])
    return found * _body_copies(params["length"], params["unroll"])


def _body_copies(length, unroll):
    """How many copies of a scan's body JAX's lowering makes (each calls back): `unroll` in the
    loop and the remainder's, each iteration's when unrolled completely, none for length 0."""
    unroll = max(unroll, 1)
    return length if unroll >= length else unroll + length % unroll


_LOOPS = {"while": _while_inspections, "scan": _scan_inspections}


def _drop_first(sharding):
    if not isinstance(sharding, NamedSharding):
        return sharding
    return NamedSharding(sharding.mesh, P(*tuple(sharding.spec)[1:]))


def _auto_part(sharding, manual):
    """A partially manual shard_map operand's layout, as its body's block has it: the spec
    without the manual axes."""
    if not isinstance(sharding, NamedSharding):
        return sharding
    return NamedSharding(sharding.mesh, P(*[_without(e, manual) for e in sharding.spec]))


def _without(entry, manual):
    names = entry if isinstance(entry, tuple) else (entry,)
    kept = tuple(a for a in names if a is not None and a not in manual)
    return kept if len(kept) > 1 else (kept[0] if kept else None)


def _callbacks(jaxpr):
    jaxpr = getattr(jaxpr, "jaxpr", jaxpr)
    return [callback for e in jaxpr.eqns for callback in (
        [e.params["callback"]] if e.primitive is inspect_sharding_p else
        [c for inner in subjaxprs(e.params.values()) for c in _callbacks(inner)])]


def _as_compiled(sharding):
    """A value's sharding as JAX's compiler reports it: over the mesh's devices and names (its
    axis types not kept), the spec without trailing Nones; on one device, the default's (or,
    under a context mesh, which the computation runs on, replicated over it)."""
    if isinstance(sharding, NamedSharding):
        mesh, spec = sharding.mesh, tuple(sharding.spec)
        while spec and spec[-1] is None:
            spec = spec[:-1]
        return NamedSharding(Mesh(mesh.devices, mesh.axis_names), P(*spec),
                             memory_kind=sharding.memory_kind)
    mesh = get_current_mesh()
    if mesh is not None and not mesh.empty:
        return NamedSharding(Mesh(mesh.devices, mesh.axis_names), P())
    return sharding if isinstance(sharding, SingleDeviceSharding) else \
        runtime.get_backend().default_sharding()


# ---------------------------------------------------------------- running the callback

def run(prim, values, params):
    """What a backend does for debug_callback/debug_print: call the Python function with the
    operands' concrete values (refjax Arrays)."""
    if prim is debug_print_p:
        return _print(values, **params)
    params["callback"](*values)
    return []


def _print(values, *, fmt, has_placeholders, in_tree, static_args, np_printoptions,
           logging_record=None, **_):
    args, kwargs = _merge(in_tree, values, static_args)
    if has_placeholders:
        with np.printoptions(**dict(np_printoptions)):
            msg = fmt.format(*args, **kwargs)
    else:
        msg = " ".join((fmt, *(str(a) for a in args)))
    if logging_record is None:
        sys.stdout.write(msg + "\n")
    else:  # jax.debug.log: the record made where it was called, with the runtime message
        record = copy.copy(logging_record)
        record.msg = msg
        logger.handle(record)
    return []


logger = logging.getLogger("refjax.debug")


def _logging_record(level):
    """A log record naming the user's line that called jax.debug.log."""
    site = source_info.current()
    file, line = (site.file, site.line) if site is not None else ("(unknown file)", 0)
    return logger.makeRecord(logger.name, level, file, line, "", (), None)


def _split(args, kwargs):
    """(tree, leaves that are JAX values, {position: leaf} of the others) of (args, kwargs)."""
    leaves, tree = pytree.tree_flatten((args, kwargs))
    dynamic, static = [], {}
    for i, leaf in enumerate(leaves):
        try:
            get_aval(leaf)
            dynamic.append(leaf)
        except TypeError:
            static[i] = leaf
    return tree, dynamic, tuple(static.items())


def _merge(tree, dynamic, static):
    static, dynamic = dict(static), iter(dynamic)
    leaves = [static[i] if i in static else next(dynamic) for i in range(tree.num_leaves)]
    return pytree.tree_unflatten(tree, leaves)


# ---------------------------------------------------------------- jax.debug.callback, print

def debug_callback(callback=None, *args, ordered=False, partitioned=False, **kwargs):
    """Call `callback(*args, **kwargs)` with the runtime values of the arguments, wherever the
    call is staged (under jit, when the program runs). Two-call form:
    `debug_callback(ordered=True)(callback, *args, **kwargs)`."""
    def bind(callback, *c_args, **c_kwargs):
        if not callable(callback):
            raise TypeError("first argument to jax.debug.callback must be callable, but got an "
                            f"object of type {type(callback)}")
        tree, dynamic, static = _split(c_args, c_kwargs)
        debug_callback_p.bind(*dynamic, callback=_FlatCallback(callback, tree, static),
                              effect="OrderedDebug" if ordered else "Debug",
                              partitioned=partitioned)

    return _one_or_two_calls(bind, "debug_callback", callback, args, kwargs)


class _FlatCallback:
    """The user's callback over the flat dynamic operands (a param: hashed by identity)."""

    def __init__(self, callback, tree, static):
        self.callback, self.tree, self.static = callback, tree, static

    def __call__(self, *dynamic):
        args, kwargs = _merge(self.tree, dynamic, self.static)
        self.callback(*args, **kwargs)
        return ()

    def __repr__(self):
        return f"<function {getattr(self.callback, '__qualname__', 'callback')}>"


def debug_print(fmt=None, *args, ordered=False, partitioned=False, skip_format_check=False,
                _use_logging=False, **kwargs):
    """Print `fmt.format(*args, **kwargs)` with the runtime values of the arguments, wherever
    the call is staged (not an f-string: formatting is delayed). Two-call form:
    `debug_print(ordered=True)("x={x}", x=x)`."""
    def bind(fmt, *c_args, **c_kwargs):
        if not skip_format_check:
            _FormatChecker().format(fmt, *c_args, **c_kwargs)
        tree, dynamic, static = _split(c_args, c_kwargs)
        debug_print_p.bind(*dynamic, fmt=fmt, has_placeholders=_has_placeholders(fmt),
                           in_tree=tree, logging_record=(
                               _logging_record(logging.INFO) if _use_logging else None),
                           np_printoptions=tuple(np.get_printoptions().items()),
                           ordered=ordered, partitioned=partitioned, static_args=static)

    return _one_or_two_calls(bind, "debug_print", fmt, args, kwargs)


def debug_log(fmt=None, *args, ordered=False, partitioned=False, skip_format_check=False,
              **kwargs):
    """jax.debug.print's formatting, sent to the `refjax.debug` logger at INFO level (with
    the caller's file and line) when the values are known."""
    return debug_print(fmt, *args, ordered=ordered, partitioned=partitioned,
                       skip_format_check=skip_format_check, _use_logging=True, **kwargs)


def _has_placeholders(fmt):
    if not fmt:
        return False
    return next(iter(string.Formatter().parse(fmt)))[1] is not None


def _one_or_two_calls(bind, name, first, args, kwargs):
    if first is not None:
        bind(first, *args, **kwargs)
        return None
    if args or kwargs:
        raise TypeError(f"{name} received unexpected arguments in the two-call form: "
                        f"args={args} kwargs={kwargs}")
    return bind


class _FormatChecker(string.Formatter):
    """Checks a debug_print format against its arguments now (formatting waits for values)."""

    def format_field(self, value, format_spec):
        return ""

    def check_unused_args(self, used_args, args, kwargs):
        unused = [a for i, a in enumerate(args) if i not in used_args]
        unused_kwargs = [k for k in kwargs if k not in used_args]
        if unused:
            raise ValueError(f"Unused positional arguments to `jax.debug.print`: {unused}")
        if unused_kwargs:
            raise ValueError(
                f"Unused keyword arguments to `jax.debug.print`: {unused_kwargs}. You may be "
                "passing an f-string (i.e, `f\"{x}\"`) into `jax.debug.print` and instead "
                "should pass in a regular string.")
