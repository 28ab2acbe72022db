"""jax.checkpoint (remat): the `remat2` primitive with all of its rules, checkpoint_name (the
`name` primitive) and the policies deciding which values the backward pass saves.

Checkpointing changes what differentiation stores, not what it computes. Under linearize
(grad, vjp) the JVP of the checkpointed jaxpr is split into a known part, run now, and an
unknown part staged as a `remat2` equation into the linear jaxpr. The known part hands over
only the residuals `policy` saves (and the function's inputs); every other value the
tangents need is recomputed inside the unknown remat2 equation, where transposition
evaluates it again on the backward pass."""
import dataclasses
import functools
import inspect
import types
from typing import NamedTuple

from .. import key_reuse, pytree
from ..config import config
from ..jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var, jaxpr_as_fun, with_binders
from ..primitive import make_primitive
from ..primitives.linalg import dot_general_p
from ..primitives.structural import copy_p
from ..sharding_types import typed_aval
from ..trace import Tracer, as_value
from .ad import UndefinedPrimal, Zero
from .batching import defvectorized, moveaxis
from .dce import call_rule, dce_closed, def_dce
from .jit import signature_key, trace_cache, transpose_call
from .jvp import jvp_jaxpr
from .partial_eval import partial_eval_jaxpr
from .partial_eval_style import jaxpr_trace_style, remat_policy
from .staging import stage_closed, stage_with_const_inputs
from .vmap import batch_jaxpr

__all__ = ["checkpoint", "remat", "checkpoint_name", "checkpoint_policies", "remat_p", "name_p",
           "Recompute", "Saveable", "Offloadable", "saved_residuals", "print_saved_residuals"]

remat_p = make_primitive("remat2", multiple_results=True)
name_p = make_primitive("name")


# ---------------------------------------------------------------- checkpoint_name

name_p.def_abstract_eval(lambda x, *, name: x)
defvectorized(name_p)


def _name_jvp(primals, tangents, *, name):
    """The primal keeps its name; the tangent is not named (as in JAX)."""
    (x,), (t,) = primals, tangents
    return name_p.bind(x, name=name), t


name_p.def_jvp(_name_jvp)


def checkpoint_name(x, name):
    """x (each leaf of a pytree) tagged with `name`, for checkpoint policies that save or
    recompute values by name (save_only_these_names, save_any_names_but_these)."""
    return pytree.tree_map(lambda leaf: name_p.bind(as_value(leaf), name=name), x)


# ---------------------------------------------------------------- remat2's rules

@remat_p.def_abstract_eval
def _remat_abstract_eval(*avals, jaxpr, **_):
    return jaxpr.out_avals


def _remat_jvp(primals, tangents, *, jaxpr, prevent_cse, differentiated, policy):
    nonzeros = [type(t) is not Zero for t in tangents]
    new, out_nz = jvp_jaxpr(jaxpr, nonzeros)
    outs = remat_p.bind(*primals, *[t for t in tangents if type(t) is not Zero], jaxpr=new,
                        prevent_cse=prevent_cse, differentiated=True, policy=policy)
    n = len(jaxpr.out_avals)
    return outs[:n], outs[n:]


def _remat_linearize(primals, tangents, *, jaxpr, prevent_cse, differentiated, policy):
    """Run the known part now; stage the tangent part, recomputing what the policy does not
    save, as one remat2 equation of the linear jaxpr."""
    nonzeros = [type(t) is not Zero for t in tangents]
    new, _ = jvp_jaxpr(jaxpr, nonzeros)
    nz_tangents = [t for t in tangents if type(t) is not Zero]
    known, unknown, out_uk, n_res = partial_eval_with_policy(
        new, [False] * len(primals) + [True] * len(nz_tangents), policy)
    known_outs = jaxpr_as_fun(known)(*primals)
    n_known = len(known_outs) - n_res
    unknown_outs = iter(remat_p.bind(*known_outs[n_known:], *nz_tangents, jaxpr=unknown,
                                     prevent_cse=prevent_cse, differentiated=True,
                                     policy=policy))
    known_outs = iter(known_outs[:n_known])
    outs = [next(unknown_outs) if u else next(known_outs) for u in out_uk]
    n = len(jaxpr.out_avals)
    return outs[:n], outs[n:]


