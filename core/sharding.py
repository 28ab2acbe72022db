"""Sharding types mirroring ``jax.sharding``: devices, meshes, partition specs and shardings."""

from __future__ import annotations

import collections
import contextlib
import contextvars
import dataclasses
import enum
import functools
import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

__all__ = [
    "AxisType", "Device", "DuplicateSpecError", "IndivisibleError", "Mesh",
    "MEMORY_KINDS", "NamedSharding", "P", "PartitionSpec", "Sharding",
    "SingleDeviceSharding", "UNCONSTRAINED", "get_current_mesh", "get_mesh",
    "make_cpu_devices", "make_mesh", "replica_groups", "set_mesh",
    "shard_indices",
]

Shape = tuple[int, ...]
Index = tuple[slice, ...]

MEMORY_KINDS = ("device", "pinned_host", "unpinned_host")
DEFAULT_MEMORY_KIND = "device"


def _freeze(obj, **attrs):
    """Set attributes on an otherwise immutable object (used by constructors)."""
    for name, value in attrs.items():
        object.__setattr__(obj, name, value)


class _Immutable:
    """Mixin rejecting attribute assignment after construction."""

    __slots__ = ()

    def __setattr__(self, name, value):
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __delattr__(self, name):
        raise AttributeError(f"{type(self).__name__} is immutable")


# ----------------------------------------------------------------------------
# Devices


@dataclasses.dataclass(frozen=True, eq=False)
class Device:
    """A virtual device; equality and hash are by ``(platform, id)``."""

    id: int
    platform: str = "cpu"
    device_kind: str = "cpu"
    process_index: int = 0

    @property
    def host_id(self) -> int:
        """Alias of ``process_index`` (as in JAX)."""
        return self.process_index

    @property
    def local_hardware_id(self) -> int:
        """Index of the device within its process."""
        return self.id

    def __eq__(self, other):
        if not isinstance(other, Device):
            return NotImplemented
        return (self.platform, self.id) == (other.platform, other.id)

    def __hash__(self):
        return hash((self.platform, self.id))

    def __repr__(self):
        return f"{self.platform.capitalize()}Device(id={self.id})"

    def __str__(self):
        return f"{self.platform}:{self.id}"


_CPU_DEVICES: dict[int, Device] = {}


@functools.cache
def make_cpu_devices(n: int) -> tuple[Device, ...]:
    """Return ``n`` CPU devices with ids ``0..n-1``; identical objects on every call."""
    if n < 0:
        raise ValueError(f"Number of devices must be non-negative, got {n}")
    return tuple(_CPU_DEVICES.setdefault(i, Device(i)) for i in range(n))


# ----------------------------------------------------------------------------
# Axis types and partition specs


class AxisType(enum.Enum):
    """How a mesh axis is treated by the partitioner."""

    Auto = enum.auto()
    Explicit = enum.auto()
    Manual = enum.auto()

    def __repr__(self):
        return self.name


def _get_unconstrained():
    return UNCONSTRAINED


class _UnconstrainedSingleton:
    """Sentinel spec entry: the dimension's sharding is left to the compiler."""

    __slots__ = ()

    def __repr__(self):
        return "UNCONSTRAINED"

    def __reduce__(self):
        return (_get_unconstrained, ())


UNCONSTRAINED = _UnconstrainedSingleton()


def _canonicalize_partition(partition):
    """Lists become tuples; ``()`` becomes None; 1-tuples collapse to their element."""
    if not isinstance(partition, (tuple, list)):
        return partition
    for entry in partition:
        if isinstance(entry, (tuple, list)):
            raise ValueError(
                "A tuple inside PartitionSpec cannot contain a nested tuple. Got"
                f" partition: {partition} and the nested tuple: {entry}")
    if not partition:
        return None
    if len(partition) == 1:
        return partition[0]
    return tuple(partition)


def _as_axis_set(value, what: str) -> frozenset:
    if isinstance(value, frozenset):
        return value
    if isinstance(value, set):
        return frozenset(value)
    raise TypeError(f"{what} argument of PartitionSpec should of type `frozenset`"
                    f" or `set`. Got type {value}")


def _axes_of(partition) -> tuple:
    """Mesh axis names of one spec entry (empty for None / UNCONSTRAINED)."""
    if partition is None or partition is UNCONSTRAINED:
        return ()
    return partition if isinstance(partition, tuple) else (partition,)


