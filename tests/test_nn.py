"""refjax.nn against jax.nn: activations, the softmax/logsumexp family, one_hot, standardize,
dot_product_attention and the initializers, on both backends (values, dtypes, weak types,
errors; gradients against JAX's)."""
import numpy as np
import pytest

import jax
import jax.numpy as jjnp

import refjax
import refjax.nn.initializers as rinit

pytestmark = pytest.mark.backends("numpy_ref", "xla")

X = np.array([-7.0, -3.0, -1.5, -1.0, -0.25, 0.0, 0.5, 1.0, 2.5, 3.0, 6.0, 8.0], np.float32)
ACTIVATIONS = ["celu", "selu", "mish", "hard_tanh", "hard_sigmoid", "hard_silu", "hard_swish",
               "squareplus", "soft_sign", "sparse_plus", "sparse_sigmoid", "identity", "relu6",
               "relu", "elu", "gelu", "silu", "sigmoid", "softplus", "log_sigmoid", "leaky_relu"]


def agree(actual, expected, rtol=2e-6, atol=1e-6):
    """Same shape, dtype and weak type as JAX's result, values within rtol/atol."""
    assert np.shape(actual) == np.shape(expected)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert getattr(actual, "weak_type", False) == getattr(expected, "weak_type", False)
    if expected.dtype == np.float16:   # an ulp: XLA computes e.g. x / 6 as x * (1/6)
        rtol, atol = max(rtol, 1e-3), max(atol, 1e-3)
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected), rtol=rtol, atol=atol)


@pytest.mark.parametrize("name", ACTIVATIONS)
def test_activation_values_and_grads(name):
    r, j = getattr(refjax.nn, name), getattr(jax.nn, name)
    agree(r(X), j(X))
    agree(refjax.jit(r)(X), j(X))
    rg = refjax.vmap(refjax.grad(lambda x: r(x)))(X)
    # 4 ulps: a derivative like mish's 1 - tanh(.)**2 near 1 magnifies XLA's tanh error (at
    # x=8 JAX gives 1.0, numpy_ref 1.0000036; the true value is 1.0000034).
    agree(rg, jax.vmap(jax.grad(lambda x: j(x)))(X), rtol=5e-7, atol=4.8e-7 * 8)


@pytest.mark.parametrize("name", ["celu", "selu", "hard_tanh", "relu6", "squareplus", "soft_sign",
                                  "sparse_plus", "sparse_sigmoid", "identity", "hard_sigmoid",
                                  "hard_silu", "mish", "log1mexp"])
def test_activation_scalar_dtypes(name):
    for arg in (1.5, 2, np.int32(3), np.float16(0.5)):
        agree(getattr(refjax.nn, name)(arg), getattr(jax.nn, name)(arg))


def test_gelu_exact_and_log1mexp():
    x = np.abs(X) + 0.1
    agree(refjax.nn.gelu(X, approximate=False), jax.nn.gelu(X, approximate=False))
    agree(refjax.nn.log1mexp(x), jax.nn.log1mexp(x))
    agree(refjax.grad(lambda v: refjax.nn.log1mexp(v).sum())(x),
          jax.grad(lambda v: jax.nn.log1mexp(v).sum())(x))


def test_glu():
    x = X.reshape(3, 4)
    for axis in (-1, 1):
        agree(refjax.nn.glu(x, axis), jax.nn.glu(x, axis))
    with pytest.raises(ValueError, match="glu"):
        refjax.nn.glu(X.reshape(4, 3))   # JAX: a bare AssertionError


A = np.array([[0.5, -1.0, 3.0, np.inf], [2.0, -np.inf, 0.0, 1.0]], np.float32)
FINITE = np.nan_to_num(A, posinf=4.0, neginf=-4.0)
W = np.array([[True, False, True, False], [True, True, False, True]])
B = np.array([[1.0, 2.0, -0.5, 0.0], [0.5, 0.0, 3.0, -1.0]], np.float32)


@pytest.mark.parametrize("kw", [{}, {"axis": 1}, {"axis": 0, "keepdims": True}, {"b": B},
                                {"b": B, "axis": 1, "return_sign": True}, {"where": W, "axis": 1},
                                {"axis": (0, 1), "keepdims": True, "b": np.abs(B)}])
