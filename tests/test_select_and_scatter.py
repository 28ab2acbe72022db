"""The generic select_and_scatter primitive (lax.select_and_scatter_p, XLA's SelectAndScatter)
against real JAX's primitive and a plain Python loop over windows, on both backends: window
selection with padding skipped, scatter order where windows select one element, printing,
transformations and errors."""
import itertools

import jax
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import refjax
from refjax.core.primitives.windowed import select_and_scatter
from refjax.spec.checks import budget

pytestmark = pytest.mark.backends("numpy_ref", "xla")


def _jax_sas(operand, select, window_dimensions, window_strides, padding, source, init,
             scatter):
    init = np.asarray(init)
    s, c = (jax.make_jaxpr(f)(init, init) for f in (select, scatter))
    return jax.lax.select_and_scatter_p.bind(
        operand, source, init, select_jaxpr=s.jaxpr, select_consts=(), scatter_jaxpr=c.jaxpr,
        scatter_consts=(), window_dimensions=tuple(window_dimensions),
        window_strides=tuple(window_strides), padding=tuple(padding))


def _loop_sas(operand, select, window_dimensions, window_strides, padding, source, init,
              scatter):
    """XLA's semantics, one window at a time: the window's first in-bounds element, replaced
    by each next one where select(selected, next) is false; then out[sel] = scatter(out[sel],
    source value), windows in row-major order."""
    out = np.full(operand.shape, init, operand.dtype)
    for w in itertools.product(*map(range, source.shape)):
        chosen = None
        for k in itertools.product(*map(range, window_dimensions)):
            i = tuple(wi * s + ki - lo for wi, s, ki, (lo, _) in
                      zip(w, window_strides, k, padding))
            if all(0 <= j < n for j, n in zip(i, operand.shape)) and (
                    chosen is None or not select(operand[chosen], operand[i])):
                chosen = i
        if chosen is not None:
            out[chosen] = scatter(out[chosen], source[w])
    return out


def _twice_plus(a, b):
    """A scatter whose result depends on the order of the windows it combines."""
    return a * 2 + b


CASES = [  # operand, select, window, strides, padding, source, init, scatter
    ([1., 2., 3.], "ge", (2,), (1,), ((1, 1),), [1., 1., 1., 1.], 0., "add"),
    ([1., 2., 3.], "le", (2,), (1,), ((1, 1),), [1., 2., 3., 4.], 10., "mul"),
    ([1., 2.], "ge", (2,), (1,), ((2, 1),), [1., 1., 1., 1.], 0., "add"),  # padding-only window
    ([-np.inf, -np.inf], "ge", (2,), (1,), ((1, 0),), [1., 1.], 0., "add"),
    ([3., 1., 2., 5., 4.], "ge", (3,), (1,), ((1, 1),), [1., 2., 3., 4., 5.], 1., "twice"),
    ([[1, 5, 2], [7, 3, 4]], "ge", (1, 2), (1, 1), ((0, 0), (0, 0)), [[1, 2], [3, 4]], 0, "add"),
    ([[1, 5, 2], [7, 3, 4]], "le", (2, 2), (1, 1), ((1, 0), (0, 1)),
     [[1, 2, 3], [4, 5, 6]], 0, "twice"),
]


def _fn(lib, name):
    return _twice_plus if name == "twice" else getattr(lib.lax, name)


def _numpy_fn(name):
    return {"ge": np.greater_equal, "le": np.less_equal, "add": np.add, "mul": np.multiply,
            "twice": _twice_plus}[name]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_matches_jax_and_a_loop_over_windows(case):
    operand, select, window, strides, padding, source, init, scatter = CASES[case]
    dtype = np.int32 if isinstance(init, int) else np.float32
    operand, source, init = (np.asarray(v, dtype) for v in (operand, source, init))
    ours = select_and_scatter(operand, _fn(refjax, select), window, strides, padding, source,
                              init, _fn(refjax, scatter))
    theirs = _jax_sas(operand, _fn(jax, select), window, strides, padding, source, init,
                      _fn(jax, scatter))
    looped = _loop_sas(operand, _numpy_fn(select), window, strides, padding, source, init,
                       _numpy_fn(scatter))
    np.testing.assert_array_equal(np.asarray(theirs), looped)
    np.testing.assert_array_equal(np.asarray(ours), looped)
    assert np.asarray(ours).dtype == dtype


