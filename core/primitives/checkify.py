"""check: checkify's effect, an Error that raises JaxRuntimeError when it holds a failure.
Eagerly it raises at once; under checkify it is discharged into the error value; staged
(jit, scan, ...) without checkify, running it raises JAX's functionalization ValueError."""
import numpy as np

from .. import pytree
from ..jaxpr import pp_hiding
from ..primitive import make_primitive
from ..trace import Tracer
from ..transforms.batching import bdim_at_front
from ..transforms.checkify_errors import JaxRuntimeError
from . import elementwise as ew
from . import reductions
from .structural import dynamic_slice, rev, squeeze

check_p = make_primitive("check", multiple_results=True)

FUNCTIONALIZATION_ERROR = (
    "Cannot abstractly evaluate a checkify.check which was not functionalized. This probably "
    "means you tried to stage (jit/scan/pmap/...) a `check` without functionalizing it "
    "through `checkify.checkify`.")


def check_error(error, debug=False):
    """Raise the error now (concrete values: eagerly, or on the primals under grad) or bind
    check_p for the trace its values belong to."""
    if any(np.shape(p) for p in error._pred.values()):
        error = reduce_any_error(error)
    leaves, tree = pytree.tree_flatten(error)
    if any(isinstance(x, Tracer) for x in leaves):
        check_p.bind(*leaves, err_tree=tree, debug=debug)
    elif not debug:
        raise_if_failed(error)


def raise_if_failed(error):
    """JaxRuntimeError with the message of the failed check, if one failed."""
    exc = error.get_exception()
    if exc is not None:
        raise JaxRuntimeError(str(exc)) from exc


def reduce_any_error(error):
    """A batched error (leading axis) as one: per slot, the last batch element that failed
    (or the last element when none did), as JAX's stable sort of the predicates picks."""
    pred, code, payload = {}, {}, {}
    for e, p in error._pred.items():
        n = np.shape(p)[0]
        flipped = reductions.argmax(ew.convert_element_type(rev(p, (0,)), np.int32), 0,
                                    np.int32)
        i = ew.sub(ew.weak_scalar(n - 1, np.int32), flipped)
        pick = lambda x, i=i: squeeze(dynamic_slice(x, (i,) + (0,) * (np.ndim(x) - 1),
                                                    (1,) + np.shape(x)[1:]), (0,))
        pred[e], code[e], payload[e] = pick(p), pick(error._code[e]), [
            pick(x) for x in error._payload[e]]
    return type(error)(pred, code, error._metadata, payload)


@check_p.def_abstract_eval
def _check_abstract_eval(*avals, err_tree, debug):
    return []


def _check_jvp(primals, tangents, *, err_tree, debug):
    """Differentiation checks the primal values; a check has no tangents."""
    check_error(pytree.tree_unflatten(err_tree, primals), debug)
    return [], []


def _check_batch(axis_data, vals, dims, *, err_tree, debug):
    """Under vmap the batched error is reduced to one (see reduce_any_error) and checked."""
    vals = [bdim_at_front(v, d, axis_data.size) for v, d in zip(vals, dims)]
    check_error(pytree.tree_unflatten(err_tree, vals), debug)
    return [], []


check_p.def_jvp(_check_jvp)
check_p.def_batch(_check_batch)
check_p.def_vma(lambda eqn, ins, strict: [])
check_p.def_pp(pp_hiding("err_tree"))  # as JAX prints it: check[debug=False] operands


def staged_check_rule(*values, err_tree, debug):
    """What backends run for a check_p left in a compiled program: as JAX's lowering, a
    non-debug check that checkify did not functionalize is an error."""
    if debug:
        return []
    raise ValueError(FUNCTIONALIZATION_ERROR)