def test_logsumexp(kw):
    for a in (A, FINITE):
        r, j = refjax.nn.logsumexp(a, **kw), jax.nn.logsumexp(a, **kw)
        for rv, jv in zip(r if kw.get("return_sign") else [r], j if kw.get("return_sign") else [j]):
            agree(rv, jv)


def test_logsumexp_grad_and_ints():
    agree(refjax.grad(lambda a: refjax.nn.logsumexp(a, b=B))(FINITE),
          jax.grad(lambda a: jax.nn.logsumexp(a, b=B))(FINITE))
    agree(refjax.nn.logsumexp(np.arange(5)), jax.nn.logsumexp(np.arange(5)))
    agree(refjax.nn.logmeanexp(FINITE, axis=1, where=W), jax.nn.logmeanexp(FINITE, axis=1, where=W))
    agree(refjax.nn.logmeanexp(FINITE), jax.nn.logmeanexp(FINITE))


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_where(name):
    r, j = getattr(refjax.nn, name), getattr(jax.nn, name)
    agree(r(FINITE, axis=1, where=W), j(FINITE, axis=1, where=W))
    agree(r(FINITE, axis=0), j(FINITE, axis=0))
    agree(refjax.grad(lambda a: r(a, where=W)[:, 0].sum())(FINITE),
          jax.grad(lambda a: j(a, where=W)[:, 0].sum())(FINITE))


@pytest.mark.parametrize("kw", [{}, {"axis": 0}, {"axis": 1, "dtype": jjnp.int8}, {"axis": -2}])
def test_one_hot(kw):
    x = np.array([[0, 2, 5], [1, -1, 3]])
    agree(refjax.nn.one_hot(x, 4, **kw), jax.nn.one_hot(x, 4, **kw))


def test_one_hot_dtype_is_keyword_only():
    with pytest.raises(TypeError):
        refjax.nn.one_hot(np.arange(3), 3, np.float32)
    with pytest.raises(TypeError):
        jax.nn.one_hot(np.arange(3), 3, np.float32)


@pytest.mark.parametrize("kw", [{}, {"axis": 0}, {"where": W}, {"algorithm": "stable"},
                                {"mean": 1.0, "variance": 2.0, "epsilon": 0.1}])
def test_standardize(kw):
    agree(refjax.nn.standardize(FINITE, **kw), jax.nn.standardize(FINITE, **kw), rtol=1e-5)


def test_standardize_bad_algorithm():
    with pytest.raises(ValueError, match="Unknown algorithm 'slow'"):
        refjax.nn.standardize(FINITE, algorithm="slow")


# ---------------------------------------------------------------- dot_product_attention

def _qkv(b=2, t=5, s=6, n=4, k=2, h=8, dtype=np.float32):
    rng = np.random.default_rng(0)
    return [rng.standard_normal(shape).astype(dtype)
            for shape in ((b, t, n, h), (b, s, k, h), (b, s, k, h))]


ATTENTION = [{}, {"is_causal": True}, {"scale": 0.3}, {"local_window_size": 1},
             {"local_window_size": (2, 0), "is_causal": True},
             {"query_seq_lengths": np.array([3, 5], np.int32)},
             {"key_value_seq_lengths": np.array([2, 6], np.int32)},
             {"return_residual": True}]


@pytest.mark.parametrize("kw", ATTENTION)
def test_dot_product_attention(kw):
    q, k, v = _qkv()
    r = refjax.nn.dot_product_attention(q, k, v, **kw)
    j = jax.nn.dot_product_attention(q, k, v, **kw)
    for rv, jv in zip(*((r, j) if kw.get("return_residual") else ([r], [j]))):
        agree(rv, jv, rtol=1e-5, atol=1e-5)


