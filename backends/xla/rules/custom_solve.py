"""xla lowering of custom_linear_solve: the user's solve, interpreted with the xla
lowerings."""
from ....core.primitives import custom_solve as cs
from ...base import get_backend
from ._common import rule


@rule(cs.custom_linear_solve_p)
def _custom_linear_solve(*args, const_lengths, jaxprs):
    start = const_lengths.matvec + const_lengths.vecmat
    consts = list(args[start:start + const_lengths.solve])
    return get_backend("xla").interpret(jaxprs.solve, consts + list(args[sum(const_lengths):]))
