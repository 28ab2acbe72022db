"""jax.typeof: a value's type, with the sharding it carries (Explicit mesh axes)."""
from ..core.sharding import NamedSharding, P, get_abstract_mesh
from ..core.sharding_names import GSPMDSharding
from ..core.array import Array
from ..core.avals import ShapeDtypeStruct, ShapedArray
from ..core.state import is_ref_type
from ..core.sharding_types import UnknownSharding, drop_dim, layout_type, typed_aval
from .random.prng import PRNGKeyArray


def typeof(x):
    """The type of x as jax.typeof gives it: shape, dtype, weak type and the sharding in the
    type (the spec's Explicit mesh axes: `float32[8@x,4]` on an Explicit mesh), for concrete
    arrays and traced values alike."""
    if isinstance(x, PRNGKeyArray):
        return _key_type(x)
    aval = x.to_aval() if isinstance(x, ShapeDtypeStruct) else typed_aval(x)
    if is_ref_type(aval):  # `Ref{float32[3]}`: references carry no sharding type
        return aval
    if isinstance(x, Array) and isinstance(x.sharding, NamedSharding) and \
            not isinstance(x.sharding, GSPMDSharding):  # (typed by its aval, as JAX's)
        return layout_type(aval, x.sharding)  # on Auto axes too, as JAX's
    if aval.sharding is None:
        aval = _top_level_type(x, aval)
    if isinstance(aval.sharding, UnknownSharding):
        raise NotImplementedError(
            f"jax.typeof of a value of shape {aval.str_short(short_dtypes=False)} made on "
            "Explicit mesh axes by a primitive refjax has no sharding rule for: its sharding "
            "type is unknown")
    if aval.sharding is None:
        return aval.update(sharding=NamedSharding(get_abstract_mesh(), P(*[None] * aval.ndim)))
    return aval


def _top_level_type(x, aval):
    """A tracer of grad or vmap over concrete arrays takes its type from theirs."""
    if hasattr(x, "primal"):
        return aval.update(sharding=typeof(x.primal).sharding)
    if isinstance(getattr(x, "bdim", None), int):
        return aval.update(sharding=drop_dim(typeof(x.val), x.bdim))
    return aval


class KeyShapedArray(ShapedArray):
    """The type of a typed key array (`key<fry>[3]`): refjax's keys wrap uint32 key data, so
    this type exists for jax.typeof; it prints and compares as JAX's ShapedArray of keys."""

    __slots__ = ()

    def __init__(self, shape, dtype, weak_type=False, sharding=None, vma=frozenset()):
        super().__init__(shape, "uint32", weak_type, sharding, vma)
        self.dtype = dtype

    def update(self, **changes):
        fields = dict(shape=self.shape, dtype=self.dtype, sharding=self.sharding, vma=self.vma)
        fields.update(changes)
        return KeyShapedArray(**fields)


def _key_type(keys):
    """The type of the key data without its trailing key dimensions, with the key dtype."""
    data = typeof(keys._base_array)
    n = len(keys._impl.key_shape)
    spec = data.sharding.spec
    sharding = NamedSharding(data.sharding.mesh, P(*tuple(spec)[:len(spec) - n]))
    return KeyShapedArray(data.shape[:data.ndim - n], keys.dtype, sharding=sharding,
                          vma=data.vma)