def test_dot_product_attention_bias_mask_grad():
    q, k, v = _qkv(n=2, k=2)
    rng = np.random.default_rng(1)
    bias = rng.standard_normal((2, 1, 5, 6)).astype(np.float32)
    mask = rng.random((2, 2, 5, 6)) > 0.3

    def loss(lib):
        return lambda q, k, v: lib.nn.dot_product_attention(q, k, v, bias, mask).sum()
    agree(refjax.nn.dot_product_attention(q, k, v, bias, mask),
          jax.nn.dot_product_attention(q, k, v, bias, mask), rtol=1e-5, atol=1e-5)
    for rg, jg in zip(refjax.grad(loss(refjax), (0, 1, 2))(q, k, v),
                      jax.grad(loss(jax), (0, 1, 2))(q, k, v)):
        agree(rg, jg, rtol=1e-4, atol=1e-5)
    q3, k3, v3 = q[0], k[0], v[0]   # 3-d inputs: a batch of one
    agree(refjax.nn.dot_product_attention(q3, k3, v3), jax.nn.dot_product_attention(q3, k3, v3),
          rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("change, match", [
    (lambda q, k, v: (q, k, v[..., :4]), "value shape"),
    (lambda q, k, v: (q.astype(np.float16), k, v), "query dtype"),
    (lambda q, k, v: (q[:, :, :3], k, v), "multiple of key/value heads"),
])
def test_dot_product_attention_errors(change, match):
    args = change(*_qkv())
    with pytest.raises(ValueError, match=match):
        jax.nn.dot_product_attention(*args)
    with pytest.raises(ValueError, match=match):
        refjax.nn.dot_product_attention(*args)
    with pytest.raises(ValueError, match="Unsupported implementation"):
        refjax.nn.dot_product_attention(*_qkv(), implementation="tpu")


# ---------------------------------------------------------------- initializers

INITS = [("zeros", None), ("ones", None), ("constant", (0.5,)), ("uniform", ()), ("normal", ()),
         ("truncated_normal", (0.2,)), ("glorot_uniform", ()), ("glorot_normal", ()),
         ("xavier_uniform", ()), ("xavier_normal", ()), ("he_uniform", ()), ("he_normal", ()),
         ("kaiming_uniform", ()), ("kaiming_normal", ()), ("lecun_uniform", ()),
         ("lecun_normal", ()), ("variance_scaling", (0.7, "fan_geo_avg", "normal"))]


# every initializer in the default dtype; float16 and complex64 (the variance-scaling family's
# complex branches) for one of each distribution
DTYPES = [(name, args, None) for name, args in INITS] + [
    (name, args, dtype) for name, args in INITS
    if name in ("constant", "uniform", "glorot_normal", "he_uniform", "variance_scaling")
    for dtype in (jjnp.float16, jjnp.complex64)
    if not (dtype == jjnp.complex64 and name == "uniform")]   # JAX's uniform is real-only


@pytest.mark.parametrize("name, args, dtype", DTYPES)
def test_initializers(refjax_backend, name, args, dtype):
    r, j = getattr(rinit, name), getattr(jax.nn.initializers, name)
    if args is not None:
        r, j = r(*args), j(*args)
    got = r(refjax.random.key(3), (3, 2, 5), dtype)
    want = j(jax.random.key(3), (3, 2, 5), dtype)
    # The xla backend gives JAX's bits; complex normal draws (random.normal's, not the
    # initializer's) are an ulp off there.
    if refjax_backend == "xla" and not (dtype == jjnp.complex64 and name == "variance_scaling"):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    agree(got, want)


def test_initializer_errors():
    with pytest.raises(ValueError, match="1-dimensional weights"):
        rinit.glorot_normal()(refjax.random.key(0), (4,))
    with pytest.raises(ValueError, match="invalid mode"):
        rinit.variance_scaling(1.0, "fan", "normal")(refjax.random.key(0), (4, 4))
    with pytest.raises(ValueError, match="invalid distribution"):
        rinit.variance_scaling(1.0, "fan_in", "cauchy")(refjax.random.key(0), (4, 4))
    init = (rinit.he_normal(in_axis=0, out_axis=(1, 2)),
            jax.nn.initializers.he_normal(in_axis=0, out_axis=(1, 2)))
    agree(init[0](refjax.random.key(1), (4, 3, 2)), init[1](jax.random.key(1), (4, 3, 2)))