def _remat_partial_eval(eqn, unknowns):
    """A remat2 equation with unknown inputs: the known part as plain equations, the unknown
    part (with its recomputation) as a remat2 equation."""
    p = eqn.params
    known, unknown, out_uk, n_res = partial_eval_with_policy(p["jaxpr"], unknowns, p["policy"])
    known_in = [v for v, u in zip(eqn.invars, unknowns) if not u]
    known, res, made = _forwarded_residuals(known, known_in, n_res)
    k_eqns = _inline(known, known_in, [v for v, u in zip(eqn.outvars, out_uk) if not u] + made)
    u_eqn = JaxprEqn(remat_p, res + [v for v, u in zip(eqn.invars, unknowns) if u],
                     [v for v, u in zip(eqn.outvars, out_uk) if u],
                     dict(p, jaxpr=unknown, differentiated=True), eqn.source_info)
    return k_eqns, [u_eqn] if any(out_uk) else [], out_uk


def _forwarded_residuals(known, known_in, n_res):
    """Residuals that are known inputs are those inputs' outer atoms (no copy is staged, as
    JAX's partial evaluation passes the input's tracer on): (the known jaxpr computing only
    the other residuals, every residual's atom, the variables it defines)."""
    kj = known.jaxpr
    n_out = len(kj.outvars) - n_res
    outer = dict(zip(kj.invars, known_in))
    res = [outer.get(v) if type(v) is not Literal else None for v in kj.outvars[n_out:]]
    made = [Var(v.aval) for v, r in zip(kj.outvars[n_out:], res) if r is None]
    computed = [v for v, r in zip(kj.outvars[n_out:], res) if r is None]
    made_it = iter(made)
    res = [next(made_it) if r is None else r for r in res]
    return with_binders(known, outvars=list(kj.outvars[:n_out]) + computed), res, made


def _inline(closed, in_atoms, out_vars):
    """The equations of `closed` applied to `in_atoms`, defining `out_vars` (renamed; an
    output that is an input, a literal or a repeat is defined by a copy)."""
    env = dict(zip(closed.jaxpr.invars, in_atoms))
    produced = {v for e in closed.jaxpr.eqns for v in e.outvars}
    copies = []
    for v, out in zip(closed.jaxpr.outvars, out_vars):
        if type(v) is not Literal and v in produced and v not in env:
            env[v] = out
        else:
            copies.append((v, out))
    read = lambda v: v if type(v) is Literal else env[v]  # noqa: E731
    eqns = [e._replace(invars=[read(v) for v in e.invars],
                       outvars=[env.setdefault(v, Var(v.aval)) for v in e.outvars])
            for e in closed.jaxpr.eqns]
    return eqns + [JaxprEqn(copy_p, [read(v)], [out], {}) for v, out in copies]


def _remat_transpose(cts, *args, jaxpr, prevent_cse, differentiated, policy):
    return transpose_call(functools.partial(remat_p.bind, prevent_cse=prevent_cse,
                                            differentiated=True, policy=policy),
                          cts, args, _rematted(jaxpr, [type(a) is UndefinedPrimal for a in args]))


def _rematted(closed, linear):
    """`closed` as JAX's remat transpose runs it: partially evaluated first (its JaxprTrace),
    the known part recomputing the residuals, then the linear part (a shard_map among its
    equations is split into a known shard_map and a linear one)."""
    with jaxpr_trace_style():
        known, unknown, out_uk, n_res = partial_eval_jaxpr(closed, linear)

    def fun(*args):
        outs = jaxpr_as_fun(known)(*[a for a, lin in zip(args, linear) if not lin])
        n_known = len(outs) - n_res
        lin_outs = iter(jaxpr_as_fun(unknown)(*outs[n_known:], *[
            a for a, lin in zip(args, linear) if lin]))
        known_outs = iter(outs[:n_known])
        return [next(lin_outs) if uk else next(known_outs) for uk in out_uk]
    return stage_closed(fun, closed.in_avals)


