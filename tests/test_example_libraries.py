"""refjax.example_libraries (optimizers, stax) against real JAX's jax.example_libraries: the
optimizers' steps and schedules under jit, stax networks' initial parameters (same PRNG key)
and outputs, and their errors."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.example_libraries import optimizers as jax_optimizers
from jax.example_libraries import stax as jax_stax

import refjax
import refjax.numpy as rnp
from jax_compare import assert_same_error
from refjax.example_libraries import optimizers, stax

_PARAMS = {"w": np.arange(6, dtype=np.float32).reshape(2, 3) / 5 - 0.4,
           "b": [np.float32(0.3), np.array([1., -2.], np.float32)]}
_GRADS = [jax.tree.map(lambda x, k=k: np.cos(np.asarray(x) * (k + 1) + k).astype(np.float32),
                       _PARAMS) for k in range(3)]


def _optimizers(opt):
    """Every optimizer, several with a schedule for its step size."""
    return {
        "sgd": opt.sgd(opt.piecewise_constant([0, 1], [0.1, 0.05, 0.01])),
        "momentum": opt.momentum(opt.exponential_decay(0.1, 2, 0.5), 0.9),
        "nesterov": opt.nesterov(0.1, 0.8),
        "adagrad": opt.adagrad(opt.inverse_time_decay(0.1, 1, 0.5, staircase=True)),
        "rmsprop": opt.rmsprop(opt.polynomial_decay(0.1, 2, 0.01, power=2.0)),
        "rmsprop_momentum": opt.rmsprop_momentum(opt.inverse_time_decay(0.1, 2, 0.5)),
        "adam": opt.adam(0.1),
        "adamax": opt.adamax(opt.constant(0.05)),
        "sm3": opt.sm3(0.1),
    }


def _train(opt, steps, params, grads):
    """Each optimizer's parameters after one update per gradient (the step index traced),
    with l2_norm and clip_grads of the first gradient."""
    out = {}
    for name, (init, update, get_params) in _optimizers(opt).items():
        state = init(params)
        for step, g in zip(steps, grads):
            state = update(step, g, state)
        out[name] = get_params(state)
    return out, opt.l2_norm(grads[0]), opt.clip_grads(grads[0], 1.5)


def test_optimizers_and_schedules_match_jax_under_jit():
    steps = np.arange(3, dtype=np.int32)
    ours = refjax.jit(lambda *a: _train(optimizers, *a))(steps, _PARAMS, _GRADS)
    theirs = jax.jit(lambda *a: _train(jax_optimizers, *a))(steps, _PARAMS, _GRADS)
    assert jax.tree.structure(ours) == jax.tree.structure(theirs)
    for a, b in zip(jax.tree.leaves(ours), jax.tree.leaves(theirs)):
        assert (a.shape, a.dtype) == (b.shape, b.dtype)
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=2e-6, atol=1e-6)
    flat = np.concatenate([np.ravel(g) for g in jax.tree.leaves(_GRADS[0])])
    np.testing.assert_allclose(float(ours[1]), np.linalg.norm(flat), rtol=1e-6)


def test_optimizer_state_is_a_pytree_and_packs_round_trip():
    init, update, get_params = optimizers.adam(0.1)
    state = update(0, _GRADS[0], init(_PARAMS))
    assert isinstance(state, optimizers.OptimizerState)
    assert len(refjax.tree.leaves(state)) == 3 * len(refjax.tree.leaves(_PARAMS))
    marked = optimizers.unpack_optimizer_state(state)
    assert isinstance(marked["w"], optimizers.JoinPoint)
    repacked = optimizers.pack_optimizer_state(marked)
    assert repacked.tree_def == state.tree_def and repacked.subtree_defs == state.subtree_defs
    refjax.tree.map(lambda a, b: np.testing.assert_array_equal(a, b), repacked, state)
    refjax.tree.map(lambda a, b: np.testing.assert_array_equal(a, b), get_params(repacked),
                    get_params(state))


def test_optimizer_errors():
    # a gradient tree unlike the parameters': JAX's TypeError and message
    def mismatched(lib):
        opt = optimizers if lib is refjax else jax_optimizers
        init, update, _ = opt.sgd(0.1)
        return update(0, {"w": _PARAMS["w"]}, init(_PARAMS))
    assert_same_error(mismatched, refjax, jax, TypeError)
    assert_same_error(lambda lib: (optimizers if lib is refjax else jax_optimizers)
                      .piecewise_constant([1, 2], [0.1]), refjax, jax, ValueError)
    # JAX asserts (a bare AssertionError); refjax says what was wrong.
    with pytest.raises(AssertionError):
        jax_optimizers.pack_optimizer_state({"w": 1.0})
    with pytest.raises(TypeError, match="JoinPoints.*float"):
        optimizers.pack_optimizer_state({"w": 1.0})


def _cnn(s):
    """A small CNN using every stax layer on NHWC images, and a 1-D transposed convolution."""
    branch = s.serial(s.Conv(3, (2, 2), padding="SAME"), s.BatchNorm(), s.Relu)
    images = s.serial(
        s.Conv(4, (3, 3), strides=(1, 1), padding="VALID"), s.Tanh,
        s.FanOut(2), s.parallel(branch, s.Conv(3, (1, 1))), s.FanInConcat(),
        s.ConvTranspose(2, (2, 2), strides=(2, 2)), s.Elu, s.MaxPool((2, 2), strides=(2, 2)),
        s.FanOut(3), s.parallel(s.AvgPool((2, 2), padding="SAME"), s.SumPool((2, 2), padding="SAME"),
                                s.Identity),
        s.parallel(s.Identity, s.shape_dependent(lambda shape: s.Softplus), s.Gelu),
        s.parallel(s.Identity, s.LeakyRelu, s.Selu), s.FanInConcat(axis=1),
        s.Flatten, s.Dense(5), s.Sigmoid, s.Dropout(0.8), s.Dense(4), s.LogSoftmax)
    sequences = s.serial(s.Conv1DTranspose(2, (3,), strides=(2,), padding="SAME"), s.Exp,
                         s.Softmax)
    return images, sequences


def _init_and_apply(s, random, key, images, sequences):
    (init_i, apply_i), (init_s, apply_s) = _cnn(s)
    k1, k2, k3 = random.split(key, 3)
    shape_i, params_i = init_i(k1, images.shape)
    shape_s, params_s = init_s(k2, sequences.shape)
    out = apply_i(params_i, images, rng=k3), apply_s(params_s, sequences)
    return (shape_i, shape_s), (params_i, params_s), out


def _stax_inputs():
    rng = np.random.default_rng(0)
    return (rng.normal(size=(2, 7, 7, 2)).astype(np.float32),
            rng.normal(size=(2, 5, 3)).astype(np.float32))


def _assert_same_arrays(ours, theirs):
    assert jax.tree.structure(ours) == jax.tree.structure(theirs)
    for a, b in zip(jax.tree.leaves(ours), jax.tree.leaves(theirs)):
        assert (a.shape, a.dtype) == (b.shape, b.dtype)
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=2e-5, atol=1e-6)


# The default run takes the first case; JAX compiling every initializer of the CNN takes
# ~10 s of CPU, so the thorough profile runs the comparison of initial parameters.
@pytest.mark.parametrize("part", ["apply", "init"])
def test_stax_cnn_matches_jax(part):
    """apply: refjax's parameters (shaped as JAX's init shapes them, found without compiling)
    applied by both libraries; init: both libraries' parameters from the same key."""
    images, sequences = _stax_inputs()
    shapes, params, ours = _run_stax(refjax, stax, images, sequences)
    if part == "init":
        theirs = _run_stax(jax, jax_stax, images, sequences)
        assert shapes == theirs[0]
        _assert_same_arrays((params, ours), theirs[1:])
        return
    theirs_shapes = []

    def their_init(key):
        out = _init_and_apply(jax_stax, jax.random, key, images, sequences)
        theirs_shapes.append(out[0])
        return out[1]
    theirs_params = jax.eval_shape(their_init, jax.random.key(3))
    assert shapes == theirs_shapes[0] == ((2, 4), (2, 10, 2))
    assert jax.tree.map(lambda a: (a.shape, a.dtype), params) == jax.tree.map(
        lambda a: (a.shape, a.dtype), theirs_params)
    params = jax.tree.map(np.asarray, params)
    _assert_same_arrays(refjax.jit(_cnn_apply(stax))(params, refjax.random.key(5)),
                        jax.jit(_cnn_apply(jax_stax))(params, jax.random.key(5)))


