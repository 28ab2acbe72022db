"""Devices, partition specs, meshes and the current-mesh context, mirroring jax.sharding."""

from __future__ import annotations

import collections
import contextlib
import contextvars
import dataclasses
import enum
import functools
import math
import operator
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

MEMORY_KINDS = ("device", "pinned_host", "unpinned_host")
DEFAULT_MEMORY_KIND = "device"

def freeze(obj, **attrs):
    """Set attributes on an otherwise immutable object (used by constructors)."""
    for name, value in attrs.items():
        object.__setattr__(obj, name, value)


class Immutable:
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


def axes_of(partition) -> tuple:
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
        for axis in axes_of(partition):
            for label, axes in (("unreduced", unreduced), ("reduced", reduced)):
                if axis in axes:
                    raise ValueError(
                        f"partitions cannot overlap with {label} axes passed to"
                        f" PartitionSpec. Got partitions: {partitions} and {label}"
                        f" axes: {axes}")


def plain_spec_error(what, instead):
    """JAX's words when a spec with unreduced/reduced axes is read as a plain tuple (JAX's
    own shape rules do so for reshape, static slices and tile, which is how it refuses them)."""
    return (f"Using {what} is dangerous when PartitionSpec has non-empty unreduced/reduced set. "
            f"Please use {instead}")


def _make_pspec(partitions, unreduced, reduced):
    return P(*partitions, unreduced=unreduced, reduced=reduced)


class P(Immutable):
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
        freeze(self, _partitions=parts, unreduced=unreduced, reduced=reduced)

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

    def _check_plain(self, what, instead="spec.partitions"):
        if self.unreduced or self.reduced:
            raise ValueError(plain_spec_error(what, instead))

    def __getitem__(self, i):
        self._check_plain("pspec[...]", "spec.partitions[...]")
        return self._partitions[i]

    def __iter__(self):
        self._check_plain("*pspec", "*spec.partitions")
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


class AxisTypesMixin:
    """The axis-type queries Mesh and AbstractMesh share (both have axis_names and
    axis_types)."""

    __slots__ = ()

    @property
    def shape(self) -> collections.OrderedDict:
        """Ordered mapping axis name -> axis size."""
        return collections.OrderedDict(self.shape_tuple)

    @property
    def shape_tuple(self) -> tuple[tuple[Any, int], ...]:
        """``((name, size), ...)`` in axis order."""
        return tuple(zip(self.axis_names, self.axis_sizes))

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



class Mesh(AxisTypesMixin, Immutable, contextlib.ContextDecorator):
    """An n-d array of devices with one name per array axis.

    ``devices`` is a read-only numpy object array of :class:`Device`. Meshes are
    hashable and compare equal when devices (in order), shape, axis names and
    axis types agree. ``with mesh:`` makes it the mesh pjit resolves PartitionSpecs
    against (see :func:`get_resource_mesh`).
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
        freeze(self, devices=_object_array(flat, devices.shape),
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
    def abstract_mesh(self):
        """The mesh without its devices (an AbstractMesh)."""
        from .abstract_mesh import AbstractMesh
        return AbstractMesh.of(self)

    @property
    def _flat_devices_tuple(self) -> tuple[Device, ...]:
        return self._flat

    @property
    def _flat_devices_set(self) -> set[Device]:
        return set(self._flat)

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

    # As in JAX 0.10.2, `with mesh:` (deprecated there, the seeds' way) sets the resource
    # environment pjit and with_sharding_constraint resolve PartitionSpecs against; it is not
    # the current mesh of set_mesh (get_mesh, device_put and jit keep theirs).
    def __enter__(self):
        warnings.warn("`with mesh:` context manager has been deprecated. Please use "
                      "`with jax.set_mesh(mesh):` instead.", DeprecationWarning, stacklevel=2)
        _ENTER_STACK.set(_ENTER_STACK.get() + (_RESOURCE_MESH.get(),))
        _RESOURCE_MESH.set(self)
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        stack = _ENTER_STACK.get()
        _RESOURCE_MESH.set(stack[-1])
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
        shape = tuple(operator.index(s) for s in axis_shapes)
    except TypeError:
        raise ValueError("`axis_shapes` passed to `make_mesh` should be a sequence"
                         f" of ints. Got {axis_shapes}") from None
    if any(s < 1 for s in shape):
        raise ValueError(f"make_mesh: every axis size must be a positive int, got {shape}")
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
_RESOURCE_MESH: contextvars.ContextVar[Mesh | None] = contextvars.ContextVar(
    "refjax_resource_mesh", default=None)
# Previous values saved by `Mesh.__enter__` (a mesh may be entered re-entrantly,
# so the saved value cannot live on the immutable mesh itself).
_ENTER_STACK: contextvars.ContextVar[tuple] = contextvars.ContextVar(
    "refjax_mesh_enter_stack", default=())


def get_current_mesh() -> Mesh | None:
    """The mesh set by :class:`set_mesh`, else None."""
    return _CURRENT_MESH.get()


def get_resource_mesh() -> Mesh | None:
    """The mesh pjit and with_sharding_constraint resolve PartitionSpecs against: the
    innermost ``with mesh:``, else the one of :class:`set_mesh`, else None (as JAX 0.10)."""
    mesh = _RESOURCE_MESH.get()
    return _CURRENT_MESH.get() if mesh is None else mesh


def get_mesh() -> Mesh:
    """Like ``jax.sharding.get_mesh``: the current mesh, or an empty mesh; JAX's ValueError
    under a trace (jit, grad, vmap...)."""
    if not _trace_state_clean():
        raise ValueError("`get_mesh` can only be used outside of `jax.jit`. Maybe you want "
                         "`jax.sharding.get_abstract_mesh()`?")
    return concrete_mesh()


def concrete_mesh() -> Mesh:
    """The current mesh (set_mesh's), or an empty mesh, under traces too (refjax's own use)."""
    mesh = _CURRENT_MESH.get()
    return EMPTY_MESH if mesh is None else mesh


class set_mesh:
    """Set the current mesh; works as a plain call and as a context manager.

    ``set_mesh(m)`` takes effect immediately (as in JAX); when used in a ``with``
    statement, the previous mesh is restored on exit, even on exceptions.
    ``set_mesh(None)`` clears the current mesh.
    """

    __slots__ = ("prev_mesh",)
    _inside_traces = False  # (JAX refuses set_mesh under a trace: jit, grad, vmap...)

    def __init__(self, mesh: Mesh | None):
        if mesh is not None and not isinstance(mesh, Mesh):
            raise ValueError(f"Expected mesh of type `jax.sharding.Mesh`. Got {type(mesh)}")
        if not self._inside_traces and not _trace_state_clean():
            raise ValueError("`set_mesh` can only be used outside of `jax.jit`.")
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

    def __repr__(self):
        # A notebook shows `jax.set_mesh(mesh)`'s value: JAX's default repr, naming its module.
        return f"<jax._src.sharding_impls.set_mesh object at {id(self):#x}>"


class use_concrete_mesh(set_mesh):
    """set_mesh for refjax's own use, under traces too (pjit's placement on its `with mesh:`
    mesh, use_abstract_mesh's concrete mesh), as JAX's internal context of concrete meshes."""

    __slots__ = ()
    _inside_traces = True


def _trace_state_clean():
    from ..trace import EVAL_TRACE, current_trace  # core.trace imports this package
    return current_trace() is EVAL_TRACE
