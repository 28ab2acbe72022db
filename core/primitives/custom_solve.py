"""custom_linear_solve (its primitive with all of its rules) and custom_root: solves whose
derivatives come from implicit differentiation at the solution, not from the solver.

  custom_linear_solve_p.bind(*consts, *b, const_lengths, jaxprs)
      jaxprs: a LinearSolveTuple of ClosedJaxprs (matvec, vecmat, solve, transpose_solve; the
      transposes may be None), each taking its consts (const_lengths of them, in that order
      among the operands) and then a value shaped like b. Result: solve(b) (plus solve's
      auxiliary outputs), whose derivatives assume matvec(x) == b."""
from typing import Any, NamedTuple

from .. import pytree
from ..trace import as_value, get_aval
from ..transforms import ad
from ..transforms.ad import Zero
from ..transforms.batching import bdim_at_front
from ..transforms.custom import custom_jvp
from ..transforms.jvp import jvp, jvp_flat
from ..transforms.vmap import batch_jaxpr
from ..primitive import make_primitive
from . import elementwise as ew
from .control_flow.common import fun_of, split, trace_fun


class LinearSolveTuple(NamedTuple):
    """One entry per function of a linear solve (JAX's _LinearSolveTuple)."""
    matvec: Any
    vecmat: Any
    solve: Any
    transpose_solve: Any

    def transpose(self):
        """The solve of the transposed system: the roles of matvec/vecmat and of the solves
        are exchanged."""
        return type(self)(self.vecmat, self.matvec, self.transpose_solve, self.solve)


def _check_tree(func_name, expected_name, actual_tree, expected_tree, has_aux=False):
    if has_aux:
        children = pytree.treedef_children(actual_tree)
        if len(children) != 2:
            raise ValueError(f"{func_name}() produced a pytree with structure {actual_tree}, but a "
                             "pytree tuple with auxiliary output was expected because has_aux "
                             "was set to True.")
        actual_tree = children[0]
    if actual_tree != expected_tree:
        raise TypeError(f"{func_name}() output pytree structure must match {expected_name}, got "
                        f"{actual_tree} and {expected_tree}.")


def _check_shapes(func_name, expected_name, actual, expected):
    actual_shapes = [tuple(get_aval(x).shape) for x in actual]
    expected_shapes = [tuple(get_aval(x).shape) for x in expected]
    if actual_shapes != expected_shapes:
        raise ValueError(f"{func_name}() output shapes must match {expected_name}, got "
                         f"{actual_shapes} and {expected_shapes}")


# ---------------------------------------------------------------- the primitive

custom_linear_solve_p = make_primitive("custom_linear_solve", multiple_results=True)


def _split_args(args, const_lengths):
    *groups, b = split(list(args), list(const_lengths))
    return LinearSolveTuple(*groups), b


@custom_linear_solve_p.def_abstract_eval
def _abstract_eval(*avals, const_lengths, jaxprs):
    """x is typed like b; solve's auxiliary outputs follow."""
    _, b = _split_args(avals, const_lengths)
    n_aux = len(jaxprs.solve.out_avals) - len(jaxprs.matvec.out_avals)
    return list(b) + list(jaxprs.solve.out_avals[len(jaxprs.solve.out_avals) - n_aux:])


def _bind(params, b, const_lengths, jaxprs):
    flat = [x for group in params for x in group]
    return custom_linear_solve_p.bind(*flat, *b, const_lengths=const_lengths, jaxprs=jaxprs)


def _matvec_tangent(jaxprs, params, params_dot, x):
    """dA x: the tangent of matvec(params, x) with respect to its consts alone."""
    zeros = [Zero.from_primal(v) for v in x]
    _, out = jvp_flat(fun_of(jaxprs.matvec), list(params.matvec) + list(x),
                      list(params_dot.matvec) + zeros)
    return out