@st.composite
def _problems(draw):
    rank = draw(st.integers(1, 2))
    shape = tuple(draw(st.integers(1, 5)) for _ in range(rank))
    window = tuple(draw(st.integers(1, 3)) for _ in range(rank))
    strides = tuple(draw(st.integers(1, 2)) for _ in range(rank))
    padding = tuple((draw(st.integers(0, 2)), draw(st.integers(0, 2))) for _ in range(rank))
    out = tuple(max((n + lo + hi - w) // s + 1, 0)
                for n, w, s, (lo, hi) in zip(shape, window, strides, padding))
    operand = np.asarray(draw(st.permutations(range(int(np.prod(shape))))), np.int32)
    source = np.asarray(draw(st.lists(st.integers(-4, 4), min_size=int(np.prod(out)),
                                      max_size=int(np.prod(out)))), np.int32)
    return (operand.reshape(shape), draw(st.sampled_from(("ge", "le"))), window, strides,
            padding, source.reshape(out), draw(st.sampled_from(("add", "twice"))))


@budget(1.0)
@given(problem=_problems())
def test_random_windows_match_a_loop(problem):
    """Distinct operand values (XLA breaks ties of padded multi-dimensional windows in
    another order, see select_and_scatter_add) and an order-dependent scatter."""
    operand, select, window, strides, padding, source, scatter = problem
    ours = select_and_scatter(operand, _fn(refjax, select), window, strides, padding, source,
                              np.int32(1), _fn(refjax, scatter))
    looped = _loop_sas(operand, _numpy_fn(select), window, strides, padding, source,
                       np.int32(1), _numpy_fn(scatter))
    np.testing.assert_array_equal(np.asarray(ours), looped)


def _sas_of(lib, select=None):
    def f(x, s):
        return (select_and_scatter if lib is refjax else _jax_sas)(
            x, select or lib.lax.ge, (2,), (1,), ((0, 0),), s, np.float32(0), lib.lax.add)
    return f


_X, _S = np.array([1., 3., 2.], np.float32), np.ones(2, np.float32)


@pytest.mark.backends()
def test_jaxpr_prints_as_jax():
    assert str(refjax.make_jaxpr(_sas_of(refjax))(_X, _S)) == \
        str(jax.make_jaxpr(_sas_of(jax))(_X, _S))


def test_jit_and_vmap():
    """vmap maps through a unit window (JAX has no batching rule: NotImplementedError)."""
    np.testing.assert_array_equal(np.asarray(refjax.jit(_sas_of(refjax))(_X, _S)), [0, 2, 0])
    xs, ss = np.stack([_X, _X[::-1]]), np.stack([_S, 2 * _S])
    batched = refjax.vmap(_sas_of(refjax))(xs, ss)
    np.testing.assert_array_equal(np.asarray(batched), [[0, 2, 0], [0, 4, 0]])
    with pytest.raises(NotImplementedError, match="Batching rule"):
        jax.vmap(_sas_of(jax))(xs, ss)


def test_has_no_derivative_as_jax():
    for lib in (refjax, jax):
        with pytest.raises(NotImplementedError, match="select_and_scatter"):
            lib.grad(lambda x: _sas_of(lib)(x, _S).sum())(_X)


@pytest.mark.backends()
def test_bad_source_is_a_value_error_at_trace_time():
    """JAX's error comes from the MLIR verifier when lowering ('expects source-type to be
    ...'); refjax names the operation and the shapes when tracing."""
    with pytest.raises(ValueError, match="source-type"):
        _sas_of(jax)(_X, np.ones(3, np.float32))
    with pytest.raises(ValueError, match=r"select_and_scatter: source must have one element "
                                         r"per window, shape \(2,\).*f32\[3\]"):
        refjax.make_jaxpr(_sas_of(refjax))(_X, np.ones(3, np.float32))


@pytest.mark.backends()
def test_select_must_return_a_bool():
    with pytest.raises(ValueError, match="select computation must map two float32"):
        _sas_of(refjax, select=refjax.lax.add)(_X, _S)