def _remat_batch(axis_data, vals, dims, *, jaxpr, **params):
    vals = [v if d is None else moveaxis(v, d, 0) for v, d in zip(vals, dims)]
    new, _ = batch_jaxpr(jaxpr, axis_data, [d is not None for d in dims], True)
    outs = remat_p.bind(*vals, jaxpr=new, **params)
    return outs, [0] * len(outs)


remat_p.def_call("jaxpr")
def_dce(remat_p)(call_rule())


@remat_p.def_key_reuse
def _remat_key_reuse(avals, keys, *, jaxpr, differentiated, **params):
    """As JAX: the differentiated copy uses no key the first pass has not used already."""
    if differentiated:
        return key_reuse.Signature()
    return key_reuse.call_rule()(avals, keys, jaxpr=jaxpr)
remat_p.def_jvp(_remat_jvp)
remat_p.def_linearize(_remat_linearize)
remat_p.def_partial_eval(_remat_partial_eval)
remat_p.def_transpose(_remat_transpose)
remat_p.def_batch(_remat_batch)


# ---------------------------------------------------------------- which residuals are saved

def partial_eval_with_policy(closed, unknowns, policy):
    """partial_eval_jaxpr, keeping as residuals only the known inputs and the values `policy`
    saves (policy(prim, *in_avals, **params) true, or Saveable/Offloadable); the equations
    computing any other residual are copied to the unknown side, which recomputes it."""
    with remat_policy(policy):  # JAX's remat has no linearize rule: its JaxprTrace splits it
        known, unknown, out_uk, n_res = partial_eval_jaxpr(closed, unknowns)
    kj = known.jaxpr
    n_known = len(kj.outvars) - n_res
    producers = {v: e for e in kj.eqns for v in e.outvars}
    recompute, res = _slice(kj.outvars[n_known:], producers,
                            lambda v: _is_saved(v, producers, policy))
    # the known side computes only its outputs and the saved residuals (JAX's dce_jaxpr of
    # jaxpr_known): what the unknown side recomputes is not computed twice
    known = dce_closed(with_binders(known, outvars=list(kj.outvars[:n_known]) + res))[0]
    uj = unknown.jaxpr
    eqns = _in_program_order(recompute, uj.eqns, closed.jaxpr.eqns)
    new_unknown = Jaxpr([], res + list(uj.invars[n_res:]), uj.outvars, eqns)
    return known, ClosedJaxpr(new_unknown, unknown.consts), out_uk, len(res)


def _in_program_order(recompute, unknown, program):
    """The recomputed and the unknown equations interleaved as `program` orders them (JAX's
    partial_eval_jaxpr_custom keeps the program's order); an equation a rule made takes the
    place of the one before it, and at a tie the recomputed one comes first."""
    position = {id(e): i for i, e in enumerate(program)}

    def placed(eqns):
        out, last = [], -1
        for e in eqns:
            last = position.get(id(e), last)
            out.append((last, e))
        return out
    return [e for _, e in sorted(placed(recompute) + placed(unknown), key=lambda t: t[0])]


def _is_saved(var, producers, policy):
    eqn = producers.get(var)
    if eqn is None:  # an input, or a literal
        return True
    if policy is None:
        return False
    decision = policy(eqn.primitive, *[v.aval for v in eqn.invars], **eqn.params)
    return decision is True or isinstance(decision, (SaveableType, Offloadable))


def _slice(targets, producers, saved):
    """(the equations recomputing `targets`, in program order; the values they start from:
    inputs and values `saved` keeps). A target that is saved is simply kept."""
    # a multi-output equation produces several variables: recomputed once
    eqns, kept, order = {}, {}, list({id(e): e for e in producers.values()}.values())
    stack = list(reversed(targets))
    while stack:
        v = stack.pop()
        if v in kept or id(producers.get(v)) in eqns:
            continue
        if saved(v):
            kept[v] = None
            continue
        eqn = producers[v]
        eqns[id(eqn)] = eqn
        stack += [u for u in reversed(eqn.invars) if type(u) is not Literal]
    return [e for e in order if id(e) in eqns], list(kept)


