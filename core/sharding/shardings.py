"""Shardings (NamedSharding, SingleDeviceSharding): how an array's shards map to devices,
mirroring jax.sharding."""

from __future__ import annotations

import collections
import functools
import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from .abstract_mesh import AbstractMesh
from .mesh import (DEFAULT_MEMORY_KIND, MEMORY_KINDS, UNCONSTRAINED, AxisType, Device,
                   Immutable, Mesh, P, axes_of, freeze)

Shape = tuple[int, ...]
Index = tuple[slice, ...]

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


# JAX's text (it names device_indices_map so)
UNREDUCED_INDICES = ("device_indices_map doesn't work with unreduced. Please file a bug at "
                     "https://github.com/jax-ml/jax/issues")


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
            raise NotImplementedError(UNREDUCED_INDICES)
        return {d: _tile_index(shape, tiling.factors, tile)
                for d, tile in zip(devices, tiling.tiles)}

    def unreduced_pieces(self, global_shape: Shape) -> list[tuple[Device, Index, int]]:
        """(device, slices, group) per device of an unreduced layout: the slices the
        partitions give it and its index along the unreduced axes (the value is the sum over
        groups of the arrays each group's devices hold together)."""
        shape = _as_shape(global_shape)
        self.shard_shape(shape)
        tiling = _cached_tiling(self, len(shape))
        return [(d, _tile_index(shape, tiling.factors, tile), group) for d, tile, group
                in zip(self._device_assignment, tiling.tiles, tiling.unreduced)]

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
        a for p in spec.partitions for a in axes_of(p))
    repeated = [a for a, c in counts.items() if c > 1]
    if repeated:
        names = ", ".join(sorted(f"`{a}`" for a in repeated))
        raise DuplicateSpecError(
            "A single NamedSharding spec specification can map every mesh axis to"
            f" at most one positional dimension, but {spec} has duplicate entries"
            f" for {names} (mesh axes: {mesh.axis_names})", mesh, spec)


def _check_known_axes(spec: P, mesh: Mesh) -> None:
    for partition in spec.partitions:
        for axis in axes_of(partition):
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


class NamedSharding(Sharding, Immutable):
    """Shards an array over a :class:`Mesh` according to a :class:`PartitionSpec`.

    Raises DuplicateSpecError (a ValueError) if the spec uses a mesh axis twice
    and ValueError if it names an axis the mesh lacks.
    """

    __slots__ = ("mesh", "spec", "_memory_kind")

    def __init__(self, mesh: Mesh, spec: P, *, memory_kind: str | None = None):
        if not isinstance(mesh, (Mesh, AbstractMesh)):
            raise TypeError(f"NamedSharding expects a Mesh, got {type(mesh)}")
        if not isinstance(spec, P):
            raise TypeError(f"NamedSharding expects a PartitionSpec, got {spec!r}")
        device_kind = mesh._flat[0].device_kind if isinstance(mesh, Mesh) and mesh.size \
            else "cpu"
        kind = _check_memory_kind(memory_kind, device_kind)
        _check_pspec(mesh, spec)
        freeze(self, mesh=mesh, spec=spec, _memory_kind=kind)

    def __repr__(self):
        if isinstance(self.mesh, AbstractMesh):  # a type's sharding: JAX shows no memory
            return f"NamedSharding(mesh={self.mesh}, spec={self.spec})"
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
                         for a in axes_of(p)) == 1

    @property
    def replicated_axes(self) -> frozenset:
        """Mesh axes used neither by the partitions nor as (un)reduced axes."""
        used = {a for p in self.spec.partitions for a in axes_of(p)}
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
        if any(math.prod(sizes[a] for a in axes_of(p)) != 1 for p in parts[ndim:]):
            self.check_compatible_aval((0,) * ndim)  # raises: a split dim is missing
        return [axes_of(parts[i]) if i < len(parts) else () for i in range(ndim)]

    def _axes_note(self, dim: int) -> str:
        axes = axes_of(self.spec.partitions[dim]) if dim < len(self.spec) else ()
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


class SingleDeviceSharding(Sharding, Immutable):
    """Places the whole array on one device."""

    __slots__ = ("_device", "_memory_kind")

    def __init__(self, device: Device, *, memory_kind: str | None = None):
        kind = _check_memory_kind(memory_kind, getattr(device, "device_kind", "cpu"))
        freeze(self, _device=device, _memory_kind=kind)

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
