"""debug_callback and debug_print: effects that call Python with the runtime values of their
operands (eagerly, when a jitted program runs, once per batch element under vmap, on primal
values under differentiation, once per device in shard_map), and jax.debug's functions
binding them."""
import copy
import logging
import string
import sys

import numpy as np

from .. import pytree, source_info
from .. import sharding_propagation as sp
from ..primitive import make_primitive
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