def _jvp(primals, tangents, *, const_lengths, jaxprs):
    """A x = b gives A dx = db - dA x: one more solve with the same consts."""
    x = custom_linear_solve_p.bind(*primals, const_lengths=const_lengths, jaxprs=jaxprs)
    params, _ = _split_args(primals, const_lengths)
    params_dot, b_dot = _split_args(tangents, const_lengths)
    n = len(b_dot)
    rhs = list(b_dot)
    if any(type(t) is not Zero for t in params_dot.matvec):
        dax = _matvec_tangent(jaxprs, params, params_dot, x[:n])
        rhs = [ad.add_tangents(t, _neg(d)) for t, d in zip(rhs, dax)]
    aux_zeros = [Zero.from_primal(a) for a in x[n:]]
    if all(type(t) is Zero for t in rhs):
        return x, [Zero.from_primal(v) for v in x[:n]] + aux_zeros
    dx = _bind(params, [ad.instantiate(t) for t in rhs], const_lengths, jaxprs)
    return x, list(dx[:n]) + aux_zeros


def _neg(t):
    return t if type(t) is Zero else ew.neg(t)


def _transpose(cts, *args, const_lengths, jaxprs):
    if jaxprs.transpose_solve is None:
        raise TypeError("transpose_solve required for backwards mode automatic differentiation "
                        "of custom_linear_solve")
    params, b = _split_args(args, const_lengths)
    if any(ad.is_undefined_primal(x) for group in params for x in group):
        raise ValueError("custom_linear_solve is linear in b only: its transpose needs the "
                         "consts of matvec and the solves known")
    x_cts, aux_cts = cts[:len(b)], cts[len(b):]
    if any(type(c) is not Zero for c in aux_cts):
        raise ValueError("custom_linear_solve cannot be transposed with respect to its "
                         "auxiliary outputs")
    ct_b = _bind(params.transpose(), [ad.instantiate(c) for c in x_cts],
                 LinearSolveTuple(*const_lengths).transpose(), jaxprs.transpose())
    return [None] * sum(const_lengths) + list(ct_b[:len(b)])


def _batch(axis_data, vals, dims, *, const_lengths, jaxprs):
    """Every operand batched at 0 (the unbatched ones broadcast) and every function batched
    with all of its inputs and outputs batched: the four stay consistent with each other."""
    vals = [bdim_at_front(v, d, axis_data.size) for v, d in zip(vals, dims)]

    def batched(closed):
        if closed is None:
            return None
        return batch_jaxpr(closed, axis_data, [True] * len(closed.in_avals), True)[0]
    new = LinearSolveTuple(*map(batched, jaxprs))
    outs = custom_linear_solve_p.bind(*vals, const_lengths=const_lengths, jaxprs=new)
    return outs, [0] * len(outs)


def _sharding(in_specs, in_avals, out_avals, *, const_lengths, jaxprs):
    """x is laid out as b; auxiliary outputs are replicated."""
    _, b_specs = _split_args(in_specs, const_lengths)
    return list(b_specs) + [(None,) * len(a.shape) for a in out_avals[len(b_specs):]]


custom_linear_solve_p.def_jvp(_jvp)
custom_linear_solve_p.def_transpose(_transpose)
custom_linear_solve_p.def_batch(_batch)
custom_linear_solve_p.def_sharding(_sharding)


# ---------------------------------------------------------------- custom_linear_solve

def _shape_checked(fun, name, b_leaves, has_aux):
    def checked(x):
        out = fun(x)
        y = out[0] if has_aux else out
        _check_shapes(name, "b", pytree.tree_leaves(y), b_leaves)
        return out
    return checked


def _staged(fun, tree, avals, name, has_aux):
    """(ClosedJaxpr taking its captured values first, those values, output tree)."""
    closed, consts, out_tree = trace_fun(fun, tree, avals)
    _check_tree(name, "b", out_tree, tree, has_aux)
    return closed, consts, out_tree


