"""The device assignment a jitted call runs on, checked as JAX checks it: its committed
arguments, explicit in/out shardings and the shardings named inside it must agree."""
import inspect
import weakref

from .. import pytree
from ..array import Array
from ..jaxpr import subjaxprs
from ..sharding import NamedSharding, P
from ..sharding import device_sets as ds
from ..sharding_propagation import constraint_sharding
from ..sharding_propagation import used_inputs as used_inputs_of

_INNER = weakref.WeakKeyDictionary()  # ClosedJaxpr -> the places named inside it
_USED = weakref.WeakKeyDictionary()  # ClosedJaxpr -> whether each input is used
_OWN = weakref.WeakKeyDictionary()  # a jit's ClosedJaxpr -> its in/out shardings, flat


def remember_own(closed, in_targets, out_targets):
    """Record the shardings a jit's in/out_shardings give its jaxpr's inputs and outputs: a
    jit inside jit asks for their devices (JAX's "jit inside jit")."""
    if any(s is not None for s in (*in_targets, *out_targets)):
        _OWN[closed] = (tuple(in_targets), tuple(out_targets))


def check_call(fun, staged, leaves, names, in_targets, out_targets):
    """JAX's ValueError when the call's committed arguments (or, for arguments jit reshards,
    their explicit in_shardings), its explicit out_shardings and the shardings named inside
    the jaxpr are on different device assignments. Nothing runs before it, nothing is
    cached by it."""
    used = used_inputs(staged.closed)[len(staged.tracer_consts):]
    places = ds.context_places() + _argument_places(leaves, names, in_targets, used)
    places += [ds.sharding_place(s, "explicit output sharding") for s in out_targets]
    places += inner_places(staged.closed, in_targets, out_targets)
    first = ds.check(_fun_name(fun), places)
    ds.check_abstract_targets(_fun_name(fun), first, in_targets, out_targets)
    ds.check_mesh_sizes(first, staged.closed.out_avals)


def inner_places(closed, in_targets=(), out_targets=()):
    """The places named inside a ClosedJaxpr but for jit's own in/out constraints (the same
    for every call of a trace: its targets are its jit's options)."""
    inner = _INNER.get(closed)
    if inner is None:
        inner = _INNER[closed] = _inner_places(closed.jaxpr, in_targets, out_targets)
    return inner


def used_inputs(closed):
    """Whether each input of a ClosedJaxpr is used: JAX prunes the unused ones (keep_unused
    defaults to False) before it compares devices."""
    used = _USED.get(closed)
    if used is None:
        used = _USED[closed] = used_inputs_of(closed.jaxpr)
    return used


def _argument_places(leaves, names, in_targets, used):
    """`names`: a function returning the leaves' names, called only when needed."""
    targets = list(in_targets) + [None] * (len(leaves) - len(in_targets))
    committed = ds.committed_places((i, x) for i, x in enumerate(leaves) if used[i])
    if not any(targets) and not committed:
        return []
    names, by_leaf = names(), {p.name: p for p in committed}
    return [_in_sharding_place(s, leaves, names) if s is not None else
            by_leaf.get(i) and ds.Place(by_leaf[i].assignment, names[i], by_leaf[i].aval)
            for i, s in enumerate(targets)]


def _in_sharding_place(sharding, leaves, names):
    """An explicit in_sharding's Place, named (as JAX names it) after the first argument
    already on its devices, committed or not; else "explicit input sharding" (JAX prints
    its internal "ARG_SHARDING")."""
    place = ds.sharding_place(sharding, "explicit input sharding")
    for name, x in zip(names, leaves):
        if place is not None and type(x) is Array and \
                x.sharding._device_assignment == place.assignment:
            return ds.Place(place.assignment, name, x.aval)
    return place