# ---------------------------------------------------------------- jax.checkpoint

def _check_static_argnums(nums, nargs):
    """As JAX: every static_argnums entry must name a passed positional argument (refjax
    used to ignore those beyond the arguments)."""
    if any(not -nargs <= i < nargs for i in nums):
        raise ValueError(
            "the `static_argnums` argument to `jax.checkpoint` / `jax.remat` can only take "
            f"integer values greater than or equal to `-len(args)` and less than `len(args)`, "
            f"but got {nums}, while `len(args)` = {nargs}")


def checkpoint(fun, *, prevent_cse=True, policy=None, static_argnums=(), static_argnames=()):
    """jax.checkpoint (alias remat): fun with the same values and derivatives, whose
    differentiation saves only fun's inputs and the values `policy` allows (see
    checkpoint_policies) and recomputes the rest on the backward pass. fun is traced at every
    call (arguments steering Python control flow must be in `static_argnums`)."""
    static_argnums = (static_argnums,) if isinstance(static_argnums, int) else \
        tuple(static_argnums)
    remat3 = config.read("jax_remat3")  # read when wrapping, as JAX's
    policy = _remat3_policy(policy) if remat3 else policy

    @functools.wraps(fun)
    def checkpointed(*args, **kwargs):
        args = _with_static_names(fun, args, kwargs, static_argnames)
        _check_static_argnums(static_argnums, len(args))
        static = {i % len(args) for i in static_argnums}
        dyn = [a for i, a in enumerate(args) if i not in static]
        leaves, in_tree = pytree.tree_flatten((dyn, kwargs))
        leaves = [as_value(x) for x in leaves]
        box = {}

        def flat(*flat_args):
            d, kw = pytree.tree_unflatten(in_tree, flat_args)
            it = iter(d)
            out = fun(*[args[i] if i in static else next(it) for i in range(len(args))], **kw)
            out_leaves, box["tree"] = pytree.tree_flatten(out)
            return out_leaves

        avals = tuple(typed_aval(x) for x in leaves)  # with their sharding types
        key = signature_key(in_tree, avals, tuple((i, args[i]) for i in sorted(static)))
        hit = cache.get(key)
        if hit is None:
            closed, consts = stage_with_const_inputs(flat, list(avals))
            hit = closed, consts, box["tree"]
            if not any(isinstance(c, Tracer) for c in consts):
                cache.put(key, hit)
        closed, consts, out_tree = hit
        outs = remat_p.bind(*consts, *leaves, jaxpr=closed, prevent_cse=bool(prevent_cse),
                            differentiated=False, policy=policy)
        return pytree.tree_unflatten(out_tree, outs)

    # As JAX's, the trace of fun is cached per function (weakly) and signature: a function
    # reading a global it was traced with keeps that trace (the policy applies afterwards).
    cache = trace_cache(fun, ("checkpoint", static_argnums, static_argnames))
    if remat3:  # JAX's remat3 wrapper has the signature (*args, **kwargs): debug info says so
        del checkpointed.__wrapped__
    return checkpointed


def _remat3_policy(policy):
    """The policy JAX 0.10.2's remat3 applies: it consults the name policies and
    everything_saveable on named values, a DotsSaveable policy on dot_general, and
    recomputes every other value."""
    return None if policy is None else _Remat3Policy(policy)


@dataclasses.dataclass(frozen=True)
class _Remat3Policy:
    policy: object

    def __call__(self, prim, *avals, **params):
        if prim is name_p:
            return self.policy is everything_saveable or isinstance(
                self.policy, (SaveOnlyTheseNames, SaveAnyNamesButThese)) and bool(
                    self.policy(prim, *avals, **params))
        return prim is dot_general_p and isinstance(self.policy, DotsSaveable) and bool(
            self.policy(prim, *avals, **params))


