"""NumPy rules of cond, while and scan: readable Python loops interpreting the sub-jaxprs."""
import numpy as np

from ....core.primitives import control_flow as cf
from ..backend import interpret_jaxpr
from ._common import rule


def _typed(values, avals):
    return [np.asarray(v, a.dtype) for v, a in zip(values, avals)]


@rule(cf.cond_p)
def _cond(index, *operands, branches):
    """An out-of-range index runs the nearest branch, as XLA's conditional does."""
    branch = branches[int(np.clip(index, 0, len(branches) - 1))]
    return _typed(interpret_jaxpr(branch, list(operands)), branch.out_avals)


@rule(cf.while_p)
def _while(*args, body_jaxpr, body_nconsts, cond_jaxpr, cond_nconsts):
    cond_consts = list(args[:cond_nconsts])
    body_consts = list(args[cond_nconsts:cond_nconsts + body_nconsts])
    carry = list(args[cond_nconsts + body_nconsts:])
    while interpret_jaxpr(cond_jaxpr, cond_consts + carry)[0]:
        carry = _typed(interpret_jaxpr(body_jaxpr, body_consts + carry), body_jaxpr.out_avals)
    return carry


@rule(cf.scan_p)
def _scan(*args, jaxpr, length, num_carry, num_consts, reverse, unroll,
          _split_transpose=False):
    """ys[i] is the body's output at step i; reverse only changes the order of the steps."""
    consts = list(args[:num_consts])
    carry = list(args[num_consts:num_consts + num_carry])
    xs = args[num_consts + num_carry:]
    y_avals = jaxpr.out_avals[num_carry:]
    ys = [np.empty((length,) + tuple(a.shape), a.dtype) for a in y_avals]
    for i in (range(length - 1, -1, -1) if reverse else range(length)):
        outs = interpret_jaxpr(jaxpr, consts + carry + [x[i] for x in xs])
        carry = _typed(outs[:num_carry], jaxpr.out_avals)
        for buf, y in zip(ys, outs[num_carry:]):
            buf[i] = y
    return carry + ys
