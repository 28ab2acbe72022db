"""jax.image against real JAX 0.10.2: resize with every method (up, down, mixed, antialias on
and off, integer and half-precision images), scale_and_translate, gradients, jit, and JAX's
errors; on both backends."""
import functools

import jax as real_jax
import numpy as np
import pytest
from jax_recordings import on_jax

import refjax
from jax_compare import assert_same_error

pytestmark = pytest.mark.backends("numpy_ref", "xla")
METHODS = ("nearest", "linear", "lanczos3", "lanczos5", "cubic", "cubic-pytorch", "area")
SHAPES = ((9, 4, 3), (3, 11, 3))  # each both up- and downsamples
_IMG = np.random.RandomState(0).rand(5, 7, 3).astype(np.float32)


@functools.lru_cache(maxsize=None)
def _jax_resize(shape, method, antialias):
    """Real JAX's result, computed once for both backends' runs (JAX compiles each case)."""
    return real_jax.device_get(real_jax.image.resize(_IMG, shape, method, antialias=antialias))


def _close(actual, expected, rtol=2e-6, atol=2e-6):
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    np.testing.assert_allclose(np.asarray(actual, np.float64), np.asarray(expected, np.float64),
                               rtol=rtol, atol=atol)


@pytest.mark.parametrize("antialias", [True, False])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("method", METHODS)
def test_resize_as_jax(method, shape, antialias):
    _close(refjax.image.resize(_IMG, shape, method, antialias=antialias),
           _jax_resize(shape, method, antialias))


@pytest.mark.parametrize("dtype, tol", [(np.int32, 2e-6), (np.uint8, 2e-6), (np.float16, 2e-3),
                                        ("bfloat16", 2e-2)])
@pytest.mark.parametrize("method", ["nearest", "linear", "cubic"])
def test_resize_dtypes_as_jax(method, dtype, tol):
    img = (_IMG[..., 0] * 100).astype(real_jax.numpy.dtype(dtype))
    _close(refjax.image.resize(img, (8, 3), method), _jax_resize_of(method, dtype),
           rtol=tol, atol=tol * 100)


@functools.lru_cache(maxsize=None)
def _jax_resize_of(method, dtype):
    img = (_IMG[..., 0] * 100).astype(real_jax.numpy.dtype(dtype))
    return real_jax.device_get(real_jax.image.resize(img, (8, 3), method))


@pytest.mark.parametrize("antialias", [True, False])
@pytest.mark.parametrize("method", [m for m in METHODS if m != "nearest"] +
                         [refjax.image.ResizeMethod.CUBIC_PYTORCH])
def test_scale_and_translate_as_jax(method, antialias):
    """Under jit (one compilation per case: JAX compiles every eager op, slowly under load);
    the eager path is the next test."""
    _close(_scale_and_translate(refjax, method, antialias),
           _jax_scale_and_translate(method, antialias))


@pytest.mark.backends()  # eager on the default backend (xla compiles each eager op)
def test_scale_and_translate_eager_as_jax():
    _close(_scale_and_translate(refjax, "lanczos3", True, jit=False),
           _jax_scale_and_translate("lanczos3", True))


@functools.lru_cache(maxsize=None)
def _jax_scale_and_translate(method, antialias):
    return real_jax.device_get(_scale_and_translate(real_jax, method, antialias))


def _scale_and_translate(jax, method, antialias, jit=True):
    m = method if isinstance(method, str) else jax.image.ResizeMethod[method.name]

    def run(scale, translation):
        return jax.image.scale_and_translate(_IMG, (8, 6, 3), (0, 1), scale, translation, m,
                                             antialias=antialias)
    return (jax.jit(run) if jit else run)(jax.numpy.array([1.5, 0.8]),
                                          jax.numpy.array([0.3, -0.5]))


@pytest.mark.parametrize("method", ["linear", "cubic", "lanczos3", "area"])
def test_gradient_and_jit_as_jax(method):
    for ours, theirs in zip(_gradient_and_jit(refjax, method), _jax_gradient_and_jit(method)):
        _close(ours, theirs, rtol=1e-5, atol=1e-5)


@functools.lru_cache(maxsize=None)
def _jax_gradient_and_jit(method):
    return real_jax.device_get(_gradient_and_jit(real_jax, method))


def _gradient_and_jit(jax, method):
    loss = lambda x: (jax.image.resize(x, (4, 6), method) ** 2).sum()  # noqa: E731
    x = jax.numpy.asarray(_IMG[:3, :5, 0])
    return jax.jit(jax.grad(loss))(x), jax.jit(lambda x: jax.image.resize(x, (2, 9), method))(x)


@pytest.mark.parametrize("call", [
    lambda jax: jax.image.resize(_IMG, (2, 2), "linear"),
    lambda jax: jax.image.resize(_IMG, (2, 2, 3), "foo"),
    lambda jax: jax.image.scale_and_translate(_IMG, (8, 6, 3), (0, 1), jax.numpy.ones(2),
                                              jax.numpy.zeros(2), "nearest"),
])
def test_errors_as_jax(call):
    assert_same_error(call, refjax, real_jax, ValueError)


def test_resize_method_enum_as_jax():
    assert [m.name for m in refjax.image.ResizeMethod] == \
        [m.name for m in real_jax.image.ResizeMethod]
    for name in ("bilinear", "trilinear", "triangle", "bicubic", "tricubic", "bicubic-pytorch"):
        assert refjax.image.ResizeMethod.from_string(name).name == \
            real_jax.image.ResizeMethod.from_string(name).name


def test_resize_is_staged_as_jax():
    def text(jax):
        return str(jax.make_jaxpr(lambda x: jax.image.resize(x, (3, 4), "nearest"))(_IMG[:2, :2, 0]))
    assert text(refjax) == on_jax(text)


def test_linear_upsampling_by_hand():
    """A hand-computed case: [0, 1] doubled with half-centred pixels is [0, .25, .75, 1]."""
    out = refjax.image.resize(np.array([0.0, 1.0], np.float32), (4,), "linear")
    np.testing.assert_allclose(out, [0.0, 0.25, 0.75, 1.0], atol=1e-7)
