"""pvary and pcast: the lax functions casting values to varying over manual mesh axes (JAX's
vma types), binding `pvary` (parallel.py)."""
from .. import pytree
from ..trace import EvalTrace, as_value, current_trace, get_aval
from ..vma import axis_state
from .axis_env import _axis_names, axis_scope, binding_order, check_axis_names, vma_checked
from .parallel import pvary_p


def pvary(x, axis_name):
    """x marked as varying over the named axes (the values are unchanged): shard_map's
    replication check then treats it as device-varying. A no-op in a shard_map body with
    check_vma=False, as JAX's; JAX's ValueError for a value already varying over them."""
    axes = _axis_names(axis_name)
    if isinstance(current_trace(), EvalTrace) and not axis_scope()[0]:
        raise ValueError("pvary should be called under jax.shard_map.")  # JAX's, eagerly
    check_axis_names(axes, "pvary")
    if vma_checked() is False:
        return x
    return pytree.tree_map(lambda leaf: _pvary_leaf(as_value(leaf), axes), x)


def _pvary_leaf(x, axes):
    aval = get_aval(x)
    if set(axes) & aval.vma:
        raise ValueError(
            "pvary is a invariant->variant collective. This means that the axis names "
            "mentioned in `axes` passed to `pvary` must not be present in "
            f"`jax.typeof(inp).mat.varying`. Got axes={tuple(axes)} and "
            f"jax.typeof(inp)={aval.str_short(short_dtypes=False)}")
    return pvary_p.bind(x, axes=binding_order(axes))


_PCAST_TARGETS = ("varying", "reduced", "unreduced")


def pcast(x, axis_name, *, to):
    """JAX 0.10's spelling of pvary: pcast(x, axes, to="varying"). The reduced and unreduced
    types belong to Explicit mesh axes, which refjax does not model."""
    if isinstance(axis_name, (set, frozenset)):  # JAX's: an unordered set names no order
        raise TypeError(f"axis_name={axis_name!r} must be a tuple or a str. Got {axis_name}")
    if to not in _PCAST_TARGETS:
        raise ValueError(f"Got unexpected `to` value. Allowed `to` values are: "
                         f"{set(_PCAST_TARGETS)}")
    if to != "varying":
        raise ValueError(f"pcast(..., to={to!r}): refjax models device-varying values only; "
                         "reduced and unreduced types (Explicit mesh axes) are not supported")
    axes = _axis_names(axis_name)

    def one(leaf):
        if vma_checked() and axis_state(get_aval(leaf), axes, "jax.lax.pcast") == "varying":
            raise ValueError(f"Unsupported pcast from=varying, to={to!r}")
        return pvary(leaf, axes)
    return pytree.tree_map(one, x)
