"""jax.example_libraries.optimizers: (init_fun, update_fun, get_params) optimizer triples,
step-size schedules and gradient clipping, on refjax's public API."""
import functools
from collections import namedtuple
from typing import Any, Callable, NamedTuple

from .. import numpy as jnp
from .. import tree_util

OptimizerState = namedtuple("OptimizerState", ["packed_state", "tree_def", "subtree_defs"])
tree_util.register_pytree_node(
    OptimizerState,
    lambda s: ((s.packed_state,), (s.tree_def, s.subtree_defs)),
    lambda aux, children: OptimizerState(children[0], *aux))

# The type names JAX's module gives its signatures.
Array = Any
Params = Any
State = Any
Updates = Params
Step = int
InitFn = Callable[[Params], OptimizerState]
UpdateFn = Callable[[Step, Updates, OptimizerState], OptimizerState]
ParamsFn = Callable[[OptimizerState], Params]
Schedule = Callable[[Step], Any]


class Optimizer(NamedTuple):
    """An optimizer triple working on pytrees of parameters."""
    init_fn: Callable
    update_fn: Callable
    params_fn: Callable


def _flatten_each(trees):
    """The leaves and the treedef of each tree, as two lists."""
    pairs = [tree_util.tree_flatten(t) for t in trees]
    return [p[0] for p in pairs], [p[1] for p in pairs]


def _unflatten_each(treedefs, leaves):
    return [tree_util.tree_unflatten(d, x) for d, x in zip(treedefs, leaves)]


def _check_same(expected, got, template):
    if expected != got:
        raise TypeError(template.format(expected, got))


_GRAD_TREE = ("optimizer update function was passed a gradient tree that did not match the "
              "parameter tree structure with which it was initialized: parameter tree {} and "
              "grad tree {}.")
_STATE_TREE = ("optimizer update function produced an output structure that did not match its "
               "input structure: input {} and output {}.")


def optimizer(opt_maker):
    """Lift a maker of per-array (init, update, get_params) functions to one whose functions
    take pytrees of parameters and keep the per-leaf states in an OptimizerState."""

    @functools.wraps(opt_maker)
    def tree_opt_maker(*args, **kwargs):
        init, update, get_params = opt_maker(*args, **kwargs)

        @functools.wraps(init)
        def tree_init(x0_tree):
            leaves, treedef = tree_util.tree_flatten(x0_tree)
            states, subtrees = _flatten_each([init(x) for x in leaves])
            return OptimizerState(states, treedef, subtrees)

        @functools.wraps(update)
        def tree_update(i, grad_tree, opt_state):
            states, treedef, subtrees = opt_state
            grads, grad_def = tree_util.tree_flatten(grad_tree)
            _check_same(treedef, grad_def, _GRAD_TREE)
            new = [update(i, g, s) for g, s in zip(grads, _unflatten_each(subtrees, states))]
            new_states, new_subtrees = _flatten_each(new)
            for old_def, new_def in zip(subtrees, new_subtrees):
                _check_same(old_def, new_def, _STATE_TREE)
            return OptimizerState(new_states, treedef, subtrees)

        @functools.wraps(get_params)
        def tree_get_params(opt_state):
            states, treedef, subtrees = opt_state
            params = [get_params(s) for s in _unflatten_each(subtrees, states)]
            return tree_util.tree_unflatten(treedef, params)

        return Optimizer(tree_init, tree_update, tree_get_params)
    return tree_opt_maker


def _first(state):
    return state[0]


def _with_zeros(count):
    """An init function: the parameters followed by `count` zero arrays like them."""
    return lambda x0: (x0,) + tuple(jnp.zeros_like(x0) for _ in range(count))


@optimizer
def sgd(step_size):
    """Stochastic gradient descent: x <- x - step_size(i) * g."""
    step_size = make_schedule(step_size)
    return Optimizer(lambda x0: x0, lambda i, g, x: x - step_size(i) * g, lambda x: x)


