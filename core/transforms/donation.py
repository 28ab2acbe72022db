"""jit's donate_argnums at the top level, as JAX's CPU runtime treats donated buffers: a
donated array an output can reuse is deleted after the call; the others are kept, with JAX's
warning when the function is compiled."""
import collections
import math
import warnings

from .. import errors, pytree
from ..array import Array


def donated_leaves(donate_argnums, donate_argnames, static_argnums, in_tree):
    """Which flat arguments are donated: the leaves of the positional arguments named by
    donate_argnums (numbered among all positional arguments, static ones included) and of
    the keyword arguments named by donate_argnames."""
    args, kwargs = pytree.tree_unflatten(in_tree, list(range(in_tree.num_leaves)))
    static = set(static_argnums)
    positions = [i for i in range(len(args) + len(static)) if i not in static]
    donated = {positions.index(i) for i in donate_argnums if i in positions}
    return [leaf for i, arg in enumerate(args) if i in donated
            for leaf in pytree.tree_leaves(arg)] + [
        leaf for k, v in kwargs.items() if k in donate_argnames
        for leaf in pytree.tree_leaves(v)]


def reused(in_avals, donated, out_avals):
    """The donated inputs an output reuses, as JAX pairs them: first an output of the same
    shape and dtype, then one with as many elements."""
    by_type = collections.defaultdict(collections.deque)
    for i in donated:
        by_type[_key(in_avals[i])].append(i)
    used, unpaired = set(), collections.Counter()
    for out in out_avals:
        if by_type[_key(out)]:
            used.add(by_type[_key(out)].popleft())
        else:
            unpaired[math.prod(out.shape)] += 1
    for i in donated:
        size = math.prod(in_avals[i].shape)
        if i not in used and unpaired[size]:
            unpaired[size] -= 1
            used.add(i)
    return used


def _key(aval):
    return aval.shape, aval.dtype


def warn_unusable(in_avals, donated, used):
    """JAX's warning (when it compiles) for donated inputs no output reuses."""
    unusable = [str(in_avals[i]) for i in donated if i not in used]
    if unusable:
        warnings.warn(f"Some donated buffers were not usable: {', '.join(unusable)}.\nSee an "
                      "explanation at https://docs.jax.dev/en/latest/faq.html#buffer-donation.",
                      stacklevel=4)


def donate(leaves, used, outs):
    """Delete the reused donated arrays (not one the call returns as it is)."""
    returned = {id(x) for x in outs}
    for i in used:
        x = leaves[i]
        if isinstance(x, Array) and id(x) not in returned and not x.is_deleted():
            x.delete()


_REUSE = {  # (earlier donated, later donated): JAX's runtime's words
    (True, True): ("donate the same buffer twice in Execute()", "f(donate(a), donate(a))"),
    (True, False): ("use a buffer that was previously donated in the same call to Execute()",
                    "f(donate(a), a)"),
    (False, True): ("donate a buffer which is also used by the same call to Execute()",
                    "f(a, donate(a))"),
}


def check_aliasing(leaves, used):
    """JAX's JaxRuntimeError (before anything runs) for an array donated to the call and
    passed to it again."""
    first = {}
    for j, x in enumerate(leaves):
        if not isinstance(x, Array):
            continue
        i = first.setdefault(id(x), j)
        if i != j and (i in used or j in used):
            what, toy = _REUSE[i in used, j in used]
            raise errors.JaxRuntimeError(
                f"INVALID_ARGUMENT: Attempt to {what} (flattened argument {j}, replica 0, "
                f"partition 0, first use: {i}). Toy example for this bug: `{toy}`.")
