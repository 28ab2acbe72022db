"""NumPy rules of the collectives: each raises NameError, since a collective that reaches the
backend ran outside any vmap, pmap or shard_map binding its axis name."""
from ....core.primitives import parallel as par
from ....core.primitives.parallel_more import pbroadcast_p
from ....core.primitives.parallel_vma import (
    all_gather_reduced_p, preduced_p, reduced_vary_cast_p, unreduced_psum_p,
    unreduced_reduce_scatter_p, vary_unreduced_cast_p)
from ._common import rule


def _unbound(prim):
    def raise_unbound(*args, **params):
        names = params.get("axes", params.get("axis_name"))
        name = names[0] if isinstance(names, tuple) else names
        raise NameError(f"Found an unbound axis name: {name}. To fix this, please call "
                        f"{prim.name} under `jax.shard_map`.")  # JAX's words
    return raise_unbound


for _p in par.COLLECTIVES + (pbroadcast_p, vary_unreduced_cast_p, reduced_vary_cast_p,
                                   preduced_p, unreduced_psum_p, unreduced_reduce_scatter_p,
                                   all_gather_reduced_p):
    rule(_p)(_unbound(_p))