def _momentum_update(step_size, mass, nesterov):
    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        direction = mass * velocity + g if nesterov else velocity
        return x - step_size(i) * direction, velocity
    return update


@optimizer
def momentum(step_size, mass):
    """SGD with momentum `mass`."""
    return _with_zeros(1), _momentum_update(make_schedule(step_size), mass, False), _first


@optimizer
def nesterov(step_size, mass):
    """SGD with Nesterov momentum `mass`."""
    return _with_zeros(1), _momentum_update(make_schedule(step_size), mass, True), _first


def _inv_sqrt_where_positive(a):
    return jnp.where(a > 0, 1. / jnp.sqrt(a), 0.0)


@optimizer
def adagrad(step_size, momentum=0.9):
    """Adagrad (Duchi et al. 2011) with momentum."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, g_sq, m = state
        g_sq = g_sq + jnp.square(g)
        m = (1. - momentum) * (g * _inv_sqrt_where_positive(g_sq)) + momentum * m
        return x - step_size(i) * m, g_sq, m
    return _with_zeros(2), update, _first


def _ema(new, avg, decay):
    """The exponential moving average `avg` updated with `new`."""
    return (1. - decay) * new + decay * avg


@optimizer
def rmsprop(step_size, gamma=0.9, eps=1e-8):
    """RMSProp with decay `gamma`."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, avg_sq = state
        avg_sq = _ema(jnp.square(g), avg_sq, gamma)
        return x - step_size(i) * g / jnp.sqrt(avg_sq + eps), avg_sq
    return _with_zeros(1), update, _first


@optimizer
def rmsprop_momentum(step_size, gamma=0.9, eps=1e-8, momentum=0.9):
    """RMSProp with decay `gamma` and momentum."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, avg_sq, mom = state
        avg_sq = _ema(jnp.square(g), avg_sq, gamma)
        mom = momentum * mom + step_size(i) * g / jnp.sqrt(avg_sq + eps)
        return x - mom, avg_sq, mom
    return _with_zeros(2), update, _first


def _bias_correction(beta, i, dtype):
    """1 - beta**(i+1), in the moments' dtype."""
    return 1 - jnp.asarray(beta, dtype) ** (i + 1)


