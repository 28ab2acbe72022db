"""NumPy rule of custom_linear_solve: the user's solve, interpreted."""
from ....core.primitives import custom_solve as cs
from ..backend import interpret_jaxpr
from ._common import rule


@rule(cs.custom_linear_solve_p)
def _custom_linear_solve(*args, const_lengths, jaxprs):
    n_solve = const_lengths.solve
    start = const_lengths.matvec + const_lengths.vecmat
    consts = list(args[start:start + n_solve])
    return interpret_jaxpr(jaxprs.solve, consts + list(args[sum(const_lengths):]))