def custom_linear_solve(matvec, b, solve, transpose_solve=None, symmetric=False, has_aux=False):
    """solve(matvec, b), differentiated as the solution x of matvec(x) == b (implicitly):
    forward mode solves again with solve, reverse mode with transpose_solve applied to the
    transpose of matvec (solve itself when symmetric). b may be any pytree of arrays."""
    from ..transforms.autodiff import linear_transpose
    if transpose_solve is None and symmetric:
        transpose_solve = solve
    leaves, tree = pytree.tree_flatten(b)
    leaves = [as_value(x) for x in leaves]
    avals = [get_aval(x) for x in leaves]
    matvec_j = _staged(_shape_checked(matvec, "matvec", leaves, False), tree, avals, "matvec",
                       False)
    solve_j = _staged(_shape_checked(lambda x: solve(matvec, x), "solve", leaves, has_aux),
                      tree, avals, "solve", has_aux)
    vecmat_j = tr_solve_j = (None, [], None)
    if transpose_solve is not None:
        vecmat = matvec if symmetric else _one_output(linear_transpose(matvec, b))
        vecmat_j = matvec_j if symmetric else _staged(vecmat, tree, avals, "vecmat", False)
        tr_solve_j = _staged(
            _shape_checked(lambda x: transpose_solve(vecmat, x), "transpose_solve", leaves,
                           has_aux), tree, avals, "transpose_solve", has_aux)
    staged = [matvec_j, vecmat_j, solve_j, tr_solve_j]
    outs = custom_linear_solve_p.bind(
        *[c for _, cs, _ in staged for c in cs], *leaves,
        const_lengths=LinearSolveTuple(*[len(c) for _, c, _ in staged]),
        jaxprs=LinearSolveTuple(*[j for j, _, _ in staged]))
    x = pytree.tree_unflatten(tree, outs[:len(leaves)])
    if not has_aux:
        return x
    aux_tree = pytree.treedef_children(solve_j[2])[1]
    return x, pytree.tree_unflatten(aux_tree, outs[len(leaves):])


def _one_output(transposed):
    def fun(x):
        (y,) = transposed(x)
        return y
    return fun


# ---------------------------------------------------------------- custom_root

class _RootTuple(NamedTuple):
    f: Any
    solve: Any
    l_and_s: Any


def custom_root(f, initial_guess, solve, tangent_solve, has_aux=False):
    """solve(f, initial_guess), a root of f, with derivatives (with respect to the values f
    closes over) from the implicit function theorem: the tangent system, f linearized at the
    root, is solved with tangent_solve(g, y)."""
    from ..transforms.autodiff import linearize
    leaves, tree = pytree.tree_flatten(initial_guess)
    avals = [get_aval(as_value(x)) for x in leaves]
    f_j, f_consts, f_tree = trace_fun(f, tree, avals)
    _check_tree("f", "initial_guess", f_tree, tree, False)
    solve_j, solve_consts, solution_tree = trace_fun(lambda x: solve(f, x), tree, avals)
    _check_tree("solve", "initial_guess", solution_tree, tree, has_aux)

    def linearize_and_solve(xb):
        _, f_jvp = linearize(f, xb[0])
        return tangent_solve(f_jvp, xb[1])
    pair_tree = pytree.tree_structure((initial_guess, initial_guess))
    ls_j, ls_consts, ls_tree = trace_fun(linearize_and_solve, pair_tree, avals + avals)
    _check_tree("tangent_solve", "x", ls_tree, tree, False)
    consts = [f_consts, solve_consts, ls_consts]
    lengths = _RootTuple(*map(len, consts))
    flat = _custom_root(lengths, _RootTuple(f_j, solve_j, ls_j),
                        *[c for cs in consts for c in cs], *[as_value(x) for x in leaves])
    return pytree.tree_unflatten(solution_tree, flat)


def _root_split(args, lengths):
    *groups, guess = split(list(args), list(lengths))
    return _RootTuple(*groups), guess


def _custom_root_impl(lengths, jaxprs, *args):
    params, guess = _root_split(args, lengths)
    return fun_of(jaxprs.solve)(*params.solve, *guess)


_custom_root = custom_jvp(_custom_root_impl, nondiff_argnums=(0, 1))


@_custom_root.defjvp
def _root_jvp(lengths, jaxprs, primals, tangents):
    """F(m, u*(m)) = 0 gives du* = -(d_u F)^-1 (d_m F dm)."""
    params, _ = _root_split(primals, lengths)
    params_dot, _ = _root_split(tangents, lengths)
    sol = _custom_root(lengths, jaxprs, *primals)
    n = len(jaxprs.f.out_avals)
    solution, aux = list(sol[:n]), list(sol[n:])
    f = fun_of(jaxprs.f)
    _, rhs = jvp(lambda *p: f(*p, *solution), list(params.f), list(params_dot.f))
    dsol = fun_of(jaxprs.l_and_s)(*params.l_and_s, *solution, *rhs)
    aux_dot = [ad.zeros_like_aval(get_aval(a).to_tangent_aval()) for a in aux]
    return solution + aux, [ew.neg(d) for d in dsol] + aux_dot


