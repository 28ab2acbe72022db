"""insert, place, put, put_along_axis, choose, block, partition/argpartition,
apply_along_axis/apply_over_axes, gradient, unwrap, packbits/unpackbits against jax.numpy
(gradient's second-order edges against NumPy, as JAX refuses them)."""
import numpy as np
import pytest

import refjax.numpy as rnp
from jnp_compare import check, check_error, check_grad, check_vmap

pytestmark = pytest.mark.backends("numpy_ref", "xla")

A = np.arange(12, dtype=np.float32).reshape(3, 4)
SQ = (np.arange(20).reshape(4, 5) ** 2).astype(np.float32)
X = np.array([0, 1, 3, 4, 7.0], np.float32)


@pytest.mark.parametrize("call", [
    lambda m, x: m.insert(x, 1, 9.0),
    lambda m, x: m.insert(x, 1, np.array([7, 8, 9]), axis=1),
    lambda m, x: m.insert(x, np.array([0, 2, 2]), np.array([7, 8, 9]), axis=1),
    lambda m, x: m.insert(x, slice(0, 3), -1, axis=0),
    lambda m, x: m.insert(x, -1, np.array([[1], [2], [3]]), axis=1),
    lambda m, x: m.insert(x, np.array([5, -1]), 3),
    lambda m, x: m.place(x, x > 4, np.array([1.0, 2]), inplace=False),
    lambda m, x: m.put(x, np.array([0, 5, 40]), np.array([-1.0, -2]), inplace=False),
    lambda m, x: m.put(x, np.array([0, 5, 40]), 7.0, mode="clip", inplace=False),
    lambda m, x: m.put(x, np.array([0, -5, 40]), 7.0, mode="wrap", inplace=False),
    lambda m, x: m.put_along_axis(x, np.array([[0], [1], [2]]), 99.0, axis=1, inplace=False),
    lambda m, x: m.put_along_axis(x, np.array([[0, 1, 2, 0]]), 99.0, axis=0, inplace=False),
    lambda m, x: m.choose(np.array([0, 1, 2, 1]), [x[0], x[1], x[2]], mode="clip"),
    lambda m, x: m.choose(np.array([0, 4, -2, 1]), [x[0], x[1], x[2]], mode="wrap"),
    lambda m, x: m.partition(x, 1),
    lambda m, x: m.partition(x, 2, axis=0),
    lambda m, x: m.partition(x.astype(np.uint8), 2),
    lambda m, x: m.argpartition(x, 1),
    lambda m, x: m.argpartition(x, -1, axis=0),
    lambda m, x: m.apply_along_axis(m.cumsum, 0, x),
    lambda m, x: m.apply_along_axis(lambda v: v.sum(), 1, x),
    lambda m, x: m.apply_over_axes(m.sum, x, [0, 1]),
    lambda m, x: m.block([[x, x], [x, x]]),
    lambda m, x: m.block([x[0], 1.0]),
])
def test_editing(call):
    check(call, A)


def test_concrete_choose_and_gradients():
    check(lambda m, x: m.choose(np.array([0, 1, 2, 1]), [x[0], x[1], x[2]]), A, jit=False)
    check_grad(lambda m, x: m.insert(x, 1, x[0, :1] * 2, axis=1).sum(), A)
    check_grad(lambda m, x: (m.partition(x, 1) ** 2).sum(), A)
    check_vmap(lambda m, x: m.insert(x, 2, 0.0), A)


def test_complex_partition_sorts():
    """JAX refuses complex partitions (NotImplementedError); a full sort is one."""
    z = (A + 1j * A[::-1]).astype(np.complex64)
    np.testing.assert_array_equal(np.asarray(rnp.partition(z, 1)), np.sort(z, axis=-1))
    np.testing.assert_array_equal(np.asarray(rnp.argpartition(z, 1)), np.argsort(z, axis=-1))


@pytest.mark.parametrize("call", [
    lambda m, v: m.gradient(v),
    lambda m, v: m.gradient(v, axis=1),
    lambda m, v: m.gradient(v, 2.0),
    lambda m, v: m.gradient(v, 2.0, 0.5),
    lambda m, v: m.gradient(v, X, axis=1),
    lambda m, v: m.gradient(v.astype(np.int32)),
    lambda m, v: m.unwrap(v),
    lambda m, v: m.unwrap(v, axis=0, period=5.0),
    lambda m, v: m.unwrap(v, discont=4),
    lambda m, v: m.packbits(v > 50),
    lambda m, v: m.packbits(v.astype(np.int32), axis=1, bitorder="little"),
    lambda m, v: m.unpackbits(v.astype(np.uint8)),
    lambda m, v: m.unpackbits(v.astype(np.uint8), axis=0, count=30, bitorder="little"),
    lambda m, v: m.unpackbits(v.astype(np.uint8), axis=1, count=3),
])
def test_differences_and_bits(call):
    check(call, SQ, tol=1e-4)


