"""Abstract values: ShapedArray(shape, dtype, weak_type, sharding, vma) and helpers."""
import threading
import weakref

import numpy as np

from . import dtypes


class ShapedArray:
    """The abstract value of an array: what tracing knows about it."""

    __slots__ = ("shape", "dtype", "weak_type", "sharding", "vma", "_hash")

    def __init__(self, shape, dtype, weak_type=False, sharding=None, vma=frozenset()):
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.weak_type = bool(weak_type)
        self.sharding = sharding
        self.vma = vma
        self._hash = None

    ndim = property(lambda self: len(self.shape))

    @property
    def manual_axis_type(self):
        """The manual mesh axes this value varies over (inside shard_map; refjax's values are
        never unreduced or reduced along manual axes)."""
        return ManualAxisType(varying=self.vma)

    mat = property(lambda self: self.manual_axis_type, doc="JAX's short name of "
                   "manual_axis_type (`jax.typeof(x).mat.varying`).")

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]
    size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))

    def update(self, **changes):
        fields = dict(shape=self.shape, dtype=self.dtype, weak_type=self.weak_type,
                      sharding=self.sharding, vma=self.vma)
        fields.update(changes)
        return ShapedArray(**fields)

    def strip_weak_type(self):
        return self.update(weak_type=False) if self.weak_type else self

    def to_tangent_aval(self):
        """Aval of tangents and cotangents: float0 for integer and boolean values."""
        return self.update(dtype=dtypes.tangent_dtype(self.dtype), weak_type=self.weak_type
                           and dtypes.is_inexact(self.dtype))

    def _key(self):
        return (self.shape, self.dtype, self.weak_type, self.sharding, self.vma)

    def __eq__(self, other):
        return isinstance(other, ShapedArray) and self._key() == other._key()

    def __hash__(self):
        if self._hash is None:
            self._hash = hash(self._key())
        return self._hash

    def str_short(self, short_dtypes=True):
        """`f32[3,4]` (`float32[3,4]` without short dtypes), with the varying manual axes as
        JAX prints them: `{V:x}`, `{V:(x,y)}`."""
        dtype = dtypes.short_name(self.dtype) if short_dtypes else dtypes.long_name(self.dtype)
        spec = getattr(self.sharding, "spec", None)
        entries = spec.partitions if spec is not None else ()
        shape = ",".join(f"{d}{_axes_str(e)}" for d, e in
                         zip(self.shape, entries + (None,) * (len(self.shape) - len(entries))))
        return f"{dtype}[{shape}]{_vma_str(self.vma, spec, getattr(self.sharding, 'mesh', None))}"

    def __repr__(self):
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapedArray({self.str_short(short_dtypes=False)}{weak})"

    def __str__(self):
        return ("~" if self.weak_type else "") + self.str_short(short_dtypes=False)


def _axes_str(entry):
    """A dimension's mesh axes in a sharded type, as JAX prints them: `@x`, `@(x,y)`."""
    if entry is None:
        return ""
    if isinstance(entry, tuple):
        return "@(" + ",".join(map(str, entry)) + ")"
    return f"@{entry}"


def _vma_str(vma, spec=None, mesh=None):
    """`{V:x}`, `{U:y}`, `{V:x, R:(y,z)}`: the varying, unreduced and reduced axes, as JAX
    prints them (in the mesh's order, sorted without a mesh)."""
    sets = (("V", vma), ("U", getattr(spec, "unreduced", ())),
            ("R", getattr(spec, "reduced", ())))
    shown = [f"{k}:{_axis_set_str(axes, mesh)}" for k, axes in sets if axes]
    return "{" + ", ".join(shown) + "}" if shown else ""


def _axis_set_str(axes, mesh):
    order = getattr(mesh, "axis_names", None)
    axes = [a for a in order if a in axes] if order else sorted(axes)
    return axes[0] if len(axes) == 1 else "(" + ",".join(axes) + ")"


def mismatch_extra(a, b):
    """", so the dtypes do not match" and the like, as JAX's messages end ("" when only
    their shardings differ)."""
    what = [f"the {w} do not match" for w, differ in (
        ("dtypes", a.dtype != b.dtype), ("shapes", a.shape != b.shape),
        ("manual axis types", a.vma != b.vma)) if differ]
    if len(what) < 2:
        return "".join(f", so {w}" for w in what)
    return ", so " + ", ".join(what[:-1]) + ", and " + what[-1]


def same_type(a, b):
    """Equal shape and dtype, ignoring weak type and sharding (what typechecking compares)."""
    return a.shape == b.shape and a.dtype == b.dtype