def _check_pspec_sets(partitions, unreduced, reduced):
    if None in unreduced:
        raise ValueError("unreduced cannot contain None. All elements in unreduced"
                         " should refer to the mesh axes.")
    if None in reduced:
        raise ValueError("reduced cannot contain None. All elements in reduced"
                         " should refer to the mesh axes.")
    if unreduced & reduced:
        raise ValueError("`unreduced` and `reduced` argument to PartitionSpec cannot"
                         f" overlap. Got unreduced: {unreduced} and reduced: {reduced}")
    for partition in partitions:
        for axis in _axes_of(partition):
            for label, axes in (("unreduced", unreduced), ("reduced", reduced)):
                if axis in axes:
                    raise ValueError(
                        f"partitions cannot overlap with {label} axes passed to"
                        f" PartitionSpec. Got partitions: {partitions} and {label}"
                        f" axes: {axes}")


def _make_pspec(partitions, unreduced, reduced):
    return P(*partitions, unreduced=unreduced, reduced=reduced)


class P(_Immutable):
    """Describes how each array dimension is partitioned over mesh axes.

    Each entry is None (replicated), a mesh axis name, a tuple of names (split
    major-to-minor over several axes) or ``P.UNCONSTRAINED``. Like JAX >= 0.7
    this is *not* a tuple: ``P('x') != ('x',)`` and ``P('x') != P('x', None)``.
    """

    __slots__ = ("_partitions", "unreduced", "reduced")
    UNCONSTRAINED = UNCONSTRAINED

    def __init__(self, *partitions, unreduced=frozenset(), reduced=frozenset()):
        parts = tuple(_canonicalize_partition(p) for p in partitions)
        hash(parts)  # unhashable entries are rejected with TypeError, as in JAX
        unreduced = _as_axis_set(unreduced, "unreduced")
        reduced = _as_axis_set(reduced, "reduced")
        _check_pspec_sets(parts, unreduced, reduced)
        _freeze(self, _partitions=parts, unreduced=unreduced, reduced=reduced)

    def __init_subclass__(cls, *args, **kwargs):
        raise TypeError("Subclassing `PartitionSpec` is prohibited.")

    @property
    def partitions(self) -> tuple:
        """The per-dimension entries."""
        return self._partitions

    def _key(self):
        return (self._partitions, self.unreduced, self.reduced)

    def __eq__(self, other):
        if not isinstance(other, P):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        body = repr(self._partitions)[1:-1]
        if not self.unreduced and not self.reduced:
            return f"P({body})"
        extras = []
        if self.unreduced:
            extras.append(f"unreduced={set(self.unreduced)!r}")
        if self.reduced:
            extras.append(f"reduced={set(self.reduced)!r}")
        body = "" if not body else f"{body} " if body.endswith(",") else f"{body}, "
        return f"P({body}{', '.join(extras)})"

    def __reduce__(self):
        return (_make_pspec, self._key())

    def _check_plain(self, what):
        if self.unreduced or self.reduced:
            raise ValueError(
                f"Using {what} is dangerous when PartitionSpec has non-empty"
                " unreduced/reduced set. Please use spec.partitions")

    def __getitem__(self, i):
        self._check_plain("pspec[...]")
        return self._partitions[i]

    def __iter__(self):
        self._check_plain("*pspec")
        return iter(self._partitions)

    def __len__(self):
        return len(self._partitions)

    def __add__(self, other):
        if isinstance(other, P):
            return P(*self._partitions, *other._partitions,
                     unreduced=self.unreduced | other.unreduced,
                     reduced=self.reduced | other.reduced)
        if isinstance(other, tuple):
            self._check_plain("`+ tuple`")
            return P(*self._partitions, *other)
        return NotImplemented

    def __radd__(self, other):
        if isinstance(other, tuple):
            self._check_plain("`tuple +`")
            return P(*other, *self._partitions)
        return NotImplemented

    def index(self, value) -> int:
        """Position of the first entry equal to ``value`` (canonicalized)."""
        return self._partitions.index(_canonicalize_partition(value))

    def count(self, value) -> int:
        """Number of entries equal to ``value`` (canonicalized)."""
        return self._partitions.count(_canonicalize_partition(value))

    def update(self, partitions=None, unreduced=None, reduced=None) -> P:
        """Copy with some fields replaced."""
        return P(*(self._partitions if partitions is None else partitions),
                 unreduced=self.unreduced if unreduced is None else unreduced,
                 reduced=self.reduced if reduced is None else reduced)

    def _normalized_spec_for_aval(self, ndim: int) -> P:
        out = [None if p is UNCONSTRAINED else p for p in self._partitions]
        out.extend([None] * (ndim - len(out)))
        return self.update(partitions=out)


PartitionSpec = P


# ----------------------------------------------------------------------------
# Meshes