def _with_static_names(fun, args, kwargs, static_argnames):
    """Keyword arguments named static become positional (so static_argnums covers them)."""
    names = (static_argnames,) if isinstance(static_argnames, str) else tuple(static_argnames)
    if not any(n in kwargs for n in names):
        return tuple(args)
    bound = inspect.signature(fun).bind(*args, **{n: kwargs.pop(n) for n in names
                                                  if n in kwargs})
    return tuple(bound.args)


remat = checkpoint


# ---------------------------------------------------------------- policies

class RecomputeType:
    """A policy's answer: recompute this value on the backward pass."""


class SaveableType:
    """A policy's answer: save this value for the backward pass."""


Recompute, Saveable = RecomputeType(), SaveableType()


class Offloadable(NamedTuple):
    """A policy's answer: save this value in another memory (refjax has one: saved)."""
    src: str
    dst: str


def everything_saveable(*_, **__):
    """Save every residual, as if checkpoint were not used."""
    return True


def nothing_saveable(*_, **__):
    """Recompute every residual (checkpoint's default)."""
    return False


@dataclasses.dataclass(frozen=True)
class DotsSaveable:
    """Save the outputs of dot_general (and convolutions), only those without batch dimensions
    if only_if_no_batch_dims."""
    only_if_no_batch_dims: bool

    def __call__(self, prim, *avals, **params):
        if self.only_if_no_batch_dims:
            return prim is dot_general_p and not any(params["dimension_numbers"][1])
        return prim is dot_general_p or prim.name == "conv_general_dilated"


@dataclasses.dataclass(frozen=True)
class SaveOnlyTheseNames:
    """Save only values named (checkpoint_name) with one of these names."""
    saveable_names: frozenset

    def __call__(self, prim, *_, **params):
        return prim is name_p and params["name"] in self.saveable_names


@dataclasses.dataclass(frozen=True)
class SaveAnyNamesButThese:
    """Save named values except those with these names."""
    names: frozenset

    def __call__(self, prim, *_, **params):
        return prim is name_p and params["name"] not in self.names


def save_only_these_names(*names):
    return SaveOnlyTheseNames(frozenset(names))


def save_any_names_but_these(*names):
    return SaveAnyNamesButThese(frozenset(names))


def save_anything_except_these_names(*names):
    """As JAX 0.10 has it: saves every value (names are not consulted); a policy of its own,
    not everything_saveable (jax_remat3 treats them differently)."""
    return functools.partial(everything_saveable)


def offload_dot_with_no_batch_dims(offload_src, offload_dst):
    """dots_with_no_batch_dims_saveable, offloaded (saved, in refjax's one memory)."""
    def policy(prim, *_, **params):
        if prim is dot_general_p and not any(params["dimension_numbers"][1]):
            return Offloadable(offload_src, offload_dst)
        return Recompute
    return policy


def save_and_offload_only_these_names(*, names_which_can_be_saved, names_which_can_be_offloaded,
                                      offload_src, offload_dst):
    """Save some names, offload others (saved too, in refjax), recompute the rest."""
    saved, offloaded = set(names_which_can_be_saved), set(names_which_can_be_offloaded)
    if saved & offloaded:
        raise ValueError("The names should be exclusive and should not intersect in "
                         "`names_which_can_be_saved` and `names_which_can_be_offloaded`. Got "
                         f"names_which_can_be_saved={saved}, names_which_can_be_offloaded="
                         f"{offloaded} and the intersection={saved & offloaded}")

    def policy(prim, *_, **params):
        if prim is name_p and params["name"] in saved:
            return Saveable
        if prim is name_p and params["name"] in offloaded:
            return Offloadable(offload_src, offload_dst)
        return Recompute
    return policy


