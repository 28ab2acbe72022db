"""jit's steady state, kept apart from its meaning: a call whose arguments have the types of
an earlier call runs the backend's compiled program directly (`Backend.fast_runner`),
without staging, binding jit_p or propagating layouts. Its results are exactly those of
the full path in jit.py, which every other call takes."""
import functools
import operator

from .. import pytree, runtime
from ..array import Array
from ..config import OVERRIDES, checking_numerics, config
from ..primitives.parallel import AXIS_ENV
from ..sharding.mesh import _CURRENT_MESH, _RESOURCE_MESH
from ..trace import EVAL_TRACE, TRACE_STATE

_MAX_RUNNERS = 256  # per jitted function; past it the table starts again
_aval_attr = operator.attrgetter("aval")


def call(self, *args, **kwargs):
    """JitWrapped.__call__. At the top level (no transformation, no bound axis name, no
    scoped config override, no mesh context) a runner recorded for these argument avals runs them directly;
    anything else, and a runner that declines the arguments, takes the full path."""
    # Inline attribute reads only: each helper call here would cost a few percent of
    # jax.jit's whole dispatch.
    key = None
    if not kwargs and TRACE_STATE.trace is EVAL_TRACE and not AXIS_ENV.frames \
            and not OVERRIDES.get() and _CURRENT_MESH.get() is None \
            and _RESOURCE_MESH.get() is None:
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


def remember(runners, key, staged):
    """Record in `runners` the backend's runner for a staged jaxpr under this call's key (the
    runner declines what it cannot run exactly as the full path would, e.g. inputs on other
    devices; a backend without runners records nothing)."""
    if checking_numerics():  # each call's outputs are checked on the full path
        return
    runner = runtime.get_backend(key[1]).fast_runner(staged.closed)
    if runner is None:
        return
    if len(runners) >= _MAX_RUNNERS:
        runners.clear()
    runners[key] = runner, _rebuild(staged.out_tree)


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


_TREE = object()  # keeps the keys of nested arguments apart from those of flat Arrays


def _tree_key(args):
    """(key, leaves) of arguments in tuples, lists, dicts and None, or (None, None)."""
    leaves = []
    try:
        signature = _fast_signature(args, leaves)
    except _NotFast:
        return None, None
    return (config.version, runtime.current_backend_name(), _TREE, signature), leaves


def _rebuild(out_tree):
    """outs -> the output pytree (None: the output is one array)."""
    if pytree.treedef_is_leaf(out_tree) and out_tree.num_leaves == 1:  # not None's tree
        return None
    return functools.partial(pytree.tree_unflatten, out_tree)
