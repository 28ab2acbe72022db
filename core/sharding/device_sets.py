"""JAX's refusal of a computation whose committed inputs (or shardings named inside it) live on
different device sets: "Received incompatible devices for jitted computation"."""
import numpy as np

from .abstract_mesh import AbstractMesh
from .mesh import Mesh, concrete_mesh, get_current_mesh
from .shardings import NamedSharding, Sharding


def renamed(err, fun_name, named_values):
    """`err`, refused by a primitive inside the jnp function `fun_name`, reworded with the
    function's own arguments holding its clashing device assignments, as JAX names them (its
    jnp functions are jitted: their arguments are what it compares); `err` itself when it is
    named already or the function's (top-level) arguments do not hold them."""
    fails = getattr(err, "unnamed_fails", None)
    if fails is None:
        return err
    places = committed_places(named_values)
    found = [p if p.name is None else
             next((q for q in places if q.assignment == p.assignment), None) for p in fails]
    return err if None in found else ValueError(_message(fun_name, *found))


class Place:
    """One device assignment a computation is asked to run on: a committed argument's
    (`name`, `aval`), or another `kind` of request ("explicit output sharding",
    "sharding_constraint inside jit", ...) made `where` (" at file:line:col (fn)")."""

    __slots__ = ("assignment", "name", "aval", "kind", "where")

    def __init__(self, assignment, name=None, aval=None, kind=None, where=""):
        self.assignment, self.name, self.aval = assignment, name, aval
        self.kind, self.where = kind, where

    def describe(self, fun_name):
        """This request as JAX's message words it."""
        ids = [d.id for d in self.assignment]
        devices = f"with device ids {ids} on platform {self.assignment[0].platform.upper()}"
        if self.name is None:
            return f"{self.kind} {devices}{self.where}"
        return (f"argument {self.name} of {fun_name} with shape "
                f"{self.aval.str_short(short_dtypes=False)} and {devices}")


def check(fun_name, places, named=True):
    """JAX's ValueError, in its words, at the first request whose device assignment
    (the devices and their order) differs from the first one's; `named`: whether the
    places' names are the user's (else a jnp function around them may rename them).
    Returns the first request (None when nothing asks for devices)."""
    first = None
    for place in places:
        if place is None:  # asks for no devices of its own
            continue
        if first is None:
            first = place
        elif place.assignment != first.assignment:
            err = ValueError(_message(fun_name, first, place))  # JAX's class, no subclass
            err.incompatible_devices = True  # its message names its operation already
            if not named:
                err.unnamed_fails = (first, place)
            raise err
    return first


def check_mesh_sizes(first, out_avals):
    """JAX's ValueError when a result is typed on a mesh of Explicit axes whose size is not
    the number of devices the computation runs on (`first`'s, else the default device):
    a reshard names only its mesh's shape (JAX's abstract mesh), its devices are the
    computation's."""
    count = 1 if first is None else len(first.assignment)
    for aval in out_avals:
        mesh = getattr(getattr(aval, "sharding", None), "mesh", None)
        if mesh is not None and mesh.axis_names and mesh.are_all_axes_explicit \
                and mesh.size != count:
            types = {}
            for name, kind in zip(mesh.axis_names, mesh.axis_types):
                types.setdefault(kind, []).append(name)
            raise ValueError(
                f"Length of device assignment {count} is not equal to the size of the mesh "
                f"{mesh.size} of aval {aval.str_short()}"
                f"({ {k: tuple(v) for k, v in types.items()} }). Please enter your `jit` into "
                "a mesh context via `jax.set_mesh`.")


def is_reshard(sharding):
    """Whether a constraint to `sharding` is a reshard (its mesh's axes all Explicit), which
    JAX makes to its mesh's shape, not its devices: inside jit the value stays on the
    computation's devices (laid out as the mesh's shape: `on_devices_of`)."""
    mesh = getattr(sharding, "mesh", None)
    return isinstance(sharding, NamedSharding) and bool(mesh.axis_names) \
        and mesh.are_all_axes_explicit