def save_from_both_policies(policy_1, policy_2):
    """A residual is saved if either policy saves it."""
    def policy(prim, *args, **params):
        out1, out2 = policy_1(prim, *args, **params), policy_2(prim, *args, **params)
        if not (isinstance(out1, bool) and isinstance(out2, bool)):
            raise ValueError("The return value of the policies should be a boolean. Got: "
                             f"{out1} and {out2}. Please write a custom policy function "
                             "directly, rather than using this helper function.")
        return out1 or out2
    return policy


dots_saveable = DotsSaveable(False)
dots_with_no_batch_dims_saveable = DotsSaveable(True)
checkpoint_policies = types.SimpleNamespace(
    everything_saveable=everything_saveable, nothing_saveable=nothing_saveable,
    dots_saveable=dots_saveable, checkpoint_dots=dots_saveable,
    dots_with_no_batch_dims_saveable=dots_with_no_batch_dims_saveable,
    checkpoint_dots_with_no_batch_dims=dots_with_no_batch_dims_saveable,
    offload_dot_with_no_batch_dims=offload_dot_with_no_batch_dims,
    save_anything_except_these_names=save_anything_except_these_names,
    save_any_names_but_these=save_any_names_but_these,
    save_only_these_names=save_only_these_names,
    save_from_both_policies=save_from_both_policies,
    save_and_offload_only_these_names=save_and_offload_only_these_names)


# ---------------------------------------------------------------- what the backward pass saves

def saved_residuals(f, *args, **kwargs):
    """[(aval, description)] of the values jax.vjp(f, *args) keeps for the backward pass:
    the arguments it keeps, and the outputs of which operations on which of your lines."""
    from .autodiff import vjp
    from .jit import make_jaxpr
    leaves, in_tree = pytree.tree_flatten((args, kwargs))

    def flat_vjp(*flat):
        a, kw = pytree.tree_unflatten(in_tree, flat)
        return vjp(lambda *xs: f(*xs, **kw), *a)

    closed, shape = make_jaxpr(flat_vjp, return_shape=True)(*leaves)
    n_res = len(pytree.tree_leaves(shape[1]))
    jaxpr = closed.jaxpr
    return _describe(jaxpr, jaxpr.outvars[len(jaxpr.outvars) - n_res:],
                     _arg_names(f, args, kwargs, len(leaves)))


def _describe(jaxpr, residuals, arg_names):
    res = set(v for v in residuals if type(v) is not Literal)
    out = [(v.aval, "from a literal") for v in residuals if type(v) is Literal]
    out += [(v.aval, "from a constant") for v in jaxpr.constvars if v in res]
    out += [(v.aval, f"from the argument {name}" if name else
             f"from the argument at flattened index {i}")
            for i, (v, name) in enumerate(zip(jaxpr.invars, arg_names)) if v in res]
    for eqn in jaxpr.eqns:
        src = eqn.source_info.summarize() if eqn.source_info else "<unknown>"
        for v in eqn.outvars:
            if v not in res:
                continue
            if eqn.primitive is name_p:
                out.append((v.aval, f"named '{eqn.params['name']}' from {src}"))
            elif eqn.primitive.name == "jit":  # JAX's known jit, split off, has no line
                out.append((v.aval, f"output of jitted function '{eqn.params['name']}' from "))
            else:
                out.append((v.aval, f"output of {eqn.primitive.name} from {src}"))
    return out


def _arg_names(f, args, kwargs, n):
    """The name of each flattened argument (`x`, `params['w']`), as JAX's debug info."""
    try:
        bound = inspect.signature(f).bind(*args, **kwargs)
    except (TypeError, ValueError):
        return [None] * n
    names = []
    for name, value in bound.arguments.items():
        paths = pytree.tree_flatten_with_path(value)[0]
        names += [name + pytree.keystr(p) for p, _ in paths]
    return names if len(names) == n else [None] * n


def print_saved_residuals(f, *args, **kwargs):
    """Print saved_residuals(f, *args, **kwargs), one `f32[5,4] from the argument W` per line."""
    for aval, what in saved_residuals(f, *args, **kwargs):
        print(f"{aval.str_short()} {what}")