def _normalize_axis_types(axis_names, axis_types, who: str) -> tuple[AxisType, ...]:
    if axis_types is None:
        axis_types = (AxisType.Auto,) * len(axis_names)
    if not isinstance(axis_types, tuple):
        axis_types = (axis_types,)
    if not all(isinstance(t, AxisType) for t in axis_types):
        raise TypeError(
            f"axis_types passed to {who} must be of type `AxisType`. Got"
            f" {axis_types} of type {tuple(type(t) for t in axis_types)}")
    if len(axis_names) != len(axis_types):
        raise ValueError(
            "Number of axis names should match the number of axis_types. Got"
            f" axis_names={axis_names} and axis_types={axis_types}")
    return axis_types


def _object_array(flat: Sequence, shape: tuple[int, ...]) -> np.ndarray:
    arr = np.empty(len(flat), dtype=object)
    arr[:] = list(flat)
    arr = arr.reshape(shape)
    arr.flags.writeable = False
    return arr


class Mesh(_Immutable, contextlib.ContextDecorator):
    """An n-d array of devices with one name per array axis.

    ``devices`` is a read-only numpy object array of :class:`Device`. Meshes are
    hashable and compare equal when devices (in order), shape, axis names and
    axis types agree. ``with mesh:`` makes it the current mesh (see
    :func:`get_current_mesh`).
    """

    __slots__ = ("devices", "axis_names", "axis_types", "size", "_flat")

    def __init__(self, devices, axis_names, axis_types=None):
        if not isinstance(devices, np.ndarray):
            devices = np.array(devices, dtype=object)
        if isinstance(axis_names, str):
            axis_names = (axis_names,)
        axis_names = tuple(axis_names)
        if any(n is None for n in axis_names):
            raise ValueError(f"Mesh axis names cannot be None. Got: {axis_names}")
        if devices.ndim != len(axis_names):
            raise ValueError(
                "Mesh requires the ndim of its first argument (`devices`) to equal"
                " the length of its second argument (`axis_names`), but got"
                f" devices.ndim == {devices.ndim} and"
                f" len(axis_names) == {len(axis_names)}.")
        axis_types = _normalize_axis_types(axis_names, axis_types, "Mesh")
        flat = tuple(devices.flat)
        empty = not axis_names and flat[0] is None
        _freeze(self, devices=_object_array(flat, devices.shape),
                axis_names=axis_names, axis_types=axis_types,
                size=0 if empty else math.prod(devices.shape), _flat=flat)

    def _key(self):
        return (self._flat, self.devices.shape, self.axis_names, self.axis_types)

    def __eq__(self, other):
        if not isinstance(other, Mesh):
            return NotImplemented
        return self is other or self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __reduce__(self):
        return (Mesh, (self.devices, self.axis_names, self.axis_types))

    @property
    def shape(self) -> collections.OrderedDict:
        """Ordered mapping axis name -> axis size."""
        return collections.OrderedDict(self.shape_tuple)

    @property
    def shape_tuple(self) -> tuple[tuple[Any, int], ...]:
        """``((name, size), ...)`` in axis order."""
        return tuple(zip(self.axis_names, self.devices.shape))

    @property
    def axis_sizes(self) -> tuple[int, ...]:
        """Size of each axis, in axis order."""
        return self.devices.shape

    @property
    def empty(self) -> bool:
        """True for the placeholder mesh with no devices."""
        return self.size == 0

    @property
    def is_scalar(self) -> bool:
        """True for a 0-d mesh holding exactly one device."""
        return self.size == 1 and not self.axis_names

    @property
    def device_ids(self) -> np.ndarray:
        """Integer array of device ids with the mesh's shape."""
        assert not self.empty
        return np.vectorize(lambda d: d.id, otypes=[int])(self.devices)

    @property
    def local_devices(self) -> list[Device]:
        """All devices (single-process: every device is local)."""
        return list(self._flat)

    @property
    def local_mesh(self) -> Mesh:
        """The process-local sub-mesh; the whole mesh in a single process."""
        return self

    @property
    def is_multi_process(self) -> bool:
        """Always False: refjax runs in one process."""
        return False

    @property
    def _flat_devices_tuple(self) -> tuple[Device, ...]:
        return self._flat

    @property
    def _flat_devices_set(self) -> set[Device]:
        return set(self._flat)

    @property
    def _name_to_type(self) -> dict:
        return dict(zip(self.axis_names, self.axis_types))

    def _axes_of_type(self, ty: AxisType) -> tuple:
        return tuple(n for n, t in zip(self.axis_names, self.axis_types) if t == ty)

    @property
    def auto_axes(self) -> tuple:
        """Names of Auto axes."""
        return self._axes_of_type(AxisType.Auto)

    @property
    def explicit_axes(self) -> tuple:
        """Names of Explicit axes."""
        return self._axes_of_type(AxisType.Explicit)

    @property
    def manual_axes(self) -> tuple:
        """Names of Manual axes."""
        return self._axes_of_type(AxisType.Manual)

    def _all_types(self, ty: AxisType) -> bool:
        return bool(self.axis_types) and all(t == ty for t in self.axis_types)

    @property
    def are_all_axes_auto(self) -> bool:
        """True if the mesh has axes and all of them are Auto."""
        return self._all_types(AxisType.Auto)

    @property
    def are_all_axes_explicit(self) -> bool:
        """True if the mesh has axes and all of them are Explicit."""
        return self._all_types(AxisType.Explicit)

    @property
    def are_all_axes_manual(self) -> bool:
        """True if the mesh has axes and all of them are Manual."""
        return self._all_types(AxisType.Manual)

    def update(self, devices=None, axis_names=None, axis_types=None) -> Mesh:
        """Copy with some fields replaced."""
        return Mesh(self.devices if devices is None else devices,
                    self.axis_names if axis_names is None else axis_names,
                    self.axis_types if axis_types is None else axis_types)

    def __str__(self):
        if self.empty:
            return "Mesh()"
        sizes = ", ".join(f"'{k}': {v}" for k, v in self.shape_tuple)
        return f"Mesh({sizes}, axis_types={self.axis_types})"

    def __repr__(self):
        if self.empty:
            return "Mesh(axis_sizes=(), axis_names=())"
        return (f"Mesh(axis_sizes={self.axis_sizes}, axis_names={self.axis_names!r},"
                f" axis_types={self.axis_types})")

    # Unlike JAX 0.10.2 (where `with mesh:` is deprecated and leaves get_mesh()
    # untouched), entering a mesh makes it the current mesh.
    def __enter__(self):
        _ENTER_STACK.set(_ENTER_STACK.get() + (_CURRENT_MESH.get(),))
        _CURRENT_MESH.set(self)
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        stack = _ENTER_STACK.get()
        _CURRENT_MESH.set(stack[-1])
        _ENTER_STACK.set(stack[:-1])
        return False