def arg_names(signature, args, kwargs, static=()):
    """JAX's names of a call's array arguments (its debug info's arg_names): the parameter
    each binds to in the signature, then the path inside it (`t['p']`, `rest[1]`,
    `kw['z']`); `args[i]` or the keyword where nothing binds. `static`: the positions and
    keywords of static arguments (left out, as their leaves are no arguments)."""
    flat = pytree.tree_flatten_with_path((tuple(args), kwargs))[0]
    params = list(signature.parameters.values()) if signature is not None else []
    return [_param_name(params, path[0].idx, _key(path[1])) + pytree.keystr(path[2:])
            for path, _ in flat if _key(path[1]) not in static]


def _key(entry):
    return getattr(entry, "idx", getattr(entry, "key", None))


def _param_name(params, keyword, key):
    kinds = [p.kind for p in params]
    if keyword:
        var = _VAR_KEYWORD in kinds and params[kinds.index(_VAR_KEYWORD)].name
        named = any(p.name == key and p.kind not in _VAR for p in params)
        return key if named or not var else f"{var}['{key}']"
    if _VAR_POSITIONAL in kinds and key >= kinds.index(_VAR_POSITIONAL):
        at = kinds.index(_VAR_POSITIONAL)
        return f"{params[at].name}[{key - at}]"
    return params[key].name if key < len(params) and kinds[key] in _POSITIONAL \
        else f"args[{key}]"


_VAR_POSITIONAL, _VAR_KEYWORD = inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD
_VAR = (_VAR_POSITIONAL, _VAR_KEYWORD)
_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def _inner_places(jaxpr, in_targets=(), out_targets=()):
    """The shardings named inside a jaxpr (sharding constraints, device_puts, shard_maps),
    nested jaxprs included, but for the constraints jit itself adds for its explicit
    in/out shardings."""
    own = _own_constraints(jaxpr, in_targets, out_targets)
    places = []
    for eqn in jaxpr.eqns:
        place = None if id(eqn) in own else _eqn_place(eqn)
        if place is not None:  # (most equations name no devices: the cache keeps only those)
            places.append(place)
        nested = _OWN.get(eqn.params.get("jaxpr")) if eqn.primitive.name == "jit" else None
        if nested is not None:
            places += [ds.sharding_place(s, "jit inside jit", _where(eqn))
                       for s in (*nested[0], *nested[1]) if s is not None]
        for inner in subjaxprs(eqn.params.values()):
            places += _inner_places(inner, *(nested or ()))
    return places


def _where(eqn):
    return "" if eqn.source_info is None else f" at {eqn.source_info.summarize()}"


def _eqn_place(eqn):
    """None for a reshard: JAX's names only its mesh's shape (`ds.is_reshard`)."""
    where = _where(eqn)
    kind = f"{eqn.primitive.name} inside jit"
    if eqn.primitive.name == "shard_map":
        return ds.sharding_place(NamedSharding(eqn.params["mesh"], P()), kind, where)
    sharding = constraint_sharding(eqn.primitive, eqn.params)
    if eqn.primitive.name == "sharding_constraint" and ds.is_reshard(sharding):
        return None
    return ds.sharding_place(sharding, kind, where)


def _own_constraints(jaxpr, in_targets, out_targets):
    """The ids of the constraint equations jit staged for its in/out shardings: one per
    constrained input (on its binder) and per constrained output (making it)."""
    wanted = {(id(v), s) for v, s in zip(jaxpr.invars, in_targets) if s is not None}
    made = {(id(v), s) for v, s in zip(jaxpr.outvars, out_targets) if s is not None}
    own = set()
    for eqn in jaxpr.eqns:
        s = constraint_sharding(eqn.primitive, eqn.params)
        if s is not None and ((id(eqn.invars[0]), s) in wanted
                              or (id(eqn.outvars[0]), s) in made):
            wanted.discard((id(eqn.invars[0]), s))
            own.add(id(eqn))
    return own


def _fun_name(fun):
    return getattr(fun, "__qualname__", None) or getattr(fun, "__name__", repr(fun))
