"""sharding_constraint: the identity that fixes a value's layout (lax.with_sharding_constraint)."""
from .. import pytree
from ..avals import ShapedArray
from ..sharding import NamedSharding, P, Sharding, resolve_spec
from ..trace import get_aval
from ..primitive import make_primitive
from ..transforms.ad import deflinear

sharding_constraint_p = make_primitive("sharding_constraint")
sharding_constraint_p.def_layout("sharding")
sharding_constraint_p.def_abstract_eval(
    lambda x, *, sharding: ShapedArray(x.shape, x.dtype, x.weak_type))
deflinear(sharding_constraint_p,
          lambda ct, x, *, sharding: [sharding_constraint_p.bind(ct, sharding=sharding)])


def _batch(axis_data, vals, dims, *, sharding):
    """Under vmap the constraint is dropped: the batched value has another rank."""
    return vals[0], dims[0]


sharding_constraint_p.def_batch(_batch)


def with_sharding_constraint(x, shardings):
    """x (a pytree) laid out as `shardings` (a Sharding, a PartitionSpec under a mesh
    context, or a pytree prefix of them)."""

    def resolve(s):
        s = resolve_spec(s, "with_sharding_constraint", "shardings")
        if not isinstance(s, Sharding):
            raise TypeError(f"with_sharding_constraint expects Shardings, got {s!r}")
        return s

    leaves, tree = pytree.tree_flatten(x)
    is_target = lambda s: isinstance(s, (Sharding, P))  # noqa: E731
    targets = [shardings] * len(leaves) if is_target(shardings) else \
        pytree.broadcast_prefix("with_sharding_constraint", x, shardings, is_target)
    outs = []
    for leaf, s in zip(leaves, targets):
        s = resolve(s)
        if isinstance(s, NamedSharding):
            s.devices_indices_map(get_aval(leaf).shape)
        outs.append(sharding_constraint_p.bind(leaf, sharding=s))
    return pytree.tree_unflatten(tree, outs)
