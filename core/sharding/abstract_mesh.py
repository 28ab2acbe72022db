"""AbstractMesh (a mesh's axis names, sizes and types without its devices) and
get_abstract_mesh, as jax.sharding has them."""
from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import math

import numpy as np

from .mesh import (AxisType, AxisTypesMixin, Immutable, Mesh, _normalize_axis_types, freeze,
                   get_current_mesh, use_concrete_mesh)


@dataclasses.dataclass(frozen=True)
class AbstractDevice:
    """A kind of device, without a device (jax.sharding.AbstractDevice): what an
    AbstractMesh keeps of its mesh's devices."""

    device_kind: str
    num_cores: int | None
    platform: str

    def __repr__(self):
        return (f"AbstractDevice(device_kind={self.device_kind}, num_cores={self.num_cores}, "
                f"platform={self.platform})")


class AbstractMesh(AxisTypesMixin, Immutable):
    """The shape of a mesh: axis sizes, names and types, and (for a concrete mesh's
    abstraction) its device kind; what tracing sees of a mesh."""

    __slots__ = ("axis_sizes", "axis_names", "axis_types", "_device_kind")

    def __init__(self, axis_sizes, axis_names, axis_types=None):
        axis_names, axis_sizes = tuple(axis_names), tuple(axis_sizes)
        if len(axis_names) != len(axis_sizes):
            raise ValueError(f"AbstractMesh: {len(axis_sizes)} axis sizes {axis_sizes} for "
                             f"{len(axis_names)} axis names {axis_names}")
        freeze(self, axis_sizes=axis_sizes, axis_names=axis_names,
               axis_types=_normalize_axis_types(axis_names, axis_types, "AbstractMesh"),
               _device_kind=None)

    @classmethod
    def of(cls, mesh) -> AbstractMesh:
        """The abstraction of a concrete Mesh (which remembers its devices' kind)."""
        out = cls(mesh.axis_sizes, mesh.axis_names, mesh.axis_types)
        if mesh.size:
            freeze(out, _device_kind=mesh._flat[0].device_kind)
        return out

    @property
    def abstract_device(self):
        """The kind of device the mesh is of (None for a mesh made without devices)."""
        if self._device_kind is None:
            return None
        return AbstractDevice(self._device_kind, None, "cpu")

    def _key(self):
        return (self.axis_sizes, self.axis_names, self.axis_types, self._device_kind)

    def __eq__(self, other):
        if not isinstance(other, AbstractMesh):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    @property
    def size(self) -> int:
        """The number of devices the mesh spans."""
        return math.prod(self.axis_sizes)

    @property
    def empty(self) -> bool:
        """True for the mesh with no axes."""
        return not self.axis_names

    @property
    def abstract_mesh(self) -> AbstractMesh:
        """Itself (as a Mesh's `abstract_mesh`)."""
        return self

    def update(self, axis_sizes=None, axis_names=None, axis_types=None) -> AbstractMesh:
        """Copy with some fields replaced (the device kind is kept)."""
        out = AbstractMesh(self.axis_sizes if axis_sizes is None else axis_sizes,
                           self.axis_names if axis_names is None else axis_names,
                           self.axis_types if axis_types is None else axis_types)
        freeze(out, _device_kind=self._device_kind)
        return out

    def update_axis_types(self, name_to_type: dict) -> AbstractMesh:
        """Copy with the named axes' types replaced."""
        return self.update(axis_types=tuple(name_to_type.get(n, t) for n, t in
                                            zip(self.axis_names, self.axis_types)))

    def __repr__(self):
        if self.empty:
            return "AbstractMesh((), axis_types=())"
        sizes = ", ".join(f"'{k}': {v}" for k, v in self.shape_tuple)
        device = "" if self._device_kind is None else \
            f", device_kind={self._device_kind}, num_cores=None, platform=cpu"
        return f"AbstractMesh({sizes}, axis_types={self.axis_types}{device})"

    __str__ = __repr__


EMPTY_ABSTRACT_MESH = AbstractMesh((), ())


_ABSTRACT_MESH = contextvars.ContextVar("refjax_abstract_mesh", default=None)


def get_abstract_mesh() -> AbstractMesh:
    """The mesh use_abstract_mesh set, else the abstraction of the mesh set by set_mesh (an
    empty AbstractMesh without one)."""
    override = _ABSTRACT_MESH.get()
    if override is not None:
        return override
    mesh = get_current_mesh()
    return EMPTY_ABSTRACT_MESH if mesh is None else AbstractMesh.of(mesh)


@contextlib.contextmanager
def manual_view(mesh, axes):
    """While a shard_map body over `mesh`'s `axes` is traced or run, get_abstract_mesh shows
    the mesh with those axes (and an enclosing body's, over the same mesh) Manual, as JAX's
    body sees it; the context mesh (the devices) is left as it is."""
    outer, view = get_abstract_mesh(), AbstractMesh.of(mesh)
    if outer.shape_tuple == view.shape_tuple:  # a nested shard_map keeps the outer Manual axes
        view = outer
    token = _ABSTRACT_MESH.set(view.update_axis_types(dict.fromkeys(axes, AxisType.Manual)))
    try:
        yield
    finally:
        _ABSTRACT_MESH.reset(token)


class use_abstract_mesh:
    """Trace under `mesh` (an AbstractMesh): its axis names and types replace the context
    mesh's, whose devices stay (reshaped to its sizes); the size may not change."""

    __slots__ = ("mesh", "prev", "placed")

    def __init__(self, mesh):
        if not isinstance(mesh, AbstractMesh):
            raise ValueError("Expected mesh of type `jax.sharding.AbstractMesh`. Got type:"
                             f" {type(mesh)}")
        self.mesh = mesh

    def __enter__(self):
        prev = get_abstract_mesh()
        if not prev.empty and not self.mesh.empty and prev.size != self.mesh.size:
            raise ValueError(
                f"use_abstract_mesh cannot change the size of the mesh. Got new mesh: "
                f"{self.mesh} with size={self.mesh.size} and prev mesh: {prev} with "
                f"size={prev.size}")
        self.prev = _ABSTRACT_MESH.set(self.mesh)
        self.placed = use_concrete_mesh(_concrete(self.mesh))

    def __exit__(self, *exc):
        self.placed.__exit__(*exc)
        _ABSTRACT_MESH.reset(self.prev)
        return False


def _concrete(mesh):
    """The context mesh's devices laid out as `mesh` (None: keep the context's)."""
    current = get_current_mesh()
    if current is None or mesh.empty:
        return current
    devices = np.array(current._flat, dtype=object).reshape(mesh.axis_sizes)
    return Mesh(devices, mesh.axis_names, mesh.axis_types)
