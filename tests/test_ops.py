"""jax.ops segment reductions against real JAX: values, dtypes, empty and dropped segments,
jit, vmap, gradients and errors."""
import jax as real_jax
import numpy as np
import pytest

import refjax as jax
import refjax.numpy as jnp
from refjax import errors

pytestmark = pytest.mark.backends("numpy_ref", "xla")

OPS = ("segment_sum", "segment_prod", "segment_max", "segment_min")
IDS = np.array([0, 0, 3, 2, 3, -1, 9, 0], np.int32)   # empty segment 1, dropped -1 and 9


def _data(dtype, shape=(8,)):
    rng = np.random.default_rng(0)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    return (rng.normal(size=shape) * 3).astype(dtype)


def _same(got, want):
    assert np.asarray(got).dtype == np.asarray(want).dtype
    assert got.shape == want.shape
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)


@pytest.mark.parametrize("name", OPS)
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_], ids=["f32", "i32", "bool"])
def test_segment_ops_match_jax(name, dtype):
    data = _data(dtype)
    ours, theirs = getattr(jax.ops, name), getattr(real_jax.ops, name)
    if dtype == np.bool_ and name in ("segment_sum", "segment_prod"):  # both reject bools
        with pytest.raises(TypeError, match="does not accept dtype bool"):
            theirs(data, IDS, num_segments=5)
        with pytest.raises(TypeError, match="does not accept dtype bool"):
            ours(data, IDS, num_segments=5)
        return
    _same(ours(data, IDS, num_segments=5), theirs(data, IDS, num_segments=5))
    _same(ours(data, IDS), theirs(data, IDS))  # num_segments = max(id) + 1
    _same(jax.jit(lambda d, i: ours(d, i, 5))(data, IDS), theirs(data, IDS, 5))


@pytest.mark.parametrize("name", OPS)
def test_segment_ops_on_rows_under_vmap_and_modes(name):
    data = _data(np.float32, (8, 3))
    ours, theirs = getattr(jax.ops, name), getattr(real_jax.ops, name)
    _same(ours(data, IDS, 4), theirs(data, IDS, 4))
    _same(ours(data, np.sort(IDS), 4, indices_are_sorted=True, bucket_size=3),
          theirs(data, np.sort(IDS), 4, indices_are_sorted=True, bucket_size=3))
    _same(ours(data, IDS, 4, mode="clip"), theirs(data, IDS, 4, mode="clip"))
    batched = np.stack([data, data[::-1]])
    _same(jax.vmap(lambda d: ours(d, IDS, 4))(batched),
          real_jax.vmap(lambda d: theirs(d, IDS, 4))(batched))


@pytest.mark.parametrize("name", ("segment_sum", "segment_max", "segment_min"))
def test_segment_op_gradients_match_jax(name):
    data = np.array([1.0, 2.0, 2.0, -1.0, 0.5, 3.0, 4.0, 2.0], np.float32)  # ties in seg 0
    loss = lambda mod, f: lambda d: (f(d, IDS, 5) * np.arange(1.0, 6.0)).sum()  # noqa: E731
    got = jax.grad(loss(jax, getattr(jax.ops, name)))(data)
    want = real_jax.grad(loss(real_jax, getattr(real_jax.ops, name)))(data)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)


def test_segment_sum_errors_match_jax():
    with pytest.raises(errors.ConcretizationTypeError, match="num_segments"):
        jax.jit(lambda d, i: jax.ops.segment_sum(d, i))(jnp.ones(3), jnp.asarray([0, 1, 1]))
    with pytest.raises(TypeError, match="integer"):
        jax.ops.segment_sum(jnp.ones(3), np.array([0.0, 1.0, 1.0]), 2)
    with pytest.raises(ValueError, match="one id per row"):
        jax.ops.segment_sum(jnp.ones((3, 2)), np.array([0, 1]), 2)


def test_segment_prod_gradient_with_repeated_ids():
    """JAX raises NotImplementedError here (scatter_mul's gradient needs unique indices);
    refjax differentiates it: checked against the product rule, computed by hand."""
    data = np.array([1.5, 2.0, -0.5, 3.0, 0.25], np.float32)
    ids = np.array([0, 0, 1, 0, 1], np.int32)
    with pytest.raises(NotImplementedError):
        real_jax.grad(lambda d: real_jax.ops.segment_prod(d, ids, 2).sum())(data)
    got = np.asarray(jax.grad(lambda d: jax.ops.segment_prod(d, ids, 2).sum())(data))
    want = [np.prod([data[j] for j in range(5) if ids[j] == ids[i] and j != i])
            for i in range(5)]
    np.testing.assert_allclose(got, want, rtol=1e-6)