def on_devices_of(sharding, home):
    """A constraint's `sharding` moved to the devices of the mesh `home` (the computation's),
    in their order, shaped as its own mesh, when it names no devices of its own: a reshard's
    (JAX's names an abstract mesh) or one of an AbstractMesh; `sharding` when it names
    devices, is there already, or (a reshard) has another size (`check_mesh_sizes`). On no
    mesh an AbstractMesh's is None (JAX leaves the value on its one device); of another size
    than `home`'s, JAX's ValueError."""
    mesh = getattr(sharding, "mesh", None)
    abstract = isinstance(mesh, AbstractMesh)
    if not (abstract or is_reshard(sharding)) or home is None:
        return None if abstract else sharding
    if abstract and mesh.size != home.size:
        raise ValueError(f"AbstractMesh size: {mesh.size} does not match the device "
                         f"assignment size: {home.size}")
    if not abstract and (mesh._flat_devices_tuple == home._flat_devices_tuple
                         or mesh.size != home.size):
        return sharding
    devices = np.array(home._flat_devices_tuple, dtype=object).reshape(mesh.axis_sizes)
    return sharding.update(mesh=Mesh(devices, mesh.axis_names, axis_types=mesh.axis_types))


def check_abstract_targets(fun_name, first, in_targets, out_targets):
    """JAX's ValueError for jit's in_shardings of an AbstractMesh (an argument needs devices:
    JAX's own error speaks of memory kinds instead), and for out_shardings of one when nothing
    else names the computation's devices."""
    if any(isinstance(getattr(s, "mesh", None), AbstractMesh) for s in in_targets):
        raise ValueError(f"jit of {fun_name}: in_shardings cannot be NamedShardings of an "
                         "AbstractMesh (arguments are placed on devices): use a Mesh")
    sizes = {s.mesh.size for s in out_targets if isinstance(getattr(s, "mesh", None),
                                                            AbstractMesh)}
    if first is not None and sizes - {len(first.assignment)}:
        raise ValueError(f"AbstractMesh size: {max(sizes - {len(first.assignment)})} does not "
                         f"match the device assignment size: {len(first.assignment)}")
    if first is None and sizes:
        raise ValueError(
            "Passing lowering_platforms via jax.export or jit(f).trace(*args).lower("
            "lowering_platforms=...) is required when only AbstractMesh exists in a jitted "
            f"computation. Got context mesh: {concrete_mesh()}")


def _message(fun_name, *pair):
    first, second = sorted(pair, key=lambda p: p.name is None)  # arguments first, as JAX
    return ("Received incompatible devices for jitted computation. "
            f"Got {first.describe(fun_name)} and {second.describe(fun_name)}")


def committed_places(named_values):
    """The Places of the committed Arrays and references among (name, value) pairs
    (uncommitted values follow the committed ones, as in JAX)."""
    from ..array import Array  # core.array imports this package
    from ..sharding_types import typed_aval
    from ..state import Ref
    return [Place(x.sharding._device_assignment, name, typed_aval(x))
            for name, x in named_values if type(x) is Ref or type(x) is Array and x.committed]


def context_places():
    """The context mesh's (set_mesh) Place, first, as JAX compares every other one with it."""
    mesh = get_current_mesh()
    return [] if mesh is None else [Place(mesh._flat_devices_tuple, kind="jit's context mesh")]


def sharding_place(sharding, kind, where=""):
    """The Place a sharding named inside a computation (or as its output) asks for; None for
    what asks for no devices of its own."""
    if not isinstance(sharding, Sharding) or isinstance(sharding, NamedSharding) \
            and isinstance(sharding.mesh, AbstractMesh):
        return None
    return Place(sharding._device_assignment, kind=kind, where=where)
