"""jax.lax lowerings of cond, while and scan: the sub-jaxprs are interpreted with the xla
lowerings inside jax.lax.switch, jax.lax.while_loop and jax.lax.scan."""
from jax import lax

from ....core.primitives import control_flow as cf
from ...base import get_backend
from ._common import rule


def _run(closed, args):
    """closed on JAX values, outputs converted to exactly its output types (JAX's loops and
    branches insist on identical types, weak types included)."""
    outs = get_backend("xla").interpret(closed, list(args))
    return [_typed(o, a) for o, a in zip(outs, closed.out_avals)]


def _typed(x, aval):
    return lax.convert_element_type(x, aval.dtype)


@rule(cf.cond_p)
def _cond(index, *operands, branches):
    """lax.switch clamps an out-of-range index, as numpy_ref does."""
    fns = [lambda *ops, b=b: _run(b, ops) for b in branches]
    return lax.switch(index, fns, *operands)


@rule(cf.while_p)
def _while(*args, body_jaxpr, body_nconsts, cond_jaxpr, cond_nconsts):
    cond_consts = list(args[:cond_nconsts])
    body_consts = list(args[cond_nconsts:cond_nconsts + body_nconsts])
    init = [_typed(x, a) for x, a in zip(args[cond_nconsts + body_nconsts:], body_jaxpr.out_avals)]
    return list(lax.while_loop(lambda carry: _run(cond_jaxpr, cond_consts + list(carry))[0],
                               lambda carry: _run(body_jaxpr, body_consts + list(carry)), init))


@rule(cf.scan_p)
def _scan(*args, jaxpr, length, num_carry, num_consts, reverse, unroll,
          _split_transpose=False):
    consts = list(args[:num_consts])
    init = [_typed(x, a) for x, a in zip(args[num_consts:num_consts + num_carry], jaxpr.out_avals)]
    xs = list(args[num_consts + num_carry:])

    def body(carry, x):
        outs = _run(jaxpr, consts + list(carry) + list(x))
        return outs[:num_carry], outs[num_carry:]

    carry, ys = lax.scan(body, init, xs, length=length, reverse=reverse, unroll=unroll)
    return list(carry) + list(ys)