class ShapeDtypeStruct:
    """A shape, a dtype and optionally a sharding: an argument to eval_shape or .lower()."""

    __slots__ = ("shape", "dtype", "sharding", "weak_type", "manual_axis_type")

    def __init__(self, shape, dtype, *, sharding=None, weak_type=False, manual_axis_type=None):
        if dtype is None:
            raise ValueError("ShapeDtypeStruct: dtype must be specified.")
        if manual_axis_type is not None and not isinstance(manual_axis_type, ManualAxisType):
            raise TypeError("`manual_axis_type` argument passed to ShapeDtypeStruct should be "
                            "of type `jax.sharding.ManualAxisType`. Got type "
                            f"{type(manual_axis_type)}")
        self.shape = tuple(int(d) for d in shape)
        self.dtype = np.dtype(dtype)  # as given (JAX's): canonicalized where it is used
        self.sharding = sharding
        self.weak_type = weak_type
        self.manual_axis_type = manual_axis_type

    @classmethod
    def from_aval(cls, aval, sharding=None):
        """The struct of a type (its manual axis type kept when it varies, as JAX's)."""
        return cls(aval.shape, aval.dtype, sharding=sharding, weak_type=aval.weak_type,
                   manual_axis_type=aval.manual_axis_type if aval.vma else None)

    def to_aval(self):
        """Its type (jax.typeof's), without a sharding."""
        mat = self.manual_axis_type
        return ShapedArray(self.shape, dtypes.canonicalize_dtype(self.dtype), self.weak_type,
                           vma=mat.varying if mat is not None else frozenset())

    @classmethod
    def like(cls, x):
        """The shape, dtype and weak type of x (an array, tracer, scalar or ShapeDtypeStruct),
        and its sharding when x is committed to one."""
        from .trace import Tracer, get_aval
        if isinstance(x, ShapeDtypeStruct):
            return cls(x.shape, x.dtype, sharding=x.sharding, weak_type=x.weak_type,
                       manual_axis_type=x.manual_axis_type)
        aval = get_aval(x)
        if isinstance(x, Tracer):  # its type's sharding (None off a mesh)
            sharding = aval.sharding
        else:
            sharding = getattr(x, "sharding", None) if getattr(x, "committed", True) else None
        return cls.from_aval(aval, sharding)

    ndim = property(lambda self: len(self.shape))

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]
    size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))

    def __repr__(self):
        sh = f", sharding={self.sharding}" if self.sharding is not None else ""
        weak = ", weak_type=True" if self.weak_type else ""
        mat = self.manual_axis_type
        mat = f", manual_axis_type={mat}" if mat is not None else ""
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{sh}{weak}{mat})"

    def _key(self):
        return (self.shape, self.dtype, self.sharding, self.weak_type, self.manual_axis_type)

    def __eq__(self, other):
        return isinstance(other, ShapeDtypeStruct) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())


_INTERN_LOCK = threading.Lock()


class ManualAxisType:
    """How a value relates to manual mesh axes (jax.sharding.ManualAxisType): the axes it
    varies over, is unreduced over, is reduced over. Interned: equal ones are identical."""

    __slots__ = ("varying", "unreduced", "reduced", "__weakref__")
    _interned = weakref.WeakValueDictionary()

    def __new__(cls, *, varying=frozenset(), unreduced=frozenset(), reduced=frozenset()):
        varying, unreduced, reduced = map(frozenset, (varying, unreduced, reduced))
        for name, other in (("unreduced", unreduced), ("reduced", reduced)):
            if varying & other:
                raise ValueError(f"varying and {name} cannot have common mesh axes. Got "
                                 f"varying={set(varying)} and {name}={set(other)}")
        key = (varying, unreduced, reduced)
        with _INTERN_LOCK:
            obj = cls._interned.get(key)
            if obj is None:
                obj = object.__new__(cls)
                for field, value in zip(cls.__slots__, key):
                    object.__setattr__(obj, field, value)
                cls._interned[key] = obj
        return obj

    def __setattr__(self, name, value):
        raise AttributeError(f"ManualAxisType is immutable: cannot set {name}")

    def update(self, **changes):
        """This type with some of varying/unreduced/reduced replaced."""
        fields = dict(varying=self.varying, unreduced=self.unreduced, reduced=self.reduced)
        fields.update(changes)
        return ManualAxisType(**fields)

    def invarying(self, mesh):
        """The manual axes of `mesh` this value is invariant over (neither varying, unreduced
        nor reduced)."""
        return frozenset(mesh.manual_axes) - self.vur

    vur = property(lambda self: self.varying | self.unreduced | self.reduced,
                   doc="The manual axes the value varies, is unreduced or reduced over.")
    empty = property(lambda self: not self.vur, doc="Whether it names no axis at all.")

    def __repr__(self):
        return (f"ManualAxisType(varying={self.varying}, unreduced={self.unreduced}, "
                f"reduced={self.reduced})")