@optimizer
def adam(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """Adam (Kingma and Ba 2014)."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, m, v = state
        m, v = _ema(g, m, b1), _ema(jnp.square(g), v, b2)
        mhat, vhat = m / _bias_correction(b1, i, m.dtype), v / _bias_correction(b2, i, m.dtype)
        return x - step_size(i) * mhat / (jnp.sqrt(vhat) + eps), m, v
    return _with_zeros(2), update, _first


@optimizer
def adamax(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """AdaMax: Adam with the infinity norm."""
    step_size = make_schedule(step_size)

    def update(i, g, state):
        x, m, u = state
        m, u = _ema(g, m, b1), jnp.maximum(b2 * u, jnp.abs(g))
        rate = step_size(i) / _bias_correction(b1, i, m.dtype)
        return x - rate * m / (u + eps), m, u
    return _with_zeros(2), update, _first


def _along(ndim, v, axis):
    """`v` (1-D) shaped to broadcast along `axis` of an `ndim`-dimensional array."""
    return jnp.reshape(v, [-1 if d == axis else 1 for d in range(ndim)])


def _max_except(a, axis):
    return a.max(tuple(d for d in range(a.ndim) if d != axis))


@optimizer
def sm3(step_size, momentum=0.9):
    """SM3 (Anil et al. 2019): per-axis accumulators of squared gradients."""
    step_size = make_schedule(step_size)

    def init(x0):
        x = jnp.atleast_1d(x0)
        return x, jnp.zeros_like(x), [jnp.zeros(n, x.dtype) for n in x.shape], jnp.shape(x0)

    def update(i, g, state):
        x, m, vs, x_shape = state
        accum = functools.reduce(
            jnp.minimum, [_along(g.ndim, v, a) for a, v in enumerate(vs)]) + jnp.square(g)
        m = (1. - momentum) * (g * _inv_sqrt_where_positive(accum)) + momentum * m
        return x - step_size(i) * m, m, [_max_except(accum, a) for a in range(x.ndim)], x_shape
    return init, update, lambda state: state[0].reshape(state[3])


# ---------------------------------------------------------------- schedules

def constant(step_size):
    """The schedule returning `step_size` at every step."""
    return lambda i: step_size


def exponential_decay(step_size, decay_steps, decay_rate):
    """step_size * decay_rate ** (i / decay_steps)."""
    return lambda i: step_size * decay_rate ** (i / decay_steps)


def inverse_time_decay(step_size, decay_steps, decay_rate, staircase=False):
    """step_size / (1 + decay_rate * i / decay_steps), i / decay_steps floored if staircase."""
    if staircase:
        return lambda i: step_size / (1 + decay_rate * jnp.floor(i / decay_steps))
    return lambda i: step_size / (1 + decay_rate * i / decay_steps)


def polynomial_decay(step_size, decay_steps, final_step_size, power=1.0):
    """From step_size to final_step_size over decay_steps along (1 - i/decay_steps)**power."""
    def schedule(i):
        fraction = (1 - jnp.minimum(i, decay_steps) / decay_steps) ** power
        return fraction * (step_size - final_step_size) + final_step_size
    return schedule


def piecewise_constant(boundaries, values):
    """values[k] for steps in (boundaries[k-1], boundaries[k]]."""
    boundaries, values = jnp.array(boundaries), jnp.array(values)
    if not boundaries.ndim == values.ndim == 1:
        raise ValueError("boundaries and values must be sequences")
    if not boundaries.shape[0] == values.shape[0] - 1:
        raise ValueError("boundaries length must be one shorter than values length")
    return lambda i: values[jnp.sum(i > boundaries)]


def make_schedule(scalar_or_schedule):
    """A schedule as is, a scalar as the constant schedule; anything else is a TypeError."""
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if jnp.ndim(scalar_or_schedule) == 0:
        return constant(scalar_or_schedule)
    raise TypeError(type(scalar_or_schedule))


# ---------------------------------------------------------------- utilities

def l2_norm(tree):
    """The l2 norm of all the leaves of a pytree of arrays together."""
    return jnp.sqrt(sum(jnp.vdot(x, x) for x in tree_util.tree_leaves(tree)))


def clip_grads(grad_tree, max_norm):
    """The gradients scaled down to l2 norm `max_norm` when their norm exceeds it."""
    norm = l2_norm(grad_tree)
    return tree_util.tree_map(
        lambda g: jnp.where(norm < max_norm, g, g * (max_norm / norm)), grad_tree)


class JoinPoint:
    """Marks where an outer pytree's leaf holds an inner pytree (a parameter's state)."""

    def __init__(self, subtree):
        self.subtree = subtree

    def __iter__(self):
        yield self.subtree


def unpack_optimizer_state(opt_state):
    """An OptimizerState as the parameter pytree with a JoinPoint holding each leaf's state
    (for serialization)."""
    states, treedef, subtrees = opt_state
    return tree_util.tree_unflatten(
        treedef, [JoinPoint(s) for s in _unflatten_each(subtrees, states)])


def pack_optimizer_state(marked_pytree):
    """The inverse of unpack_optimizer_state: a pytree of JoinPoints as an OptimizerState."""
    marks, treedef = tree_util.tree_flatten(marked_pytree)
    strays = [type(m).__name__ for m in marks if not isinstance(m, JoinPoint)]
    if strays:
        # JAX asserts here (a bare AssertionError); say what was wrong instead.
        raise TypeError("pack_optimizer_state expects a pytree whose leaves are all JoinPoints "
                        f"(from unpack_optimizer_state), but got leaves of type {strays}")
    states, subtrees = _flatten_each([m.subtree for m in marks])
    return OptimizerState(states, treedef, subtrees)