def _cnn_apply(s):
    images, sequences = _stax_inputs()
    (_, apply_images), (_, apply_sequences) = _cnn(s)
    return lambda p, key: (apply_images(p[0], images, rng=key), apply_sequences(p[1], sequences))


def _run_stax(lib, s, images, sequences):
    """The output shapes init reports (Python values, kept while jit traces) and the
    parameters and outputs, computed under jit."""
    shapes = []

    def run(key, images, sequences):
        out = _init_and_apply(s, lib.random, key, images, sequences)
        shapes.append(out[0])
        return out[1:]
    params_and_outputs = lib.jit(run)(lib.random.key(3), images, sequences)
    return (shapes[0], *params_and_outputs)


def test_stax_mlp_trains_like_jax():
    """An MLP's initial parameters from the same key, its loss gradient and one momentum step
    agree with JAX's. (Normal weights: JAX compiling glorot_normal's truncated normal takes
    seconds; the CNN's init case compares it.)"""
    def step(lib, s, opt, x, y):
        init, apply = s.serial(s.Dense(8, W_init=s.randn()), s.Relu,
                               s.Dense(3, W_init=s.randn()), s.LogSoftmax)
        shape, params = init(lib.random.key(0), (-1, 4))
        assert shape == (-1, 3)
        loss = lambda p: -lib.numpy.mean(lib.numpy.sum(apply(p, x) * y, axis=1))
        opt_init, opt_update, get_params = opt.momentum(0.5, 0.9)
        value, grads = lib.value_and_grad(loss)(params)
        return params, value, get_params(opt_update(0, grads, opt_init(params)))
    x = np.linspace(-1, 1, 20, dtype=np.float32).reshape(5, 4)
    y = np.eye(3, dtype=np.float32)[[0, 1, 2, 1, 0]]
    ours = refjax.jit(lambda x, y: step(refjax, stax, optimizers, x, y))(x, y)
    theirs = jax.jit(lambda x, y: step(jax, jax_stax, jax_optimizers, x, y))(x, y)
    _assert_same_arrays(ours, theirs)


def test_dropout_needs_a_key_as_in_jax():
    assert_same_error(lambda lib: (stax if lib is refjax else jax_stax).Dropout(0.5)[1](
        (), (rnp if lib is refjax else jnp).ones(3)), refjax, jax, ValueError)
