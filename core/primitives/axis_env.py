"""Axis names in scope (vmap, pmap and shard_map axes) and the checks collectives make of them."""
import math
import threading
from contextlib import contextmanager

from ..trace import EvalTrace, current_trace

# ---------------------------------------------------------------- axis names in scope


class _AxisEnv(threading.local):
    frames = ()


_axis_env = _AxisEnv()
AXIS_ENV = _axis_env  # `.frames` is empty when no axis name is bound (read by jit's fast path)


@contextmanager
def extend_axis_env(sizes, check_vma=None):
    """Bind axis names (a {name: size} dict) while a body is traced (shard_map, pmap), so that
    collectives staged inside know the axes' sizes. The frame also remembers the scope outside
    it at the time, which lets an unbound name be reported when it is certainly unbound, and
    whether values are typed with their varying manual axes (a check_vma shard_map body;
    None: as the enclosing frame)."""
    outer, complete = axis_scope()
    frame = (dict(sizes), outer, complete, vma_checked() if check_vma is None else check_vma)
    prev, _axis_env.frames = _axis_env.frames, _axis_env.frames + (frame,)
    try:
        yield
    finally:
        _axis_env.frames = prev


def axis_scope():
    """({name: size} of the named axes enclosing the current trace, outermost first,
    complete): `complete` is False when a staging trace hides what lies outside it and no axis
    env frame (vmap, pmap, shard_map body) tells, so a name missing may still be bound there."""
    traced, trace = [], current_trace()
    while True:
        data = getattr(trace, "axis_data", None)
        if data is not None and data.name is not None:
            traced.append((data.name, data.size))
        traced.extend(reversed(getattr(trace, "bound_axes", {}).items()))  # eager shard_map's
        if isinstance(trace, EvalTrace):
            return _outermost_first({}, traced), True
        parent = getattr(trace, "parent", None)
        if parent is None:
            framed, complete = _with_env_frames({})
            return _outermost_first(framed, traced), complete
        trace = parent


def _outermost_first(framed, traced):
    """The frames' names (outside the traces), then the traces' from the outermost; an inner
    binding of a name shadows an outer one."""
    sizes = dict(framed)
    for name, size in reversed(traced):
        sizes[name] = size
    return sizes


def _with_env_frames(sizes):
    if not _axis_env.frames:
        return sizes, False
    frame_sizes, outer, complete, _ = _axis_env.frames[-1]
    for name, size in {**outer, **frame_sizes}.items():
        sizes.setdefault(name, size)
    return sizes, complete


def vma_checked():
    """Whether values staged now are typed with the manual axes they vary over (JAX's
    `_check_vma`): True inside a staged shard_map body with check_vma=True, False inside one
    with check_vma=False, None elsewhere."""
    return _axis_env.frames[-1][3] if _axis_env.frames else None


def axis_env_key():
    """What a body staged now sees of the axis env (names, sizes, whether complete, vma
    typing), hashable: part of jit's cache key, since collectives bake the axis sizes into the
    staged jaxpr."""
    sizes, complete = _with_env_frames({})
    return frozenset(sizes.items()), complete, vma_checked()


def _unbound_error(api, name, sizes):
    in_scope = ", ".join(repr(n) for n in sizes) or "none"
    return NameError(
        f"{api}: unbound axis name {name!r}. Axis names in scope: {in_scope}. Collectives act "
        "on axes named by an enclosing jax.vmap(..., axis_name=...), jax.pmap(..., axis_name=...) "
        "or shard_map mesh axis.")


def check_axis_names(names, api):
    """Raise NameError when one of `names` is certainly not bound by an enclosing axis."""
    sizes, complete = axis_scope()
    for name in names:
        if complete and name not in sizes:
            raise _unbound_error(api, name, sizes)


def axis_size(name, api):
    """The size of the named axis, from the enclosing traces or the axis env."""
    sizes, _ = axis_scope()
    if name not in sizes:
        raise _unbound_error(api, name, sizes)
    return sizes[name]


def lax_axis_size(axis_name):
    """lax.axis_size: the size of a named axis bound by vmap, pmap or shard_map (for a tuple
    of names, the product of their sizes); NameError for a name not bound."""
    return math.prod([axis_size(n, "lax.axis_size") for n in _axis_names(axis_name)])


def _axis_names(axis_name):
    names = tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)
    for n in names:
        if isinstance(n, int) and not isinstance(n, bool):
            raise TypeError(f"refjax collectives take axis names, not positional axes; got "
                            f"{axis_name!r}. Reduce positional axes with jnp.sum/jnp.max.")
    return names


def _single_name(axis_name, api):
    names = _axis_names(axis_name)
    if len(names) != 1:
        raise NotImplementedError(f"{api} over several axes {names} is not supported; "
                                  "apply it one axis at a time.")
    return names[0]


def _no_groups(axis_index_groups, api):
    if axis_index_groups is not None:
        raise NotImplementedError(f"{api}: axis_index_groups is not supported by refjax")


def binding_order(names):
    """`names` sorted outermost binding first: for shard_map, the mesh's axis order (the
    order JAX's ppermute numbers devices in, whatever order the names are given in)."""
    order = list(axis_scope()[0])
    return tuple(sorted(names, key=lambda n: order.index(n) if n in order else len(order)))
