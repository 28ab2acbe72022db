"""conv_general_dilated and the lax convolution helpers against real JAX: values over drawn
dimension numbers, strides, paddings, dilations and groups, both transposes and batching,
the errors, and the gradient of a small CNN (its staged primitives and its values)."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, strategies as st

import refjax
from refjax import lax
from refjax.spec.base import refjax_array
from refjax.spec.checks import assert_close, budget, enable_x64
from refjax.spec.convolution import conv_case

both_backends = pytest.mark.backends("numpy_ref", "xla")


def _randn(seed, shape, dtype=np.float32):
    return np.random.RandomState(seed).randn(*shape).astype(dtype)


def _jax_params(params):
    """conv_general_dilated's primitive params as keyword arguments of jax.lax's function."""
    out = {k: v for k, v in params.items() if k not in ("out_sharding", "precision")}
    out["dimension_numbers"] = jax.lax.ConvDimensionNumbers(*params["dimension_numbers"])
    return out


def _lax_params(params):
    return {k: v for k, v in params.items() if k not in ("out_sharding", "precision")}


def _close(a, b, tol=(2e-5, 2e-5), what="result"):
    assert np.asarray(a).dtype == np.asarray(b).dtype, (np.asarray(a).dtype, np.asarray(b).dtype)
    assert_close(a, b, tol, what)


# ---------------------------------------------------------------- values, transposes, vmap

@both_backends
@given(case=conv_case(), seed=st.integers(0, 2**16))
@budget(1.0)
def test_conv_matches_jax_values_and_vjp(case, seed):
    """Values and both cotangents (JAX's vjp) over drawn dimension numbers, strides,
    paddings, dilations and groups, in float64."""
    lhs_shape, rhs_shape, params = case
    lhs, rhs = _randn(seed, lhs_shape, np.float64), _randn(seed + 1, rhs_shape, np.float64)
    with enable_x64():
        ours = lambda a, b: lax.conv_general_dilated(a, b, **_lax_params(params))  # noqa: E731
        theirs = lambda a, b: jax.lax.conv_general_dilated(a, b, **_jax_params(params))  # noqa
        out, pull = refjax.vjp(ours, lhs, rhs)
        expected, jax_pull = jax.vjp(theirs, lhs, rhs)
        _close(out, expected, (1e-12, 1e-12))
        ct = _randn(seed + 2, expected.shape, np.float64)
        for got, want in zip(pull(ct), jax_pull(ct)):
            _close(got, want, (1e-12, 1e-12), "cotangent")


@both_backends
@given(case=conv_case(), seed=st.integers(0, 2**16), which=st.sampled_from((0, 1, 2)),
       size=st.sampled_from((0, 1, 3)))
@budget(0.5)
def test_conv_vmap_matches_jax(case, seed, which, size):
    """Batching folds the mapped dimension into the batch (input mapped), the output features
    (kernel mapped) or the feature groups (both); an empty batch gives zeros."""
    lhs_shape, rhs_shape, params = case
    in_axes = [(0, None), (None, 0), (0, 0)][which]
    lhs = _randn(seed, ((size,) if in_axes[0] == 0 else ()) + lhs_shape)
    rhs = _randn(seed + 1, ((size,) if in_axes[1] == 0 else ()) + rhs_shape)
    ours = refjax.vmap(lambda a, b: lax.conv_general_dilated(a, b, **_lax_params(params)),
                       in_axes)(lhs, rhs)
    theirs = jax.vmap(lambda a, b: jax.lax.conv_general_dilated(a, b, **_jax_params(params)),
                      in_axes)(lhs, rhs)
    _close(ours, theirs, (1e-4, 1e-4))


# ---------------------------------------------------------------- the lax helpers

LAYOUTS = [None, ("NCHW", "OIHW", "NCHW"), ("NHWC", "HWIO", "NHWC"), ("NCHW", "HWIO", "NHWC"),
           ("HNCW", "IWHO", "CWHN")]


@both_backends
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("padding", ["SAME", "VALID", "SAME_LOWER", "same", [(1, 0), (-1, 2)]])
def test_string_dimension_numbers_and_paddings(layout, padding):
    dn = layout or ("NCHW", "OIHW", "NCHW")
    sizes = {"N": 2, "C": 3, "H": 7, "W": 5}
    lhs = _randn(0, tuple(sizes[c] for c in dn[0]))
    kernel = {"O": 4, "I": 3, "H": 3, "W": 2}
    rhs = _randn(1, tuple(kernel[c] for c in dn[1]))
    kwargs = dict(window_strides=(2, 1), padding=padding, rhs_dilation=(1, 2),
                  dimension_numbers=layout)
    _close(lax.conv_general_dilated(lhs, rhs, **kwargs),
           jax.lax.conv_general_dilated(lhs, rhs, **kwargs))
    assert lax.conv_dimension_numbers(lhs.shape, rhs.shape, layout) == \
        tuple(jax.lax.conv_dimension_numbers(lhs.shape, rhs.shape, layout))


@both_backends
def test_conv_and_conv_with_general_padding():
    lhs, rhs = _randn(0, (2, 3, 6, 5)), _randn(1, (4, 3, 3, 2))
    for padding in ("SAME", "VALID"):
        _close(lax.conv(lhs, rhs, (1, 2), padding), jax.lax.conv(lhs, rhs, (1, 2), padding))
    args = ((2, 1), [(1, 1), (0, 2)], (1, 2), (2, 1))
    _close(lax.conv_with_general_padding(lhs, rhs, *args),
           jax.lax.conv_with_general_padding(lhs, rhs, *args))


@both_backends
@pytest.mark.parametrize("padding", ["SAME", "VALID", ((1, 2), (0, 1))])
@pytest.mark.parametrize("transpose_kernel", [False, True])
@pytest.mark.parametrize("consistent", [False, True])
def test_conv_transpose(padding, transpose_kernel, consistent):
    lhs, rhs = _randn(0, (2, 5, 4, 4)), _randn(1, (3, 2, 4, 4))
    kwargs = dict(strides=(2, 1), padding=padding, rhs_dilation=(1, 2),
                  transpose_kernel=transpose_kernel, use_consistent_padding=consistent)
    _close(lax.conv_transpose(lhs, rhs, **kwargs), jax.lax.conv_transpose(lhs, rhs, **kwargs))
    lhs1, rhs1 = _randn(2, (2, 7, 3)), _randn(3, (3, 3, 2))
    _close(lax.conv_transpose(lhs1, rhs1, (3,), "SAME"),
           jax.lax.conv_transpose(lhs1, rhs1, (3,), "SAME"))


@both_backends
@pytest.mark.parametrize("layout", [None, ("NHWC", "HWIO", "NHWC"), ("NCHW", "OIHW", "CNHW")])
def test_conv_general_dilated_patches(layout):
    dn = layout or ("NCHW", "OIHW", "NCHW")
    sizes = {"N": 2, "C": 3, "H": 5, "W": 4}
    lhs = _randn(0, tuple(sizes[c] for c in dn[0]))
    kwargs = dict(filter_shape=(2, 3), window_strides=(1, 2), padding="SAME",
                  rhs_dilation=(2, 1), dimension_numbers=layout)
    _close(lax.conv_general_dilated_patches(lhs, **kwargs),
           jax.lax.conv_general_dilated_patches(lhs, **kwargs))


def test_padtype_to_pads_and_shape_helpers():
    for padding in ("SAME", "SAME_LOWER", "VALID", "valid"):
        assert lax.padtype_to_pads((7, 4, 1), (3, 2, 4), (2, 3, 1), padding) == \
            jax.lax.padtype_to_pads((7, 4, 1), (3, 2, 4), (2, 3, 1), padding)
    dn = ("NHWC", "HWIO", "NHWC")
    assert lax.conv_general_shape_tuple((2, 7, 5, 3), (3, 2, 3, 4), (2, 1), "SAME", dn) == \
        tuple(jax.lax.conv_general_shape_tuple((2, 7, 5, 3), (3, 2, 3, 4), (2, 1), "SAME", dn))
    for padding in ("SAME", "VALID", [(1, 0), (2, 1)]):
        assert lax.conv_transpose_shape_tuple((2, 7, 5, 3), (3, 2, 3, 4), (2, 1), padding, dn) \
            == tuple(jax.lax.conv_transpose_shape_tuple((2, 7, 5, 3), (3, 2, 3, 4), (2, 1),
                                                        padding, dn))
    assert lax.conv_shape_tuple((1, 2, 9), (3, 2, 4), (2,), "VALID") == \
        tuple(jax.lax.conv_shape_tuple((1, 2, 9), (3, 2, 4), (2,), "VALID"))
    assert lax.conv_general_permutations(dn) == jax.lax.conv_general_permutations(dn)


# ---------------------------------------------------------------- dtypes and special values

@both_backends
@pytest.mark.parametrize("dtype, pet", [("int8", None), ("int8", "int32"), ("uint8", None),
                                         ("int32", "float32"), ("bool", None),
                                         ("bool", "int32"), ("float16", "float32"),
                                         ("bfloat16", None), ("complex64", None)])
def test_dtypes_and_preferred_element_type(dtype, pet):
    """Integers wrap exactly as XLA's do; bools are an OR of ANDs; weak types as JAX."""
    rng = np.random.RandomState(0)
    lhs = jnp.asarray(rng.randint(-100, 100, (2, 3, 6)) * (1 + 1j if "complex" in dtype else 1))
    rhs = jnp.asarray(rng.randint(-100, 100, (4, 3, 3)))
    lhs, rhs = lhs.astype(dtype), rhs.astype(dtype)
    ours = lax.conv_general_dilated(np.asarray(lhs), np.asarray(rhs), (1,), "SAME",
                                    preferred_element_type=pet)
    theirs = jax.lax.conv_general_dilated(lhs, rhs, (1,), "SAME", preferred_element_type=pet)
    assert ours.dtype == theirs.dtype
    tol = {"float16": (2e-3, 2e-3), "bfloat16": (2e-2, 2e-2)}.get(dtype, (1e-5, 1e-5))
    _close(ours, theirs, tol)


@both_backends
def test_weak_types_follow_jax():
    x = refjax_array(np.ones((1, 1, 3), np.float32), weak=True)
    w = refjax_array(np.ones((1, 1, 2), np.float32), weak=True)
    strong = np.ones((1, 1, 2), np.float32)
    assert lax.conv(x, w, (1,), "VALID").weak_type
    assert not lax.conv(x, strong, (1,), "VALID").weak_type


def test_padding_and_holes_contribute_nothing():
    """numpy_ref follows XLA's HLO evaluator: padding and dilation holes are not multiplied
    (an infinite kernel over padding gives 0, not NaN). XLA on CPU multiplies them in some
    convolution algorithms and skips them in others, as JAX shows (so the spec's samples are
    finite)."""
    x, w = np.zeros((1, 1, 1, 4), np.float32), np.full((1, 1, 2, 2), np.inf, np.float32)
    kwargs = {"window_strides": (1, 1), "padding": ((0, 2), (0, 0))}
    with refjax.backend("numpy_ref"):
        ours = np.asarray(lax.conv_general_dilated(x, w, **kwargs))
        holes = np.asarray(lax.conv_general_dilated(
            np.array([[[1.0, np.inf, 1.0, 1.0]]], np.float32), np.ones((1, 1, 2), np.float32),
            (1,), "VALID", rhs_dilation=(2,)))
    assert np.isnan(ours[0, 0, 0]).all() and (ours[0, 0, 1] == 0).all()
    np.testing.assert_array_equal(holes, [[[2.0, np.inf]]])   # inf meets a kernel hole
    assert np.isnan(np.asarray(jax.lax.conv_general_dilated(x, w, **kwargs))[0, 0, 1]).all()
    one_tap = jax.lax.conv_general_dilated(np.ones((1, 1, 3), np.float32),
                                           np.full((1, 1, 1), np.inf, np.float32), (1,),
                                           [(1, 1)])
    np.testing.assert_array_equal(one_tap, [[[0.0, np.inf, np.inf, np.inf, 0.0]]])


def test_precision_values_are_accepted_and_staged():
    x, w = _randn(0, (1, 2, 5)), _randn(1, (3, 2, 2))
    for precision in ("highest", "HIGH", ("bfloat16", "float32")):
        ours_p, theirs_p = ((lax.Precision[precision], jax.lax.Precision[precision])
                            if precision == "HIGH" else (precision, precision))
        jaxpr = refjax.make_jaxpr(lambda a, b: lax.conv(a, b, (1,), "SAME",
                                                        precision=ours_p))(x, w)
        params = jaxpr.eqns[0].params
        theirs = jax.make_jaxpr(lambda a, b: jax.lax.conv(a, b, (1,), "SAME",
                                                          precision=theirs_p))(x, w)
        assert set(params) == set(theirs.eqns[0].params)
        assert str(params["precision"]) == str(theirs.eqns[0].params["precision"])


# ---------------------------------------------------------------- errors

_X, _W = np.ones((2, 3, 5), np.float32), np.ones((4, 3, 2), np.float32)

WRAPPER_ERRORS = [
    ("dimension_numbers of two strings", dict(dimension_numbers=("NCH", "OIH")), TypeError),
    ("dimension_numbers without 'C'", dict(dimension_numbers=("NHW", "OIH", "NCH")), TypeError),
    ("spatial characters that differ", dict(dimension_numbers=("NCH", "OIW", "NCH")),
     TypeError),
    ("a repeated character", dict(dimension_numbers=("NCC", "OIH", "NCH")), TypeError),
    ("dimension_numbers of an int", dict(dimension_numbers=3), TypeError),
    ("string padding with lhs dilation", dict(padding="SAME", lhs_dilation=(2,)), ValueError),
    ("an unknown padding string", dict(padding="FULL"), RuntimeError),
    ("padding that is not pairs", dict(padding=[1]), ValueError),
]


@pytest.mark.parametrize("what, kwargs, error", WRAPPER_ERRORS, ids=[c[0] for c in
                                                                      WRAPPER_ERRORS])
def test_wrapper_errors_are_jaxs(what, kwargs, error):
    kwargs = {"window_strides": (1,), "padding": "VALID", **kwargs}
    with pytest.raises(error):
        jax.lax.conv_general_dilated(_X, _W, **kwargs)
    with pytest.raises(error, match="onvolution|conv|padding"):
        lax.conv_general_dilated(_X, _W, **kwargs)


def test_errors_name_the_operation_and_shapes():
    with pytest.raises(ValueError, match=r"conv_general_dilated.*2 // 1 != 1") as info:
        lax.conv_general_dilated(np.ones((1, 2, 4)), np.ones((3, 1, 2)), (1,), "VALID")
    with pytest.raises(type(info.value)):
        jax.lax.conv_general_dilated(np.ones((1, 2, 4)), np.ones((3, 1, 2)), (1,), "VALID")
    with pytest.raises(ValueError, match=r"conv_general_dilated.*Negative padding.*\(4,\)"):
        lax.conv_general_dilated(np.ones((1, 2, 4)), np.ones((3, 2, 2)), (1,), [(-5, 0)])
    with pytest.raises(ValueError, match=r"conv_general_dilated.*\(1, 2\)"):
        lax.conv_general_dilated(np.ones((1, 2, 4)), np.ones((3, 2, 2)), (1, 2), "VALID")
    # JAX fails late here, with an MLIR verifier error; refjax names the kernel's shape.
    with pytest.raises(ValueError, match=r"conv_general_dilated.*\(3, 2, 0\)"):
        lax.conv_general_dilated(np.ones((1, 2, 4)), np.ones((3, 2, 0)), (1,), "VALID")
    with pytest.raises(ValueError, match="verifier"):
        jax.lax.conv_general_dilated(np.ones((1, 2, 4)), np.ones((3, 2, 0)), (1,), "VALID")


# ---------------------------------------------------------------- a small CNN

def _cnn(jx, lax_):
    """Two convolutions (the second one's input differentiated too), relu, max pooling and
    average pooling written as stax and flax write them (lax.reduce_window with -inf and
    lax.max, 0 and lax.add), a dense layer and softmax cross-entropy, in lax operations whose
    derivatives both libraries stage alike."""
    jnp_ = jx.numpy

    def conv(x, w, b):
        y = lax_.conv_general_dilated(x, w, (1, 1), "SAME",
                                      dimension_numbers=("NHWC", "HWIO", "NHWC"))
        return lax_.add(y, lax_.broadcast_in_dim(b, y.shape, (3,)))

    def relu(y):
        return lax_.select(lax_.gt(y, 0.0), y, lax_.full(y.shape, 0.0, y.dtype))

    def max_pool(x):
        return lax_.reduce_window(x, -jnp_.inf, lax_.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")

    def avg_pool(x):
        return lax_.reduce_window(x, 0.0, lax_.add, (1, 2, 2, 1), (1, 1, 1, 1), "SAME") / 4.0

    def loss(p, x, labels):
        y = max_pool(relu(conv(x, p["w1"], p["b1"])))
        y = avg_pool(relu(conv(y, p["w2"], p["b2"])))
        y = lax_.dot_general(y.reshape(y.shape[0], -1), p["w3"], (((1,), (0,)), ((), ())))
        logits = lax_.add(y, lax_.broadcast_in_dim(p["b3"], y.shape, (1,)))
        shift = lax_.reduce_max(lax_.stop_gradient(logits), (1,))
        shifted = lax_.sub(logits, lax_.broadcast_in_dim(shift, logits.shape, (0,)))
        lse = lax_.log(lax_.reduce_sum(lax_.exp(shifted), (1,)))
        logp = lax_.sub(shifted, lax_.broadcast_in_dim(lse, logits.shape, (0,)))
        return lax_.neg(lax_.reduce_sum(lax_.mul(logp, labels), (0, 1))) / logits.shape[0]
    return loss


def _cnn_inputs():
    rng = np.random.RandomState(0)
    params = {"w1": rng.randn(3, 3, 1, 4), "b1": rng.randn(4), "w2": rng.randn(3, 3, 4, 4) / 3,
              "b2": rng.randn(4), "w3": rng.randn(64, 3) / 8, "b3": rng.randn(3)}
    params = {k: v.astype(np.float32) for k, v in params.items()}
    x = rng.randn(2, 8, 8, 1).astype(np.float32)
    return params, x, np.eye(3, dtype=np.float32)[[0, 2]]


def _primitive_names(jaxpr):
    """Primitive names equation by equation, the names of sub-jaxprs nested in lists."""
    names = []
    for eqn in jaxpr.eqns:
        names.append(eqn.primitive.name)
        for value in eqn.params.values():
            for sub in value if isinstance(value, (tuple, list)) else (value,):
                inner = getattr(sub, "jaxpr", sub)
                if hasattr(inner, "eqns"):
                    names.append(_primitive_names(inner))
    return names


def test_cnn_gradient_stages_the_primitives_jax_stages():
    params, x, labels = _cnn_inputs()
    ours = refjax.make_jaxpr(refjax.grad(_cnn(refjax, lax)))(params, x, labels)
    theirs = jax.make_jaxpr(jax.grad(_cnn(jax, jax.lax)))(params, x, labels)
    names = _primitive_names(ours.jaxpr)
    assert names == _primitive_names(theirs.jaxpr)
    for needed in ("conv_general_dilated", "rev", "reduce_window_max", "select_and_scatter_add",
                   "reduce_window_sum", "pad"):
        assert needed in names, needed
    assert names.count("conv_general_dilated") == 5   # 2 forward, 2 kernel, 1 input transpose


@both_backends
def test_cnn_gradients_agree_with_jax():
    params, x, labels = _cnn_inputs()
    ours = refjax.jit(refjax.value_and_grad(_cnn(refjax, lax)))(params, x, labels)
    theirs = jax.jit(jax.value_and_grad(_cnn(jax, jax.lax)))(params, x, labels)
    _close(ours[0], theirs[0], (1e-5, 1e-6), "loss")
    for k in params:
        _close(ours[1][k], theirs[1][k], (2e-4, 2e-5), f"gradient of {k}")
    if refjax.current_backend_name() == "numpy_ref":  # eagerly (xla's eager rules are its jit's)
        eager = refjax.grad(_cnn(refjax, lax))(params, x, labels)
        for k in params:
            _close(eager[k], theirs[1][k], (2e-4, 2e-5), f"eager gradient of {k}")


def test_cnn_with_jax_nn_layers_runs_unchanged():
    """jax.nn.relu and log_softmax (staged differently by refjax: no inner jit) still give
    JAX's gradients."""
    params, x, labels = _cnn_inputs()

    def loss(jx):
        def f(p, x_, y_):
            conv = jx.lax.conv_general_dilated(x_, p["w1"], (1, 1), "SAME",
                                               dimension_numbers=("NHWC", "HWIO", "NHWC"))
            h = jx.nn.relu(conv + p["b1"])
            h = jx.lax.reduce_window(h, -jx.numpy.inf, jx.lax.max, (1, 2, 2, 1), (1, 2, 2, 1),
                                     "VALID")
            logits = h.reshape(h.shape[0], -1)[:, :3]
            return -jx.numpy.mean(jx.numpy.sum(jx.nn.log_softmax(logits) * y_, axis=-1))
        return f
    ours, theirs = refjax.grad(loss(refjax))(params, x, labels), \
        jax.grad(loss(jax))(params, x, labels)
    for k in ("w1", "b1"):
        _close(ours[k], theirs[k], (1e-4, 1e-5), k)


# ---------------------------------------------------------------- layouts

def _layout(a):
    return {s.device.id: tuple(sl.indices(n)[:2] for sl, n in zip(s.index, a.shape))
            for s in a.addressable_shards}


def test_batch_sharded_convolution_and_pooling_keep_the_batch_layout():
    """The output batch keeps the input batch's mesh axis (the kernel's out-feature axis
    stays on the output features), the same shard by shard on both backends, eager and
    under jit, for the convolution, max pooling and its gradient."""
    from refjax.sharding import NamedSharding, PartitionSpec as P
    x, w = _randn(0, (4, 6, 6, 2)), _randn(1, (3, 3, 2, 4))

    def f(a, k):
        y = lax.conv_general_dilated(a, k, (1, 1), "SAME",
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"))
        pooled = lax.reduce_window(y, -np.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        grad = refjax.grad(lambda v: lax.reduce_window(v, -np.inf, lax.max, (1, 2, 2, 1),
                                                       (1, 2, 2, 1), "VALID").sum())(y)
        return y, pooled, grad
    results = {}
    for backend in ("numpy_ref", "xla"):
        with refjax.backend(backend):
            mesh = refjax.make_mesh((2, 4), ("b", "o"))
            a = refjax.device_put(x, NamedSharding(mesh, P("b")))
            k = refjax.device_put(w, NamedSharding(mesh, P(None, None, None, "o")))
            for how, g in (("eager", f), ("jit", refjax.jit(f))):
                outs = g(a, k)
                results[backend, how] = [(_layout(o), np.asarray(o)) for o in outs]
                assert outs[0].sharding.spec == P("b", None, None, "o"), outs[0].sharding
                assert outs[1].sharding.spec == P("b", None, None, "o"), outs[1].sharding
                assert outs[2].sharding.spec == P("b", None, None, "o"), outs[2].sharding
    reference = results["numpy_ref", "eager"]
    for key, outs in results.items():
        for (lay, val), (lay0, val0) in zip(outs, reference):
            assert lay == lay0, key
            np.testing.assert_allclose(val, val0, rtol=1e-5, atol=1e-5, err_msg=str(key))