EMPTY_MESH = Mesh(np.empty((), dtype=object), ())


def make_mesh(axis_shapes: Sequence[int], axis_names: Sequence[Any],
              axis_types: tuple[AxisType, ...] | None = None, *,
              devices: Sequence[Device]) -> Mesh:
    """Build a mesh from the first ``prod(axis_shapes)`` of ``devices``, in order.

    As in JAX 0.10.2 the axis types default to ``Explicit`` (unlike the ``Mesh``
    constructor, which defaults to ``Auto``). Raises ValueError if there are
    fewer devices than the mesh needs.
    """
    try:
        shape = tuple(int(s) for s in axis_shapes)
    except (TypeError, ValueError):
        raise ValueError("`axis_shapes` passed to `make_mesh` should be a sequence"
                         f" of ints. Got {axis_shapes}") from None
    devices = list(devices)
    needed = math.prod(shape)
    if needed > len(devices):
        raise ValueError(f"Number of devices {len(devices)} must be >= the product"
                         f" of mesh_shape {shape}")
    if axis_types is None:
        axis_types = (AxisType.Explicit,) * len(shape)
    return Mesh(_object_array(devices[:needed], shape), axis_names, axis_types)


# ----------------------------------------------------------------------------
# Current-mesh context

_CURRENT_MESH: contextvars.ContextVar[Mesh | None] = contextvars.ContextVar(
    "refjax_current_mesh", default=None)
# Previous values saved by `Mesh.__enter__` (a mesh may be entered re-entrantly,
# so the saved value cannot live on the immutable mesh itself).
_ENTER_STACK: contextvars.ContextVar[tuple] = contextvars.ContextVar(
    "refjax_mesh_enter_stack", default=())


def get_current_mesh() -> Mesh | None:
    """The innermost mesh set by ``with mesh:`` or :class:`set_mesh`, else None."""
    return _CURRENT_MESH.get()


def get_mesh() -> Mesh:
    """Like ``jax.sharding.get_mesh``: the current mesh, or an empty mesh."""
    mesh = _CURRENT_MESH.get()
    return EMPTY_MESH if mesh is None else mesh


class set_mesh:
    """Set the current mesh; works as a plain call and as a context manager.

    ``set_mesh(m)`` takes effect immediately (as in JAX); when used in a ``with``
    statement, the previous mesh is restored on exit, even on exceptions.
    ``set_mesh(None)`` clears the current mesh.
    """

    __slots__ = ("prev_mesh",)

    def __init__(self, mesh: Mesh | None):
        if mesh is not None and not isinstance(mesh, Mesh):
            raise ValueError(f"Expected mesh of type `Mesh`. Got {type(mesh)}")
        if mesh is not None and mesh.manual_axes:
            raise ValueError(
                f"mesh {mesh} contains manual axes which is not allowed when using"
                " `set_mesh`. Please use `shard_map` to enter into `Manual` mode"
                " instead.")
        self.prev_mesh = _CURRENT_MESH.get()
        _CURRENT_MESH.set(None if mesh is None or mesh.empty else mesh)

    def __enter__(self):
        return None

    def __exit__(self, exc_type, exc_value, traceback):
        _CURRENT_MESH.set(self.prev_mesh)
        return False


