"""scan and cond run iteration by iteration (each body evaluated on the current trace): how
reverse mode (linearize) differentiates a loop or a branch that uses mutable array
references, whose writes the loop's own linearize rule would lose. A cond's index must then
be concrete (not traced under jit); a while loop is refused, as JAX refuses it."""
import numpy as np

from ... import jaxpr as jx
from ...avals import ShapedArray
from ...transforms.ad import LINEARIZE_BY_ITERATIONS, zeros_like_aval
from .. import structural as st
from .common import is_concrete, split, stacked
from .cond import cond_p
from .loops import _stack, _while_transpose, scan_p, while_p


def _run(closed, *args):
    return jx.eval_jaxpr(closed.jaxpr, closed.consts, *args)


def _scan_iterations(args, *, jaxpr, length, num_carry, num_consts, reverse, **_):
    consts, carry, xs = split(list(args), [num_consts, num_carry])
    ys = []
    for i in (reversed(range(length)) if reverse else range(length)):
        outs = _run(jaxpr, *consts, *carry, *[st.index_in_dim(x, i, 0) for x in xs])
        carry = outs[:num_carry]
        ys.append(outs[num_carry:])
    ys = ys[::-1] if reverse else ys
    y_avals = jaxpr.out_avals[num_carry:]
    return carry + [_stack(col) for col in zip(*ys)] if ys else \
        carry + [zeros_like_aval(stacked(a, 0)) for a in y_avals]


def _concrete(value, what):
    if not is_concrete(value):
        raise NotImplementedError(
            f"refjax cannot differentiate in reverse mode (grad, vjp, linearize) a {what} "
            "using mutable array references (jax.Ref) whose index is traced (under jit); "
            "forward mode (jvp, jacfwd) can")
    return np.asarray(value.to_concrete_value() if hasattr(value, "to_concrete_value")
                      else value)


def _while_refused(args, **params):
    """JAX's error: reverse mode refuses a while loop, references or not."""
    _while_transpose(None)


def _cond_iterations(args, *, branches):
    index, *ops = args
    which = int(np.clip(_concrete(index, "cond"), 0, len(branches) - 1))
    return _run(branches[which], *ops)


def _while_iterations(args, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    cond_consts, body_consts, carry = split(list(args), [cond_nconsts, body_nconsts])
    while bool(_run(cond_jaxpr, *cond_consts, *carry)[0]):
        carry = _run(body_jaxpr, *body_consts, *carry)
    return carry


LINEARIZE_BY_ITERATIONS.update({scan_p: _scan_iterations, while_p: _while_refused,
                                cond_p: _cond_iterations})

# Each loop and branch on the current trace, equation by equation: how backends holding each
# device's partial value run control flow over unreduced values (each equation device by
# device), with the operands' avals as the primitive's jaxprs give them.
ITERATIONS = {scan_p: _scan_iterations, while_p: _while_iterations, cond_p: _cond_iterations}
_OPERAND_AVALS = {
    scan_p: lambda p: (p["jaxpr"].in_avals[:p["num_consts"] + p["num_carry"]] + [
        stacked(a, p["length"]) for a in p["jaxpr"].in_avals[p["num_consts"] + p["num_carry"]:]]),
    while_p: lambda p: p["cond_jaxpr"].in_avals[:p["cond_nconsts"]] + p["body_jaxpr"].in_avals,
    cond_p: lambda p: [ShapedArray((), np.dtype(np.int32))] + p["branches"][0].in_avals}


def operand_avals(prim, params):
    """The avals of a control-flow primitive's operands, read off its jaxprs."""
    return list(_OPERAND_AVALS[prim](params))
