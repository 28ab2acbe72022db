"""lax.composite: a named operation with a decomposition (its meaning), staged as one
`composite` equation holding the decomposition's jaxpr, its name, version and the keyword
attributes it was called with. Backends run the decomposition. As in JAX it has no JVP
(wrap it in custom_jvp); unlike JAX (NotImplementedError) it vmaps, by batching the
decomposition inside a new composite equation."""
import functools

from .. import pytree
from ..primitive import make_primitive
from .batching import moveaxis
from .closure import stage_closed_call
from .vmap import batch_jaxpr

composite_p = make_primitive("composite", multiple_results=True)
composite_p.def_abstract_eval(lambda *avals, jaxpr, **_: jaxpr.out_avals)
composite_p.def_call("jaxpr")


def _no_jvp(primals, tangents, **params):
    raise ValueError("JVP rule for composite not implemented. You can use `jax.custom_jvp` to "
                     "add support. See https://docs.jax.dev/en/latest/_autosummary/"
                     "jax.custom_jvp.html")


def _batch(axis_data, vals, dims, *, jaxpr, **params):
    vals = [v if d is None else moveaxis(v, d, 0) for v, d in zip(vals, dims)]
    closed, _ = batch_jaxpr(jaxpr, axis_data, [d is not None for d in dims], True)
    outs = composite_p.bind(*vals, jaxpr=closed, **params)
    return outs, [0] * len(outs)


composite_p.def_jvp(_no_jvp)
composite_p.def_batch(_batch)


def _attributes(kwargs):
    """JAX's attribute records: (name, flat leaves, tree) per keyword argument, sorted."""
    out = []
    for name, value in sorted(kwargs.items()):
        leaves, tree = pytree.tree_flatten(value)
        for leaf in leaves:
            if hasattr(leaf, "shape") and getattr(leaf, "shape", ()) != ():
                raise TypeError(f"composite attribute {name!r} must be a static scalar or a "
                                f"pytree of them, got an array of shape {leaf.shape}")
        out.append((name, tuple(leaves), tree))
    return tuple(out)


def composite(decomposition, name, version=0):
    """`decomposition` as a composite operation called `name` (version `version`): calls
    stage one `composite` equation; keyword arguments become its static attributes."""
    @functools.wraps(decomposition)
    def call(*args, **kwargs):
        leaves, in_tree = pytree.tree_flatten(args)
        closed, out_tree = stage_closed_call(lambda *a: decomposition(*a, **kwargs), in_tree,
                                             leaves, f"the decomposition of composite {name}")
        outs = composite_p.bind(*leaves, jaxpr=closed, name=name, version=version,
                                attributes=_attributes(kwargs))
        return pytree.tree_unflatten(out_tree, outs)
    return call


__all__ = ["composite", "composite_p"]