# ----------------------------------------------------------------------------
# Shardings


class IndivisibleError(ValueError):
    """An array dimension is not divisible by the number of shards along it."""


class DuplicateSpecError(ValueError):
    """A PartitionSpec uses one mesh axis more than once.

    JAX's class of the same name derives from Exception only; deriving from
    ValueError here also lets callers catch it as a validation error.
    """

    def __init__(self, message, mesh=None, pspec=None):
        super().__init__(message)
        self.message = message
        self.mesh = mesh
        self.pspec = pspec


class _Tiling(NamedTuple):
    """How an ndim array is laid out over a sharding's device assignment.

    ``factors[i]`` is the number of tiles along dim i; ``tiles[k]`` is the tile
    coordinate of device k; ``manual[k]``/``unreduced[k]`` index the device's
    group along unused Manual axes / unreduced axes (all zero when absent).
    Devices agreeing on all three hold replicas of the same data.
    A Manual axis used by the spec splits its dimension like any other axis.
    """

    factors: tuple[int, ...]
    tiles: tuple[tuple[int, ...], ...]
    manual: tuple[int, ...]
    unreduced: tuple[int, ...]
    has_manual: bool
    has_unreduced: bool

    @property
    def replicated(self) -> bool:
        """XLA's notion: one device, or no tiling and no special subgroups."""
        return len(self.tiles) == 1 or (
            all(f == 1 for f in self.factors)
            and not self.has_manual and not self.has_unreduced)


def _replicated_tiling(ndim: int, num_devices: int) -> _Tiling:
    zeros = (0,) * num_devices
    return _Tiling((1,) * ndim, ((0,) * ndim,) * num_devices, zeros, zeros,
                   False, False)


def _check_memory_kind(kind, device_kind: str) -> str:
    if kind is None:
        return DEFAULT_MEMORY_KIND
    if kind not in MEMORY_KINDS:
        raise ValueError(
            f"Could not find memory addressable by device {device_kind}. Device"
            f" {device_kind} can address the following memory kinds:"
            f" {', '.join(MEMORY_KINDS)}. Got memory kind: {kind}")
    return kind


def _as_shape(global_shape) -> Shape:
    return tuple(int(d) for d in global_shape)


