"""jax.experimental.layout's Layout and Format, and Array.format: the memory layout XLA's
CPU client gives every buffer (row-major, untiled, elements unpacked)."""
from ..core.sharding.shardings import Sharding


class _Auto:
    """Layout.AUTO: let the compiler choose the layout."""

    def __repr__(self):
        return "AUTO"


class Layout:
    """The order of an array's dimensions in memory (major_to_minor: the slowest-varying
    first), its tiling (None: the compiler's default) and the storage size of sub-byte
    elements (0: unpacked), as jax.experimental.layout.Layout."""

    AUTO = _Auto()

    def __init__(self, major_to_minor, tiling=None, sub_byte_element_size_in_bits=0):
        self.major_to_minor = tuple(major_to_minor)
        self.tiling = None if tiling is None else tuple(tuple(t) for t in tiling)
        self.sub_byte_element_size_in_bits = sub_byte_element_size_in_bits

    def _key(self):
        return self.major_to_minor, self.tiling, self.sub_byte_element_size_in_bits

    def __repr__(self):
        return (f"Layout(major_to_minor={self.major_to_minor}, tiling={self.tiling}, "
                f"sub_byte_element_size_in_bits={self.sub_byte_element_size_in_bits})")

    def __eq__(self, other):
        return isinstance(other, Layout) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def update(self, **changes):
        """A copy with the given fields replaced."""
        fields = dict(zip(("major_to_minor", "tiling", "sub_byte_element_size_in_bits"),
                          self._key()))
        return Layout(**{**fields, **changes})

    def check_compatible_aval(self, aval_shape):
        """ValueError, as JAX's, unless the layout orders as many dimensions as the shape has."""
        if len(self.major_to_minor) != len(aval_shape):
            raise ValueError("Length of major_to_minor and the rank of the value should match. "
                             f"Got major_to_minor={self.major_to_minor} and shape={aval_shape}")


class Format:
    """A layout and a sharding together (jax.experimental.layout.Format): what Array.format
    gives and what jit's in/out_shardings may ask for."""

    __slots__ = ("layout", "sharding")

    def __init__(self, layout=None, sharding=None):
        _check_format(layout, sharding)
        self.layout, self.sharding = layout, sharding

    def __repr__(self):
        return f"Format(layout={self.layout}, sharding={self.sharding})"

    def __eq__(self, other):
        return isinstance(other, Format) and (self.layout, self.sharding) == \
            (other.layout, other.sharding)

    def __hash__(self):
        return hash((self.layout, self.sharding))


def _check_format(layout, sharding):
    """JAX's errors: a concrete layout needs a concrete sharding; each must be of its type."""
    if isinstance(layout, Layout) and sharding is None:
        raise ValueError(
            f"Sharding has to be concrete when layout is of type {type(layout)}. Please pass a "
            "`jax.sharding.NamedSharding` or `jax.sharding.SingleDeviceSharding` to the "
            f"sharding argument. Got sharding {sharding}")
    if not isinstance(layout, (Layout, _Auto, type(None))):
        raise TypeError(
            "Invalid value received for the layout argument. Expected values are `None`, "
            f"`Layout.AUTO` or an instance of `Layout`. Got {layout} of type {type(layout)}")
    if not isinstance(sharding, (Sharding, type(None))):
        raise TypeError(
            "Invalid value received for the sharding argument. Expected values are `None` or "
            f"an instance of `jax.Sharding`. Got {sharding} of type {type(sharding)}")


def cpu_layout(ndim):
    """The layout XLA's CPU client gives a buffer of rank ndim, whatever its dtype or the
    operation that made it: dimensions in descending order of significance (minor_to_major
    ndim-1, ..., 0), no tiles, sub-byte types stored a byte per element."""
    return Layout(tuple(range(ndim)), (), 0)


def array_format(self):
    """The array's memory layout on each device and its sharding (jax.Array.format); a
    deleted array's layout is None, as JAX's (it has no buffers)."""
    return Format(None if self.is_deleted() else cpu_layout(self.ndim), self.sharding)