@pytest.mark.parametrize("edge_order", [1, 2])
def test_gradient_edge_orders_as_numpy(edge_order):
    """edge_order=2 (JAX: NotImplementedError) against numpy.gradient, uniform and not."""
    for args in [(), (2.0,), (np.array([0, 1, 3, 4.0]), X)]:
        np.testing.assert_allclose(np.asarray(rnp.gradient(SQ, *args, edge_order=edge_order)),
                                   np.gradient(SQ, *args, edge_order=edge_order), rtol=1e-4)


def test_gradient_of_gradient():
    check_grad(lambda m, v: (m.gradient(v)[1] ** 2).sum(), SQ)


@pytest.mark.parametrize("call", [
    lambda m: m.insert(np.ones(3), np.ones((2, 2), int), 1),
    lambda m: m.insert(np.ones(3), np.array([1.5]), 1),
    lambda m: m.place(np.ones(3), np.ones(3, bool), 1.0),
    lambda m: m.put(np.ones(3), 1, 1.0),
    lambda m: m.put(np.ones(3), 1, 1.0, mode="bad", inplace=False),
    lambda m: m.put_along_axis(np.ones(3), np.array([0]), 1.0, 0),
    lambda m: m.choose(np.array([0, 3]), [np.ones(2), np.ones(2)]),
    lambda m: m.choose(np.array([0.0]), [np.ones(2)]),
    lambda m: m.block([]),
    lambda m: m.block([[np.ones(2)], np.ones(2)]),
    lambda m: m.block((np.ones(2),)),
    lambda m: m.partition(np.ones(3), 5),
    lambda m: m.apply_over_axes(lambda a, ax: a.sum(), np.ones((2, 2)), [0]),
    lambda m: m.gradient(np.ones(1)),
    lambda m: m.gradient(np.ones(3), np.ones(2)),
    lambda m: m.gradient(np.ones((3, 3)), 1.0, 1.0, 1.0),
    lambda m: m.unwrap(np.ones(3, np.complex64)),
    lambda m: m.packbits(np.ones(3, np.float32)),
    lambda m: m.packbits(np.ones(3, np.int32), bitorder="middle"),
    lambda m: m.unpackbits(np.ones(3, np.int32)),
])
def test_errors(call):
    check_error(call)


@pytest.mark.parametrize("kwargs", [
    {"mode": "mean", "stat_length": 2},
    {"mode": "maximum", "stat_length": ((1, 2), (3, 1))},
    {"mode": "median", "stat_length": 1},
    {"mode": "linear_ramp"},
    {"mode": "linear_ramp", "end_values": 5},
    {"mode": "linear_ramp", "end_values": ((1, 2), (3, 4))},
    {"mode": "reflect", "reflect_type": "odd"},
    {"mode": "symmetric", "reflect_type": "odd"},
])
def test_pad_stat_length_and_linear_ramp(kwargs):
    for x in (A, A.astype(np.int32)):
        check(lambda m, v: m.pad(v, ((2, 3), (1, 2)), **kwargs), x)


def test_pad_odd_reflection_longer_than_the_axis_and_its_gradient():
    for mode in ("reflect", "symmetric"):
        check(lambda m, v: m.pad(v, (7, 9), mode, reflect_type="odd"), X)
        check(lambda m, v: m.pad(v, 3, mode, reflect_type="odd"), X[:1])
        check_grad(lambda m, v: (m.pad(v, (6, 4), mode, reflect_type="odd") ** 2).sum(), X)


def _pad_with(vector, width, iaxis, kwargs):
    fill = kwargs.get("fill", 10) * (iaxis + 1)
    return vector.at[:width[0]].set(fill).at[vector.shape[0] - width[1]:].set(-fill)


@pytest.mark.parametrize("kwargs", [{}, {"fill": 3}])
def test_pad_with_a_callable_mode(kwargs):
    """NumPy's protocol: the function gets each 1-d slice of the zero-padded array, the
    axis' (before, after) widths, the axis and the keyword arguments."""
    check(lambda m, v: m.pad(v, ((2, 1), (0, 3)), _pad_with, **kwargs), A, jit=False)
    check(lambda m, v: m.pad(v, 2, _pad_with, **kwargs), X)


def test_pad_unknown_reflect_type_is_a_value_error():
    """JAX fails with a bare AssertionError; refjax names the option."""
    import jax.numpy as jnp
    with pytest.raises(AssertionError):
        jnp.pad(X, 2, "reflect", reflect_type="bad")
    with pytest.raises(ValueError, match="reflect_type must be 'even' or 'odd', got 'bad'"):
        rnp.pad(X, 2, "reflect", reflect_type="bad")