class Sharding:
    """Base class: how an array is laid out across devices.

    Subclasses provide ``_device_assignment``, ``memory_kind``,
    ``with_memory_kind``, ``is_fully_replicated`` and ``_tiling``; layout
    queries (``devices_indices_map``, ``shard_shape``, ``is_equivalent_to``)
    are derived here.
    """

    __slots__ = ()

    @property
    def _device_assignment(self) -> tuple[Device, ...]:
        raise NotImplementedError("Subclasses should implement this method.")

    def _tiling(self, ndim: int) -> _Tiling:
        raise NotImplementedError("Subclasses should implement this method.")

    def check_compatible_aval(self, aval_shape: Shape) -> None:
        """Raise ValueError if this sharding cannot apply to an array of this shape."""

    @property
    def memory_kind(self) -> str:
        """Memory kind: 'device', 'pinned_host' or 'unpinned_host'."""
        raise NotImplementedError("Subclasses should implement this method.")

    def with_memory_kind(self, kind: str) -> Sharding:
        """Same layout with a different memory kind."""
        raise NotImplementedError("Subclasses should implement this method.")

    @property
    def is_fully_replicated(self) -> bool:
        """True if every device holds the whole array."""
        raise NotImplementedError("Subclasses should implement this method.")

    @property
    def device_set(self) -> set[Device]:
        """All devices the sharding spans."""
        return set(self._device_assignment)

    @property
    def num_devices(self) -> int:
        """Number of devices the sharding spans."""
        return len(self._device_assignment)

    @property
    def is_fully_addressable(self) -> bool:
        """Always True: refjax is single-process."""
        return True

    @property
    def addressable_devices(self) -> set[Device]:
        """Devices addressable by this process (all of them)."""
        return self.device_set

    @property
    def has_addressable_devices(self) -> bool:
        """True if any device is addressable."""
        return bool(self._device_assignment)

    @property
    def _addressable_device_assignment(self) -> tuple[Device, ...]:
        return self._device_assignment

    def shard_shape(self, global_shape: Shape) -> Shape:
        """Shape of each device's shard; IndivisibleError if a dim does not divide."""
        shape = _as_shape(global_shape)
        self.check_compatible_aval(shape)
        tiling = _cached_tiling(self, len(shape))
        if tiling.replicated:
            return shape
        if tiling.has_manual:
            raise NotImplementedError(
                f"shard_shape is not supported for {self}, whose mesh has Manual"
                " axes that the spec does not use.")
        self._check_divisible(shape, tiling.factors)
        return tuple(d // f for d, f in zip(shape, tiling.factors))

    def _check_divisible(self, shape: Shape, factors: tuple[int, ...]) -> None:
        for dim, (size, parts) in enumerate(zip(shape, factors)):
            if size % parts:
                raise IndivisibleError(
                    f"Sharding {self} implies that array axis {dim} is partitioned"
                    f" {parts} times{self._axes_note(dim)}, but the dimension size"
                    f" is {size} (full shape: {shape}, per-dimension tiling"
                    f" factors: {list(factors)} should evenly divide the shape)")

    def _axes_note(self, dim: int) -> str:
        return ""

    def devices_indices_map(self, global_shape: Shape) -> dict[Device, Index]:
        """Map each device (in device-assignment order) to the slices it holds.

        Unsplit dimensions use ``slice(None)``; split ones ``slice(start, stop)``.
        """
        shape = _as_shape(global_shape)
        self.shard_shape(shape)  # validates rank and divisibility
        tiling = _cached_tiling(self, len(shape))
        devices = self._device_assignment
        if tiling.replicated:
            return {d: (slice(None),) * len(shape) for d in devices}
        if tiling.has_unreduced:
            raise NotImplementedError(
                "devices_indices_map doesn't work with unreduced axes.")
        return {d: _tile_index(shape, tiling.factors, tile)
                for d, tile in zip(devices, tiling.tiles)}

    def addressable_devices_indices_map(self, global_shape: Shape) -> dict[Device, Index]:
        """``devices_indices_map`` restricted to addressable devices (all of them)."""
        return self.devices_indices_map(global_shape)

    def is_equivalent_to(self, other: Sharding, ndim: int) -> bool:
        """True if both place the same shards of an ndim array on the same devices.

        As in JAX, this needs equal memory kinds and identical device
        assignments (order included); any two replicated layouts agree.
        """
        if not isinstance(other, Sharding):
            return False
        if (self.memory_kind != other.memory_kind
                or self._device_assignment != other._device_assignment):
            return False
        mine, theirs = _cached_tiling(self, ndim), _cached_tiling(other, ndim)
        if mine.replicated or theirs.replicated:
            return mine.replicated and theirs.replicated
        return mine == theirs


@functools.lru_cache(maxsize=4096)
def _cached_tiling(sharding: Sharding, ndim: int) -> _Tiling:
    return sharding._tiling(ndim)


def _tile_index(shape: Shape, factors: tuple[int, ...], tile: tuple[int, ...]) -> Index:
    out = []
    for size, parts, t in zip(shape, factors, tile):
        if parts == 1:
            out.append(slice(None))
        else:
            step = size // parts
            out.append(slice(t * step, (t + 1) * step))
    return tuple(out)


def _mixed_radix(coords: Sequence[int], sizes: Sequence[int]) -> int:
    """Row-major index of ``coords`` in a grid of ``sizes`` (first is major)."""
    index = 0
    for c, s in zip(coords, sizes):
        index = index * s + c
    return index


def _check_unique_axes(spec: P, mesh: Mesh) -> None:
    counts: dict[Any, int] = collections.Counter(
        a for p in spec.partitions for a in _axes_of(p))
    repeated = [a for a, c in counts.items() if c > 1]
    if repeated:
        names = ", ".join(sorted(f"`{a}`" for a in repeated))
        raise DuplicateSpecError(
            "A single NamedSharding spec specification can map every mesh axis to"
            f" at most one positional dimension, but {spec} has duplicate entries"
            f" for {names} (mesh axes: {mesh.axis_names})", mesh, spec)


def _check_known_axes(spec: P, mesh: Mesh) -> None:
    for partition in spec.partitions:
        for axis in _axes_of(partition):
            if axis not in mesh.axis_names:
                raise ValueError(f"Resource axis: {axis} of {spec} is not found in"
                                 f" mesh: {mesh.axis_names}.")
    if AxisType.Auto not in mesh.axis_types and UNCONSTRAINED in spec.partitions:
        raise ValueError(
            f"{spec} cannot contain `P.UNCONSTRAINED` when no mesh axis_types are"
            f" `Auto`. Got mesh axis_types: {mesh.axis_types}")


def _check_reduction_axes(spec: P, mesh: Mesh) -> None:
    for label, axes in (("Unreduced", spec.unreduced), ("Reduced", spec.reduced)):
        for axis in axes:
            if axis not in mesh.axis_names:
                raise ValueError(f"{label} axes {axis} is not found in"
                                 f" mesh.axis_names={mesh.axis_names}. Got pspec={spec}")
            if mesh._name_to_type[axis] != AxisType.Explicit:
                raise ValueError(
                    f"{label} axes can only refer to mesh axes that is of type"
                    f" `Explicit`. Got {label.lower()} axes: {axes} and mesh: {mesh}")


def _check_pspec(mesh: Mesh, spec: P) -> None:
    _check_unique_axes(spec, mesh)
    _check_known_axes(spec, mesh)
    _check_reduction_axes(spec, mesh)


class NamedSharding(Sharding, _Immutable):
    """Shards an array over a :class:`Mesh` according to a :class:`PartitionSpec`.

    Raises DuplicateSpecError (a ValueError) if the spec uses a mesh axis twice
    and ValueError if it names an axis the mesh lacks.
    """

    __slots__ = ("mesh", "spec", "_memory_kind")

    def __init__(self, mesh: Mesh, spec: P, *, memory_kind: str | None = None):
        if not isinstance(mesh, Mesh):
            raise TypeError(f"NamedSharding expects a Mesh, got {type(mesh)}")
        if not isinstance(spec, P):
            raise TypeError(f"NamedSharding expects a PartitionSpec, got {spec!r}")
        device_kind = mesh._flat[0].device_kind if mesh.size else "cpu"
        kind = _check_memory_kind(memory_kind, device_kind)
        _check_pspec(mesh, spec)
        _freeze(self, mesh=mesh, spec=spec, _memory_kind=kind)

    def __repr__(self):
        return (f"NamedSharding(mesh={self.mesh}, spec={self.spec},"
                f" memory_kind={self._memory_kind})")

    def __eq__(self, other):
        if not isinstance(other, NamedSharding):
            return False
        return (self.spec == other.spec and self._memory_kind == other._memory_kind
                and self.mesh == other.mesh)

    def __hash__(self):
        return hash((self.mesh, self._memory_kind, self.spec))

    def __reduce__(self):
        return (_make_named_sharding, (self.mesh, self.spec, self._memory_kind))

    @property
    def memory_kind(self) -> str:
        """Memory kind; defaults to 'device'."""
        return self._memory_kind

    def with_memory_kind(self, kind: str) -> NamedSharding:
        """Same mesh and spec with a different memory kind."""
        return NamedSharding(self.mesh, self.spec, memory_kind=kind)

    def update(self, **kwargs) -> NamedSharding:
        """Copy with ``mesh``, ``spec`` or ``memory_kind`` replaced."""
        unknown = set(kwargs) - {"mesh", "spec", "memory_kind"}
        if unknown:
            raise TypeError(f"Unexpected arguments: {sorted(unknown)}")
        spec = kwargs.get("spec", self.spec)
        return NamedSharding(kwargs.get("mesh", self.mesh),
                             spec if isinstance(spec, P) else P(*spec),
                             memory_kind=kwargs.get("memory_kind", self._memory_kind))

    @property
    def _device_assignment(self) -> tuple[Device, ...]:
        return self.mesh._flat

    @property
    def num_devices(self) -> int:
        """Number of devices in the mesh."""
        return self.mesh.size

    @property
    def is_fully_replicated(self) -> bool:
        """True if no mesh axis of size > 1 splits any dimension."""
        if self.mesh.size == 1:
            return True
        if self.spec.unreduced:
            return False
        sizes = self.mesh.shape
        return math.prod(sizes[a] for p in self.spec.partitions
                         for a in _axes_of(p)) == 1

    @property
    def replicated_axes(self) -> frozenset:
        """Mesh axes used neither by the partitions nor as (un)reduced axes."""
        used = {a for p in self.spec.partitions for a in _axes_of(p)}
        return frozenset(self.mesh.axis_names) - (
            used | self.spec.unreduced | self.spec.reduced)

    def check_compatible_aval(self, aval_shape: Shape) -> None:
        """Raise ValueError if the spec has more entries than the array has dims."""
        if len(aval_shape) < len(self.spec):
            extra = (" For scalars the PartitionSpec should be P()"
                     if len(aval_shape) == 0 else "")
            raise ValueError(
                f"Sharding {self} is only valid for values of rank at least"
                f" {len(self.spec)}, but was applied to a value of rank"
                f" {len(aval_shape)}.{extra}")

    def _dim_axes(self, ndim: int) -> list[tuple]:
        """Mesh axes splitting each of ndim dims; entries past ndim must not split."""
        sizes = self.mesh.shape
        parts = self.spec.partitions
        if any(math.prod(sizes[a] for a in _axes_of(p)) != 1 for p in parts[ndim:]):
            self.check_compatible_aval((0,) * ndim)  # raises: a split dim is missing
        return [_axes_of(parts[i]) if i < len(parts) else () for i in range(ndim)]

    def _axes_note(self, dim: int) -> str:
        axes = _axes_of(self.spec.partitions[dim]) if dim < len(self.spec) else ()
        return f" (over mesh axes {axes})"

    def _tiling(self, ndim: int) -> _Tiling:
        mesh = self.mesh
        if mesh.size <= 1:
            return _replicated_tiling(ndim, mesh.size)
        dim_axes = self._dim_axes(ndim)
        used = {a for axes in dim_axes for a in axes}
        pos = {name: i for i, name in enumerate(mesh.axis_names)}
        sizes = mesh.shape
        manual = [a for a in mesh.manual_axes if a not in used and sizes[a] > 1]
        unreduced = [a for a in mesh.axis_names if a in self.spec.unreduced
                     and sizes[a] > 1]

        def group(coords, axes):
            return _mixed_radix([coords[pos[a]] for a in axes], [sizes[a] for a in axes])

        all_coords = list(np.ndindex(*mesh.axis_sizes))
        return _Tiling(
            factors=tuple(math.prod(sizes[a] for a in axes) for axes in dim_axes),
            tiles=tuple(tuple(group(c, axes) for axes in dim_axes) for c in all_coords),
            manual=tuple(group(c, manual) for c in all_coords),
            unreduced=tuple(group(c, unreduced) for c in all_coords),
            has_manual=bool(manual), has_unreduced=bool(unreduced))


def _make_named_sharding(mesh, spec, memory_kind):
    return NamedSharding(mesh, spec, memory_kind=memory_kind)


def _make_single_device_sharding(device, memory_kind):
    return SingleDeviceSharding(device, memory_kind=memory_kind)


class SingleDeviceSharding(Sharding, _Immutable):
    """Places the whole array on one device."""

    __slots__ = ("_device", "_memory_kind")

    def __init__(self, device: Device, *, memory_kind: str | None = None):
        kind = _check_memory_kind(memory_kind, getattr(device, "device_kind", "cpu"))
        _freeze(self, _device=device, _memory_kind=kind)

    def __repr__(self):
        return (f"SingleDeviceSharding(device={self._device!r},"
                f" memory_kind={self._memory_kind})")

    def __eq__(self, other):
        if not isinstance(other, SingleDeviceSharding):
            return False
        return (self._device == other._device
                and self._memory_kind == other._memory_kind)

    def __hash__(self):
        return hash((self._device, self._memory_kind))

    def __reduce__(self):
        return (_make_single_device_sharding, (self._device, self._memory_kind))

    @property
    def memory_kind(self) -> str:
        """Memory kind; defaults to 'device'."""
        return self._memory_kind

    def with_memory_kind(self, kind: str) -> SingleDeviceSharding:
        """Same device with a different memory kind."""
        return SingleDeviceSharding(self._device, memory_kind=kind)

    @property
    def _device_assignment(self) -> tuple[Device, ...]:
        return (self._device,)

    @property
    def is_fully_replicated(self) -> bool:
        """Always True."""
        return True

    def _tiling(self, ndim: int) -> _Tiling:
        return _replicated_tiling(ndim, 1)


# ----------------------------------------------------------------------------
# Layout helpers for backends


def shard_indices(sharding: Sharding, shape: Shape) -> list[tuple[Device, Index]]:
    """``(device, index)`` pairs in device-assignment order (``mesh.devices.flat``).

    ``index`` is a tuple of slices selecting the device's shard of a global
    array of ``shape``; ``global_array[index]`` is that device's data.
    """
    return list(sharding.devices_indices_map(shape).items())


def _index_key(index: Index, shape: Shape) -> tuple:
    return tuple(s.indices(d) for s, d in zip(index, shape))


def replica_groups(sharding: Sharding, shape: Shape) -> list[tuple[Device, ...]]:
    """Groups of devices holding identical shards, in order of first appearance.

    Devices within a group are listed in device-assignment order; a fully
    replicated sharding gives one group, a fully split one a group per device.
    """
    shape = _as_shape(shape)
    groups: dict[tuple, list[Device]] = {}
    for device, index in shard_indices(sharding, shape):
        groups.setdefault(_index_key(index, shape), []).append(device)
    return [tuple(g) for g in groups.values()]
