"""jax.sharding.auto_axes and explicit_axes: a function run with some mesh axes of another
type (Auto: the compiler lays them out; Explicit: typed), its arguments and results moved
between the two meshes."""
import functools

from ..core import pytree
from ..core.primitives.sharding_ops import reshard, sharding_constraint_p
from ..core.sharding import AxisType, NamedSharding, get_abstract_mesh, get_current_mesh, \
    use_abstract_mesh
from ..core.sharding_propagation import to_sharding
from .typeof import typeof


def auto_axes(f=None, /, *, axes=None, out_sharding=None):
    """f run with the mesh axes `axes` (all by default) made Auto: inside, its arguments'
    types drop them and the compiler lays them out; its results are resharded to
    `out_sharding` (required here or as a keyword of the call)."""
    if f is None:
        return lambda g: auto_axes(g, axes=axes, out_sharding=out_sharding)

    @functools.wraps(f)
    def wrapped(*args, **kwargs):
        target = _required(out_sharding, kwargs, "out_sharding")
        new = _retyped_mesh(axes, AxisType.Auto, "auto_axes", target)
        if new is None or set(get_abstract_mesh().auto_axes) == set(_axes(axes, new)):
            return f(*args, **kwargs)
        with use_abstract_mesh(new):
            out = f(*_onto_context_mesh(args), **kwargs)
        return reshard(out, target)
    return wrapped


def explicit_axes(f=None, /, *, axes=None, in_sharding=None):
    """f run with the mesh axes `axes` (all by default) made Explicit: its arguments are
    resharded to `in_sharding` (required here or as a keyword of the call) and typed by it;
    its results leave with the outer mesh's Explicit axes of their types."""
    if f is None:
        return lambda g: explicit_axes(g, axes=axes, in_sharding=in_sharding)

    @functools.wraps(f)
    def wrapped(*args, **kwargs):
        target = _required(in_sharding, kwargs, "in_sharding")
        new = _retyped_mesh(axes, AxisType.Explicit, "explicit_axes")
        if new is None:
            raise ValueError("Context mesh cannot be empty. Please use `jax.set_mesh` API to "
                             "enter into a mesh context when using `explicit_axes` API.")
        with use_abstract_mesh(new):
            out = f(*reshard(args, target), **kwargs)
        return _onto_context_mesh(out)
    return wrapped


def _required(given, kwargs, name):
    if given is not None:
        return given
    if name not in kwargs:
        raise TypeError(f"Missing required keyword argument: '{name}'")
    return kwargs.pop(name)


def _axes(axes, mesh):
    return mesh.axis_names if axes is None else axes if isinstance(axes, tuple) else (axes,)


def _retyped_mesh(axes, axis_type, who, shardings=None):
    """The context's abstract mesh (or the shardings') with `axes` of `axis_type`; None
    without a mesh."""
    current = get_abstract_mesh()
    meshes = {s.mesh.abstract_mesh for s in pytree.tree_leaves(shardings)
              if isinstance(s, NamedSharding)}
    if len(meshes) > 1:
        raise ValueError(f"Shardings passed to {who} should have the same mesh. Got "
                         f"{' and '.join(map(str, meshes))}")
    mesh = meshes.pop() if meshes else current
    if not current.empty and mesh != current:
        raise ValueError(f"Context mesh {current} must match the mesh passed to shardings "
                         f"{mesh}. Recommended approach is to use `jax.set_mesh` context "
                         "manager.")
    if mesh.empty:
        return None
    return mesh.update_axis_types({a: axis_type for a in _axes(axes, mesh)})


def _onto_context_mesh(tree):
    """Each array of `tree` laid out as before on the context mesh (with its axis types):
    its type keeps the mesh's Explicit axes only."""
    mesh = get_current_mesh()

    def move(x):
        spec = typeof(x).sharding.spec
        return sharding_constraint_p.bind(x, sharding=to_sharding(spec, mesh))
    return pytree.tree_map(move, tree)
