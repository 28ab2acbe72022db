"""Differential tests of refjax.numpy against real jax.numpy: values (with tolerances),
dtypes and weak types exactly, eagerly and under refjax.jit; grad and vmap through the
jnp layer; and the exception classes of bad input."""
import re
import warnings

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
from hypothesis import Phase, given, settings, strategies as hst

import refjax
import refjax.numpy as rnp
from jnp_compare import check_error

# The transformation tests (jit, grad, vmap of the jnp layer) run on both backends; the
# eager ones (every function, all dtypes) on numpy_ref only, as XLA compiles every new op.
both_backends = pytest.mark.backends("numpy_ref", "xla")

F32, F16, BF16 = np.dtype(np.float32), np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16)
I32, I8, U8, BOOL, C64 = (np.dtype(t) for t in (np.int32, np.int8, np.uint8, bool,
                                                   np.complex64))
NUMERIC = (F32, F16, I32, I8, U8, C64)
REAL = (F32, F16, I32, I8, U8)
ALL = NUMERIC + (BOOL, BF16)

# JAX compiles every new (function, shape, dtype) it meets, so examples are few (half the
# profile's from tests/conftest.py: 4 with `ci`, 150 with `thorough`) and shapes small; no
# shrinking (a failing example is printed as drawn).
_PHASES = (Phase.explicit, Phase.reuse, Phase.generate)
few = settings(settings.default, max_examples=max(1, settings.default.max_examples // 2),
               phases=_PHASES)
more = settings(settings.default, phases=_PHASES)


# ---------------------------------------------------------------- comparison helpers

def _values(rng, shape, dtype, specials=False):
    """Small quantised values (exact in every float type), optionally with NaN and inf."""
    if dtype == BOOL:
        return np.asarray(rng.rand(*shape) < 0.5)
    if dtype.kind in "iu":
        lo = 0 if dtype.kind == "u" else -5
        return np.asarray(rng.randint(lo, 6, size=shape)).astype(dtype)
    x = rng.randint(-8, 9, size=shape) / 4.0
    if dtype == C64:
        x = x + 1j * (rng.randint(-8, 9, size=shape) / 4.0)
    if specials and x.size and dtype != C64:  # complex inf/NaN arithmetic differs in XLA
        flat = x.reshape(-1)
        for special in (np.nan, np.inf, -np.inf)[:flat.size]:
            flat[rng.randint(flat.size)] = special
    return np.asarray(x).astype(dtype)


class Weak:
    """A weakly typed 0-d argument (a Python scalar inside jitted code)."""

    def __init__(self, value):
        self.value = value


def _to(lib, x):
    """A test argument (NumPy arrays, Weak, containers) as the library's arrays
    (jax.device_put rather than jnp.asarray, which compiles a program per shape)."""
    if isinstance(x, (np.ndarray, Weak)):
        value = x.value if isinstance(x, Weak) else x
        return jax.device_put(value) if lib is jnp else rnp.asarray(value)
    if isinstance(x, list):
        return [_to(lib, v) for v in x]
    if isinstance(x, tuple):
        return tuple(_to(lib, v) for v in x)
    return x


def _tolerance(dtype):
    if dtype in (F16, BF16):
        return 2e-2
    return 2e-5 if dtype.kind in "fc" else 0


def assert_same(ours, theirs, tol=None):
    """Same tree, shapes, dtypes, weak types, and values up to a dtype tolerance."""
    if isinstance(theirs, (list, tuple)):
        assert isinstance(ours, (list, tuple)), f"expected a sequence, got {type(ours)}"
        assert len(ours) == len(theirs)
        for o, t in zip(ours, theirs):
            assert_same(o, t, tol)
        return
    if isinstance(theirs, (bool, int, float)):
        assert ours == theirs
        return
    assert ours.shape == theirs.shape, (ours.shape, theirs.shape)
    assert ours.dtype == theirs.dtype, (ours.dtype, theirs.dtype)
    assert ours.weak_type == theirs.weak_type, ("weak_type", ours.weak_type, theirs.weak_type)
    o = np.asarray(ours).astype(np.complex128 if ours.dtype.kind == "c" else np.float64)
    t = np.asarray(theirs).astype(o.dtype)
    rtol = _tolerance(np.dtype(ours.dtype)) if tol is None else tol
    np.testing.assert_allclose(o, t, rtol=rtol, atol=rtol * 4, equal_nan=True)


def _leaves(tree):
    """The NumPy arrays and Weak scalars of an argument tree: the traced inputs."""
    if isinstance(tree, (np.ndarray, Weak)):
        return [tree]
    if isinstance(tree, (list, tuple)):
        return [leaf for item in tree for leaf in _leaves(item)]
    if isinstance(tree, dict):
        return [leaf for key in sorted(tree) for leaf in _leaves(tree[key])]
    return []


def _rebuild(tree, values):
    """tree with its leaves replaced, in order, from the iterator `values`."""
    if isinstance(tree, (np.ndarray, Weak)):
        return next(values)
    if isinstance(tree, (list, tuple)):
        return type(tree)(_rebuild(item, values) for item in tree)
    if isinstance(tree, dict):
        return {key: _rebuild(tree[key], values) for key in sorted(tree)}
    return tree


class Case:
    """One call, jnp.<name>(*args, **kwargs), or name(namespace, *args, **kwargs)."""

    def __init__(self, name, args, kwargs, tol, eager, jax_kwargs):
        self.name, self.args, self.kwargs, self.tol = name, args, kwargs, tol
        self.eager, self.jax_kwargs = eager, jax_kwargs

    def call(self, lib, args, kwargs):
        if lib is jnp and self.jax_kwargs:
            kwargs = {**kwargs, **self.jax_kwargs}
        if isinstance(self.name, str):
            return getattr(lib, self.name)(*args, **kwargs)
        return self.name(lib, *args, **kwargs)

    def run(self, lib):
        return self.call(lib, _to(lib, self.args), {k: _to(lib, v) for k, v in
                                                   self.kwargs.items()})

    def __repr__(self):
        return f"{getattr(self.name, '__name__', self.name)}{self.args!r:.200} {self.kwargs}"


def _staged(lib, jit, cases):
    """All the cases as one jitted program of their array arguments."""
    trees = [(c.args, c.kwargs) for c in cases]
    leaves = [_to(lib, leaf) for leaf in _leaves(trees)]

    def program(*xs):
        values = iter(xs)
        rebuilt = [_rebuild(tree, values) for tree in trees]
        return [c.call(lib, list(a), k) for c, (a, k) in zip(cases, rebuilt)]
    return jit(program)(*leaves)


def _quick_jit(f):
    """jax.jit without XLA's backend optimisations: the references compile faster."""
    return jax.jit(f, compiler_options={"xla_backend_optimization_level": 0})


class Checks:
    """A batch of comparisons with jax.numpy. The JAX references of the batch are computed by
    one jax.jit (JAX compiles every new program, which dominates the time of these tests);
    refjax runs each case eagerly and under refjax.jit. Cases marked `eager` (functions that
    need concrete arguments) run eagerly only in refjax; in JAX too, unless `jax_kwargs`
    (such as the static `size` of the actual result) make them traceable."""

    def __init__(self):
        self.cases = []

    def __call__(self, name, *args, tol=None, eager=False, jax_kwargs=None, **kwargs):
        self.cases.append(Case(name, args, kwargs, tol, eager, jax_kwargs))

    def run(self):
        staged = [c for c in self.cases if not c.eager or c.jax_kwargs]
        theirs = dict(zip(map(id, staged), _staged(jnp, _quick_jit, staged) if staged else []))
        jitted = self._refjax_jit([c for c in self.cases if not c.eager])
        for case in self.cases:
            expected = theirs[id(case)] if id(case) in theirs else case.run(jnp)
            self._check(case, case.run(rnp), expected, "eager")
            if not case.eager:
                self._check(case, jitted[id(case)], expected, "jit")
        self.cases = []

    @staticmethod
    def _refjax_jit(cases):
        """refjax.jit of all the cases at once (one at a time, to name the culprit, if that
        fails)."""
        try:
            return dict(zip(map(id, cases), _staged(rnp, refjax.jit, cases)))
        except Exception:
            for case in cases:
                try:
                    _staged(rnp, refjax.jit, [case])
                except Exception as err:
                    raise AssertionError(f"{case} (jit) raised {err!r}") from err
            raise

    @staticmethod
    def _check(case, ours, theirs, how):
        try:
            assert_same(ours, theirs, case.tol)
        except AssertionError as err:
            raise AssertionError(f"{case} ({how}): {err}") from None


def compare(name, *args, tol=None, eager=False, **kwargs):
    """A single comparison (see Checks)."""
    checks = Checks()
    checks(name, *args, tol=tol, eager=eager, **kwargs)
    checks.run()


shapes = hst.lists(hst.integers(1, 4), min_size=0, max_size=3).map(tuple)
nonempty = hst.lists(hst.integers(1, 4), min_size=1, max_size=3).map(tuple)
seeds = hst.integers(0, 2 ** 16)


# ---------------------------------------------------------------- scalar types and creation

def test_array_and_asarray():
    c = Checks()
    w = Weak(2.0)
    for args, kwargs in (((3.0,), {}), ((w,), {}), (([1, 2.5],), {}), ((np.float32(2),), {}),
                         ((True,), {}), ((w,), {"ndmin": 3}), (([[1, 2], [3, 4]],), {"dtype": I8}),
                         (([w, w],), {}), (([1, w],), {}), (([],), {}), ((3,), {"dtype": float})):
        c("array", *args, **kwargs)
        c("asarray", *args, **{k: v for k, v in kwargs.items() if k != "ndmin"})
    c("asarray", w, dtype=np.float32)
    c.run()


def test_scalar_types_are_dtypes_and_constructors():
    for name in ("float32", "int32", "int8", "uint8", "bool_", "float16", "bfloat16",
                 "complex64"):
        ours, theirs = getattr(rnp, name), getattr(jnp, name)
        assert np.dtype(ours) == np.dtype(theirs)
        assert ours == np.dtype(theirs).type and hash(ours) == hash(np.dtype(theirs).type)
        assert_same(ours(3), theirs(3))
        assert_same(ours([1, 0]), theirs([1, 0]))
        assert isinstance(np.dtype(theirs).type(1), ours)
    assert rnp.zeros(2, rnp.int8).dtype == np.int8
    assert rnp.issubdtype(rnp.float32, rnp.floating)
    assert rnp.float32(2.5).astype(rnp.int32).dtype == np.int32
    assert_same(rnp.int32(3.7), jnp.int32(3.7))


CREATION = [
    ("zeros", (3,), {}), ("zeros", (2, 3), {"dtype": np.int8}), ("ones", 4, {}),
    ("ones", (2,), {"dtype": bool}), ("empty", (0, 2), {}), ("full", (2, 2), {"fill_value": 3}),
    ("full", (2,), {"fill_value": 2.5}), ("full", (3,), {"fill_value": 1, "dtype": np.uint8}),
    ("arange", 5, {}), ("arange", 5.0, {}), ("arange", 2, {"stop": 9, "step": 3}),
    ("arange", 0.0, {"stop": 1.0, "step": 0.1}), ("arange", -3, {"stop": 4, "dtype": np.int8}),
    ("arange", 1, {"stop": 2, "step": 0.25, "dtype": np.float16}),
    ("arange", np.int8(5), {}), ("arange", 10, {"stop": 0, "step": -3}),
    ("linspace", 0, {"stop": 1, "num": 5}), ("linspace", 2.0, {"stop": 3.0, "num": 4,
                                                                "endpoint": False}),
    ("linspace", 0, {"stop": 10, "num": 4, "dtype": np.int32}),
    ("linspace", 0.0, {"stop": 1.0, "num": 1}), ("linspace", 0.0, {"stop": 1.0, "num": 0}),
    ("linspace", 1.0, {"stop": 2.0, "num": 3, "retstep": True}),
    ("logspace", 0.0, {"stop": 2.0, "num": 3}),
    ("logspace", 0.0, {"stop": 3.0, "num": 4, "base": 2.0, "endpoint": False}),
    ("geomspace", 1.0, {"stop": 1000.0, "num": 4}),
    ("eye", 3, {}), ("eye", 2, {"M": 4, "k": 1, "dtype": np.int32}), ("eye", 3, {"k": -2}),
    ("identity", 3, {"dtype": bool}), ("tri", 3, {}), ("tri", 3, {"M": 4, "k": -1}),
    ("indices", (2, 3), {}), ("indices", (2, 3), {"sparse": True}),
    ("tril_indices", 3, {}), ("triu_indices", 4, {"k": 1}),
]


def test_creation():
    c = Checks()
    for name, arg, kwargs in CREATION:
        if name in ("linspace", "logspace", "geomspace"):
            kwargs = dict(kwargs)
            c(name, arg, kwargs.pop("stop"), **kwargs)
        else:
            c(name, arg, **kwargs)
    c("linspace", np.array([0.0, 1.0], np.float32), np.array(2.0, np.float32), num=4, axis=1)
    c("linspace", Weak(1.0), np.array([2, 4], np.int32), num=3, endpoint=False, retstep=True)
    c("logspace", np.array([0.0, 1.0], np.float32), 2.0, num=3, axis=-1)
    c("eye", 4, k=np.int32(1))
    c(lambda np_: np_.mgrid[0:3, 1:5:2])
    c(lambda np_: np_.mgrid[0.0:3, -1:1:5j])
    c(lambda np_: np_.ogrid[0:3, 0:2.5:0.5])
    c(lambda np_: np_.mgrid[-2:2])
    c("full", (2, 2), np.array(3.0, np.float32))
    c.run()


@given(shape=shapes, dtype=hst.sampled_from(ALL), seed=seeds)
@few
def test_like_constructors(shape, dtype, seed):
    c = Checks()
    x = _values(np.random.RandomState(seed), shape, dtype)
    for name in ("zeros_like", "ones_like", "empty_like"):
        c(name, x)
        c(name, x, dtype=np.float32)
    c("full_like", x, 3)
    c("full_like", x, 2, shape=(2,) + shape)
    c("full_like", Weak(2.0), 7)
    c("zeros_like", Weak(3))
    c("copy", x)
    c.run()


def test_full_weak_types_and_array_fills():
    c = Checks()
    c("full", (2, 3), np.arange(3, dtype=np.float32))
    c("full", (2,), Weak(1.5))
    c("full", (), 1j)
    c.run()


@given(shape=nonempty, dtype=hst.sampled_from(ALL), seed=seeds, k=hst.integers(-2, 2))
@few
def test_triangles_and_diagonals(shape, dtype, seed, k):
    c = Checks()
    x = _values(np.random.RandomState(seed), shape + (3,), dtype)
    c("tril", x, k=k)
    c("triu", x, k=k)
    c("diagonal", x, offset=k, axis1=0, axis2=-1)
    c("diagonal", x, k, -1, -2)
    if x.ndim == 2:
        c("diag", x, k=k)
        c("trace", x, k, dtype=None if dtype != BF16 else np.float32)
    c("diag", _values(np.random.RandomState(seed), shape[:1], dtype), k=k)
    if dtype != BOOL:
        c("trace", x, offset=k, axis1=-1, axis2=0)
    c.run()


def test_meshgrid():
    c = Checks()
    x, y = np.arange(3.0, dtype=np.float32), np.arange(2, dtype=np.int32)
    z = np.arange(4.0, dtype=np.float32)
    for indexing in ("xy", "ij"):
        for sparse in (False, True):
            c("meshgrid", x, y, z, indexing=indexing, sparse=sparse)
            c("meshgrid", x, indexing=indexing, sparse=sparse)
    c.run()


# ---------------------------------------------------------------- reductions

axes_strategy = hst.one_of(hst.none(), hst.integers(-3, 2),
                           hst.lists(hst.integers(-3, 2), max_size=3, unique=True).map(tuple))


def _valid_axis(axis, ndim):
    if axis is None:
        return True
    items = axis if isinstance(axis, tuple) else (axis,)
    canon = [a % ndim if ndim else a for a in items if -ndim <= a < ndim]
    return len(canon) == len(items) and len(set(canon)) == len(canon)


@given(shape=shapes, dtype=hst.sampled_from(ALL), seed=seeds, axis=axes_strategy,
       keepdims=hst.booleans(), specials=hst.booleans())
@more
def test_reductions(shape, dtype, seed, axis, keepdims, specials):
    c = Checks()
    if not _valid_axis(axis, len(shape)):
        axis = None
    x = _values(np.random.RandomState(seed), shape, dtype, specials)
    for name in ("sum", "prod", "all", "any", "count_nonzero"):
        c(name, x, axis=axis, keepdims=keepdims)
    if dtype != C64:
        c("max", x, axis=axis, keepdims=keepdims)
        c("min", x, axis=axis, keepdims=keepdims)
    c("mean", x, axis=axis, keepdims=keepdims)
    c("var", x, axis=axis, keepdims=keepdims, tol=1e-4)
    c("std", x, axis=axis, ddof=1, keepdims=keepdims, tol=1e-4)
    c("sum", x, axis=axis, dtype=np.float32, keepdims=keepdims)
    if dtype.kind in "fc":
        c("nansum", x, axis=axis, keepdims=keepdims)
        c("nanmean", x, axis=axis, keepdims=keepdims, tol=1e-4)
        if dtype != C64:
            c("nanmax", x, axis=axis, keepdims=keepdims)
            c("nanmin", x, axis=axis, keepdims=keepdims)
    c.run()


@given(shape=nonempty, dtype=hst.sampled_from(REAL + (BOOL,)), seed=seeds,
       keepdims=hst.booleans(), data=hst.data())
@few
def test_arg_reductions_and_cumulative(shape, dtype, seed, keepdims, data):
    c = Checks()
    x = _values(np.random.RandomState(seed), shape, dtype, specials=True)
    axis = data.draw(hst.one_of(hst.none(), hst.integers(-len(shape), len(shape) - 1)))
    c("argmax", x, axis=axis, keepdims=keepdims)
    c("argmin", x, axis, None, keepdims)
    c("cumsum", x, axis=axis)
    c("cumprod", x, axis=axis, dtype=None if dtype != I8 else np.int32)
    c("ptp", x if dtype != BOOL else x.astype(I8), axis=axis, keepdims=keepdims)
    if dtype.kind == "f":
        c("nanargmax", x, axis=axis)
        c("nancumsum", x, axis=axis)
        c("nancumprod", x, axis=axis)
    c("cumsum", x, axis=axis, dtype=bool)
    c.run()


def test_reduction_options():
    c = Checks()
    x = np.arange(12, dtype=np.float32).reshape(3, 4) - 5
    mask = (x % 3) != 0
    c("sum", x, axis=1, where=mask, initial=10.0)
    c("prod", x, axis=0, where=mask)
    c("max", x, axis=1, where=mask, initial=-100.0)
    c("min", x, axis=(0, 1), initial=-7.0, keepdims=True)
    c("mean", x, axis=0, where=mask)
    c("var", x, axis=1, where=mask, correction=1)
    c("sum", x.astype(np.int8), promote_integers=False)
    c("sum", x.astype(np.uint8), axis=0)
    c("prod", x.astype(np.float16), axis=1)
    c("mean", x.astype(np.float16), axis=1)
    c("all", x, where=mask)
    c("max", np.zeros((0, 3), np.float32), axis=1)
    c("sum", np.zeros((0, 3), np.int8))
    c("mean", Weak(3))
    c("sum", Weak(2.0))
    c("var", x.astype(np.complex64), axis=0)
    c("cumulative_sum", x, axis=1, include_initial=True)
    c("cumulative_prod", x[0])
    c("argmax", x, axis=1, keepdims=True)
    c("argmin", x, keepdims=True)
    c.run()


@given(shape=nonempty, seed=seeds, data=hst.data())
@few
def test_average_and_order_statistics(shape, seed, data):
    c = Checks()
    rng = np.random.RandomState(seed)
    x = _values(rng, shape, F32)
    axis = data.draw(hst.integers(-len(shape), len(shape) - 1))
    w = _values(rng, (shape[axis],), F32) + 4
    c("average", x, axis=axis, weights=w, returned=True)
    c("average", x.astype(np.int32), axis=None)
    c("median", x, axis=axis, keepdims=data.draw(hst.booleans()))
    c("median", x)
    c("quantile", x, np.array([0.0, 0.3, 1.0], np.float32), axis=axis)
    for method in ("lower", "higher", "nearest", "midpoint"):
        c("percentile", x, 40.0, axis=axis, method=method)
    x = x.copy()
    x[tuple(0 for _ in shape)] = np.nan
    c("median", x, axis=axis)
    c("nanmedian", x, axis=axis)
    c("nanpercentile", x, 25.0)
    w_all = np.abs(_values(rng, shape, F32))
    c("quantile", x, np.array([0.0, 0.3, 1.0], np.float32), axis=axis, weights=w,
      method="inverted_cdf")
    c("nanquantile", x, 0.4, weights=w_all, method="inverted_cdf")
    c("nanpercentile", x, np.array([10.0, 90.0], np.float32), axis=axis, weights=w,
      method="inverted_cdf", keepdims=True)
    c.run()


@both_backends
def test_weighted_inverted_cdf_quantiles_and_their_errors():
    """JAX 0.10.2's weights: inverted_cdf only; negative/NaN weights give NaN."""
    c = Checks()
    x = np.array([[1.0, 5, 2, 8], [3, 3, 9, 0]], np.float32)
    w = np.array([[1.0, 2, 1, 0.5], [1, 1, 1, 1]], np.float32)
    c("quantile", x, 0.3, weights=w, method="inverted_cdf")
    c("quantile", x, np.array([0.0, 0.3, 1.0], np.float32), axis=(0, 1), weights=w,
      method="inverted_cdf")
    c("quantile", x, 0.5, axis=1, weights=-w, method="inverted_cdf")
    c("quantile", x, 0.5, axis=1, weights=np.zeros_like(w), method="inverted_cdf")
    c("quantile", x.astype(np.int32), 0.7, axis=0, method="inverted_cdf")
    c("nanquantile", np.array([1.0, np.nan, 3, 4], np.float32), 0.5, weights=np.ones(4),
      method="inverted_cdf")
    c("nanquantile", np.array([np.nan, np.nan], np.float32), 0.3, method="inverted_cdf")
    c.run()
    for call, match in [
            (lambda m: m.quantile(x, 0.3, axis=1, weights=w[0, :3], method="inverted_cdf"),
             r"Weights shape \(3,\) must match reduction axes \(4,\)"),
            (lambda m: m.quantile(x, 0.3, weights=w[0], method="inverted_cdf"),
             "when axis is None"),
            (lambda m: m.quantile(x, 0.3, weights=w), "linear doesn't support weights"),
            (lambda m: m.quantile(x, 0.3, weights=w + 1j, method="inverted_cdf"),
             "cannot be complex")]:
        check_error(call, match=match)


@both_backends
def test_order_statistics_under_jit():
    c = Checks()
    x = np.arange(12, dtype=np.float32).reshape(3, 4)[::-1] * 1.5
    c("median", x, axis=1)
    c("quantile", x, np.array([0.25, 0.75], np.float32), axis=0)
    c(lambda np_, a, q: np_.quantile(a, q), x, np.array(0.6, np.float32))
    c.run()


# ---------------------------------------------------------------- shape manipulation

@given(shape=nonempty, dtype=hst.sampled_from(ALL), seed=seeds, data=hst.data())
@few
def test_axis_manipulation(shape, dtype, seed, data):
    c = Checks()
    x = _values(np.random.RandomState(seed), shape, dtype)
    nd = len(shape)
    ax = hst.integers(-nd, nd - 1)
    a1, a2 = data.draw(ax), data.draw(ax)
    c("swapaxes", x, a1, a2)
    c("moveaxis", x, a1, a2)
    c("expand_dims", x, data.draw(hst.integers(-nd - 1, nd)))
    c("expand_dims", x, (0, -1))
    c("squeeze", x)
    c("ravel", x)
    c("ravel", x, order="F")
    c("flip", x)
    c("flip", x, axis=a1)
    c("roll", x, data.draw(hst.integers(-5, 5)))
    c("roll", x, (1, -2), axis=(a1, a2) if a1 % nd != a2 % nd else (a1, a1))
    c("tile", x, data.draw(hst.one_of(hst.integers(0, 3),
                                      hst.lists(hst.integers(0, 2), max_size=4))))
    c("repeat", x, data.draw(hst.integers(0, 3)), axis=a1)
    c("repeat", x, 2)
    c("atleast_1d", x)
    c("atleast_2d", x)
    c("atleast_3d", x)
    c("atleast_3d", x[(0,) * nd], x)
    c("transpose", x)
    c("append", x, x, axis=a1)
    if nd >= 2:
        c("rot90", x, data.draw(hst.integers(-3, 5)),
          axes=(a1, a2) if a1 % nd != a2 % nd else (0, 1))
        c("fliplr", x)
        c("flipud", x)
    c.run()


@given(shape=nonempty, dtypes=hst.lists(hst.sampled_from(ALL), min_size=1, max_size=3),
       seed=seeds, data=hst.data())
@few
def test_joining(shape, dtypes, seed, data):
    c = Checks()
    rng = np.random.RandomState(seed)
    xs = [_values(rng, shape, d) for d in dtypes]
    axis = data.draw(hst.integers(-len(shape), len(shape) - 1))
    c("concatenate", xs, axis=axis)
    c("concatenate", xs, axis=None)
    c("stack", xs, axis=axis)
    for name in ("hstack", "vstack", "dstack", "column_stack"):
        c(name, xs)
    c("concatenate", xs, axis=0, dtype=np.float32)
    c("broadcast_arrays", xs[0], xs[-1][..., :1], Weak(2))
    c.run()


@given(n=hst.integers(1, 9), sections=hst.integers(1, 4), seed=seeds)
@few
def test_splitting(n, sections, seed):
    c = Checks()
    x = _values(np.random.RandomState(seed), (n, 2, 4), F32)
    c("array_split", x, sections)
    c("array_split", x, [n // 3, n // 2], axis=0)
    c("split", x, 2, axis=-1)
    c("hsplit", x, [1])
    c("vsplit", x, 1)
    c("dsplit", x, [2, 3])
    c("unstack", x, axis=1)
    if n % sections == 0:
        c("split", x, sections)
    c.run()


@given(shape=nonempty, dtype=hst.sampled_from(ALL), seed=seeds, data=hst.data())
@few
def test_pad(shape, dtype, seed, data):
    c = Checks()
    x = _values(np.random.RandomState(seed), shape, dtype)
    width = data.draw(hst.one_of(hst.integers(0, 4), hst.tuples(hst.integers(0, 4),
                                                                 hst.integers(0, 4))))
    for mode in ("constant", "edge", "wrap", "reflect", "symmetric", "empty"):
        c("pad", x, width, mode=mode)
    c("pad", x, width, constant_values=1)
    if dtype not in (BOOL, C64):
        for mode in ("maximum", "minimum", "mean", "median"):
            c("pad", x, width, mode=mode, tol=1e-2)
    per_axis = [(i, 2 - i % 3) for i in range(len(shape))]
    c("pad", x, per_axis, constant_values=[(1, 2)] * len(shape) if dtype != BOOL else 0)
    c.run()


def test_cov_rejects_bad_weights_as_jax_does():
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    for kwargs, error in ((dict(fweights=np.array([1.0, 2.0, 1.0])), TypeError),
                          (dict(fweights=np.array([1, 2])), RuntimeError),
                          (dict(aweights=np.ones((1, 3))), RuntimeError)):
        with pytest.raises(error) as ours:
            rnp.cov(x, **kwargs)
        with pytest.raises(error) as theirs:
            jnp.cov(x, **kwargs)
        # JAX's message, after the operation it names ("jnp.cov: ...")
        assert str(ours.value) in (str(theirs.value), f"jnp.cov: {theirs.value}")


def test_resize_and_misc_shapes():
    c = Checks()
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    c("resize", x, (4, 5))
    c("permute_dims", x, (1, 0))
    c("matrix_transpose", x[None])
    c("diagflat", x, 1)
    c("rollaxis", x[None], 2)
    c("rollaxis", x[None], 0, 3)
    c(lambda np_, a: np_.delete(a, np.array([0, 2]), axis=1), x)
    c("delete", x, slice(0, 1), axis=0)
    c("fill_diagonal", x, 7.0, inplace=False)
    c("fill_diagonal", np.zeros((3, 3, 3), np.float32), np.arange(2.0, dtype=np.float32),
      inplace=False)
    c("cov", x, tol=1e-4)
    c("cov", x, rowvar=False, bias=True, tol=1e-4)
    c("cov", x[0], x[1] ** 2, tol=1e-4)
    freq, obs = np.array([1, 3, 2]), np.array([0.5, 1.0, 2.0], np.float32)
    c("cov", x, fweights=freq, tol=1e-4)
    c("cov", x, aweights=obs, ddof=0, tol=1e-4)
    c("cov", x.T, rowvar=False, fweights=freq, aweights=obs, tol=1e-4)
    c("corrcoef", x.T * np.array([1.0, -2.0], np.float32), tol=1e-4)
    c.run()


# ---------------------------------------------------------------- indexing-like functions

@given(shape=nonempty, dtype=hst.sampled_from(ALL), seed=seeds, data=hst.data())
@few
def test_take(shape, dtype, seed, data):
    c = Checks()
    rng = np.random.RandomState(seed)
    x = _values(rng, shape, dtype)
    axis = data.draw(hst.one_of(hst.none(), hst.integers(-len(shape), len(shape) - 1)))
    n = x.size if axis is None else shape[axis]
    idx = rng.randint(-n - 2, n + 2, size=data.draw(shapes)).astype(np.int32)
    mode = data.draw(hst.sampled_from([None, "fill", "clip", "wrap"]))
    c("take", x, idx, axis=axis, mode=mode)
    c("take", x, idx, axis, None, mode)
    if axis is not None:
        along = rng.randint(-n, n, size=shape[:axis % len(shape)] + (3,)
                            + shape[axis % len(shape) + 1:]).astype(np.int32)
        c("take_along_axis", x, along, axis=axis)
        c("take_along_axis", x, along, axis)
        c("take_along_axis", x, along * 2, axis=axis, mode="clip")
    c.run()


@given(shape=shapes, dtypes=hst.tuples(hst.sampled_from(ALL), hst.sampled_from(ALL)),
       seed=seeds)
@few
def test_where_select_clip(shape, dtypes, seed):
    c = Checks()
    rng = np.random.RandomState(seed)
    cond = _values(rng, shape, BOOL)
    x, y = _values(rng, shape, dtypes[0]), _values(rng, shape[1:], dtypes[1])
    c("where", cond, x, y)
    c("where", cond, Weak(1.0), y)
    c("where", x, 1, 2.0)
    c("select", [cond, ~cond], [x, y], 0)
    c("select", [cond], [Weak(2)], Weak(1))
    if dtypes[0] != C64:
        c("clip", x, -1, 2)
        c("clip", x, max=Weak(1.5))
        c("clip", x, y if dtypes[1] != C64 else None)
    if x.ndim:
        c("nonzero", x, size=3)
        c("nonzero", x, size=5, fill_value=-1)
    c.run()


INDEXERS = [
    lambda a, i, j: a[i], lambda a, i, j: a[:, j], lambda a, i, j: a[i, :, j],
    lambda a, i, j: a[i, ...], lambda a, i, j: a[5, j], lambda a, i, j: a[-7:, j, None],
    lambda a, i, j: a[1, :, j], lambda a, i, j: a[None, i, 1:, j], lambda a, i, j: a[..., j],
    lambda a, i, j: a[0, j, j], lambda a, i, j: a[j, None, j], lambda a, i, j: a[-1, j],
    lambda a, i, j: a[1:, j[:, None], ::-2], lambda a, i, j: a[i, j[0]],
]


@given(dtype=hst.sampled_from(ALL), seed=seeds)
@few
def test_advanced_indexing(dtype, seed):
    rng = np.random.RandomState(seed)
    x = _values(rng, (3, 4, 5), dtype)
    i = rng.randint(-3, 3, size=(2, 2)).astype(np.int32)
    j = rng.randint(-6, 6, size=(2,)).astype(np.int32)  # some out of bounds: clamped
    c = Checks()
    for f in INDEXERS:
        c(lambda np_, a, i_, j_, f=f: f(a, i_, j_), x, i, j)
    c.run()


def test_boolean_mask_indexing():
    """Masks must be concrete, so these run eagerly (and JAX compiles them op by op)."""
    x = _values(np.random.RandomState(0), (3, 4, 5), F32)
    c = Checks()
    c(lambda np_, a: a[a[..., 0] > 0], x, eager=True)
    c(lambda np_, a: a[..., None, np.array([True, False, True, True, False])], x, eager=True)
    c(lambda np_, a: a[1, ..., np.array([True, False, True, True, False])], x, eager=True)
    c.run()


def test_functions_of_concrete_values():
    """Functions whose output shape depends on the values run eagerly only (their JAX
    versions compile op by op, so they get a few fixed inputs rather than hypothesis)."""
    c = Checks()
    rng = np.random.RandomState(7)
    x = _values(rng, (3, 4), F32, specials=True)
    nnz = int(np.count_nonzero(x))
    for name in ("nonzero", "flatnonzero", "argwhere", "where"):
        c(name, x, eager=True, jax_kwargs={"size": nnz})
    c("unique", x, return_index=True, return_inverse=True, return_counts=True, eager=True,
      jax_kwargs={"size": np.unique(x).size})
    ints = _values(rng, (3, 4), I8)
    c("unique", ints, eager=True, jax_kwargs={"size": np.unique(ints).size})
    c("repeat", x, np.array([0, 2, 1], np.int32), axis=0, eager=True,
      jax_kwargs={"total_repeat_length": 3})
    for length in (2, 7):
        c("repeat", x, np.array([0, 2, 1, 0], np.int32), axis=1, total_repeat_length=length)
        c("repeat", x, 2, total_repeat_length=length)
    ints = rng.randint(0, 5, size=7).astype(np.int32)
    c("bincount", ints, eager=True, jax_kwargs={"length": int(ints.max()) + 1})
    c("bincount", ints, weights=np.arange(7.0, dtype=np.float32), minlength=8, eager=True,
      jax_kwargs={"length": 8})
    c.run()


def test_clip_legacy_keywords_warn():
    with pytest.warns(DeprecationWarning):
        out = rnp.clip(rnp.arange(5), a_min=1, a_max=3)
    np.testing.assert_array_equal(out, [1, 1, 2, 3, 3])


def test_piecewise_extract_and_index_conversions():
    c = Checks()
    x = np.linspace(-2, 2, 9).astype(np.float32)
    c(lambda np_, v: np_.piecewise(v, [v < 0, v > 1], [lambda t: -t, 5.0, 0.5]), x)
    c("extract", x > 0, x, eager=True, jax_kwargs={"size": 4})
    c("extract", x > 0, x, size=6, fill_value=-1.0)
    c("compress", np.array([True, False, True]), x.reshape(3, 3), axis=0, eager=True,
      jax_kwargs={"size": 2})
    c("unravel_index", np.array([0, 5, 11, -1], np.int32), (3, 4))
    c("ravel_multi_index", (np.array([0, 2], np.int32), np.array([1, 3], np.int32)),
      (3, 4), eager=True, jax_kwargs={"mode": "wrap"})
    c("ravel_multi_index", (np.array([0, 2], np.int32), np.array([1, 7], np.int32)),
      (3, 4), mode="clip")
    c.run()


# ---------------------------------------------------------------- products

@given(dtypes=hst.tuples(hst.sampled_from(NUMERIC + (BOOL,)), hst.sampled_from(NUMERIC + (BOOL,))),
       seed=seeds, n=hst.integers(1, 3), m=hst.integers(1, 3), k=hst.integers(1, 3))
@few
def test_dot_family(dtypes, seed, n, m, k):
    c = Checks()
    rng = np.random.RandomState(seed)
    a, b = _values(rng, (n, k), dtypes[0]), _values(rng, (k, m), dtypes[1])
    v = _values(rng, (k,), dtypes[1])
    c("dot", a, b)
    c("dot", a, v)
    c("dot", v, v)
    if dtypes[0].kind in "fc":  # JAX 0.10 rejects int8 . weak int (an int32 dot_general)
        c("dot", a, Weak(2))
    c("matmul", a, b)
    c("vdot", a, a)
    c("inner", a, a)
    c("outer", a, v)
    c("tensordot", a, b, 1)
    c("tensordot", a, b, ((1, 0), (0, 1)) if n == m == k else ((1,), (0,)))
    c("tensordot", a[:, :, None], b[:, None], 0)
    if BOOL not in dtypes:
        c("kron", a, b)
    c("dot", a, b, preferred_element_type=np.float32)
    c.run()


EINSUMS = [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("ij,jk", [(2, 3), (3, 4)]), ("ii->i", [(3, 3)]),
    ("ii", [(3, 3)]), ("ij->", [(2, 3)]), ("ij->ji", [(2, 3)]), ("i,i", [(4,), (4,)]),
    ("i,j->ij", [(2,), (3,)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("...ij,...jk->...ik", [(5, 2, 3), (3, 4)]), ("...i,...i", [(2, 3), (1, 3)]),
    ("ij...,jk...->ik...", [(2, 3, 5), (3, 4, 5)]), ("iij->j", [(2, 2, 3)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]), ("ab,cd,bc->ad", [(2, 3), (5, 2), (3, 5)]),
    ("i,i,i->", [(3,), (3,), (3,)]), ("ijk,kj->i", [(2, 3, 4), (4, 3)]),
    ("iji->j", [(2, 3, 2)]), ("ba,ab", [(3, 2), (2, 3)]), ("i->", [(0,)]),
    ("...", [(2, 3)]), ("ij,kj->ik", [(2, 1), (3, 4)]),
]


@pytest.mark.parametrize("dtype", [F32, I8, BOOL, C64])
def test_einsum(dtype):
    c = Checks()
    rng = np.random.RandomState(0)
    for spec, operand_shapes in EINSUMS:
        c("einsum", spec, *[_values(rng, s, dtype) for s in operand_shapes])
    c.run()


@both_backends
def test_einsum_under_jit_interleaved_and_promotion():
    c = Checks()
    rng = np.random.RandomState(1)
    a, b = _values(rng, (2, 3), F32), _values(rng, (3, 4), I8)
    c(lambda np_, x, y: np_.einsum("ij,jk->ik", x, y), a, b)
    c("einsum", "ij,jk->ik", a, b, preferred_element_type=np.float32)
    c(lambda np_, x, y: np_.einsum(x, [0, 1], y, [1, 2], [0, 2]), a, b)
    c(lambda np_, x, y: np_.einsum(x, [Ellipsis, 1], y, [1, 2]), a, b)
    c("einsum", ",", Weak(2.0), Weak(3.0))
    c.run()


# ---------------------------------------------------------------- sorting and searching

@given(shape=nonempty, dtype=hst.sampled_from(REAL + (BOOL,)), seed=seeds, data=hst.data())
@few
def test_sorting(shape, dtype, seed, data):
    c = Checks()
    x = _values(np.random.RandomState(seed), shape, dtype, specials=True)
    axis = data.draw(hst.one_of(hst.none(), hst.integers(-len(shape), len(shape) - 1)))
    descending = data.draw(hst.booleans())
    c("sort", x, axis=axis, descending=descending)
    c("argsort", x, axis=axis, descending=descending)
    c("argsort", x, axis)
    c("lexsort", [x, x[::-1] if x.ndim else x])
    c.run()


@given(n=hst.integers(0, 6), seed=seeds, side=hst.sampled_from(["left", "right"]))
@few
def test_searchsorted_and_friends(n, seed, side):
    c = Checks()
    rng = np.random.RandomState(seed)
    a = np.sort(_values(rng, (n,), F32, specials=True))
    v = _values(rng, (2, 3), F32, specials=True)
    c("searchsorted", a, v, side=side)
    c("searchsorted", a, v, side)
    c("isin", v, a)
    c("digitize", v, np.unique(a[np.isfinite(a)]))
    ints = rng.randint(0, 5, size=7).astype(np.int32)
    c("bincount", ints, length=6)
    if n > 1 and np.isfinite(a).all() and np.unique(a).size == n:
        c("interp", v, a, np.arange(n, dtype=np.float32))
    c.run()


# ---------------------------------------------------------------- comparisons and maths

@given(shape=shapes, dtypes=hst.tuples(hst.sampled_from(REAL + (BOOL,)),
                                       hst.sampled_from(REAL + (BOOL,))),
       seed=seeds)
@few
def test_binary_maths(shape, dtypes, seed):
    c = Checks()
    rng = np.random.RandomState(seed)
    x, y = _values(rng, shape, dtypes[0], True), _values(rng, shape, dtypes[1], True)
    c("isclose", x, y)
    c("isclose", x, y, equal_nan=True, rtol=0.1, atol=0.3)
    c("allclose", x, y)
    c("array_equal", x, y)
    c("array_equal", x, x, equal_nan=True)
    c("array_equiv", x, y[..., :1] if y.ndim else y)
    c("heaviside", x, y)
    c("hypot", x, y)
    c("copysign", x, y)
    c("fmax", x, y)
    c("fmin", x, y)
    if dtypes[0].kind == "f" or dtypes[1].kind == "f":
        c("logaddexp", x, y, tol=1e-3)
        c("logaddexp2", x, y, tol=1e-3)
    c.run()


@given(shape=shapes, dtype=hst.sampled_from(NUMERIC + (BOOL,)), seed=seeds)
@few
def test_unary_maths(shape, dtype, seed):
    c = Checks()
    x = _values(np.random.RandomState(seed), shape, dtype, True)
    c("nan_to_num", x)
    c("nan_to_num", x, nan=1.0, posinf=2.0, neginf=-2.0)
    if dtype != C64:
        c("sinc", x, tol=1e-3)
    c("angle", x)
    c("iscomplex", x)
    c("isreal", x)
    if len(shape):
        c("diff", x)
        c("diff", x, n=2, axis=0, prepend=x[:1], append=Weak(0) if dtype != BOOL else x[:1])
    assert rnp.iscomplexobj(rnp.asarray(x)) == jnp.iscomplexobj(jnp.asarray(x))
    assert rnp.isscalar(rnp.asarray(x)) == jnp.isscalar(jnp.asarray(x))
    c.run()


def test_scalar_weak_maths():
    c = Checks()
    for name in ("sinc", "nan_to_num"):
        c(name, Weak(0.5))
    for name in ("hypot", "logaddexp", "heaviside", "copysign"):
        c(name, Weak(3.0), Weak(-4.0))
        c(name, 3, 4)
    c("where", True, 1, 2.0)
    c("clip", np.arange(4, dtype=np.int8), 0.5, 2.0)
    c.run()


def test_convolutions_polynomials_and_misc():
    c = Checks()
    rng = np.random.RandomState(3)
    a, v = _values(rng, (6,), F32), _values(rng, (3,), F32)
    for mode in ("full", "same", "valid"):
        c("convolve", a, v, mode=mode)
        c("correlate", v, a, mode=mode)
    c("convolve", a.astype(np.int32), v.astype(np.int32))
    c("polyval", v, a)
    c("trapezoid", a)
    c("trapezoid", a.reshape(2, 3), np.array([0.0, 1.0, 3.0], np.float32))
    c("ediff1d", a, to_begin=np.float32(1))
    c("cross", _values(rng, (4, 3), F32), _values(rng, (4, 3), F32))
    c("modf", a)
    c("divmod", a, v[:1])
    assert rnp.can_cast(rnp.int8, rnp.int32) and not rnp.can_cast(rnp.float32, rnp.int8)
    assert rnp.isdtype(rnp.float32, "real floating") and rnp.isdtype(np.int8, "integral")
    c(lambda np_, x: np_.linalg.norm(x), a)
    c(lambda np_, x: np_.linalg.norm(x.reshape(2, 3), ord=1), a)
    c(lambda np_, x: np_.linalg.norm(x.reshape(2, 3), axis=1, ord=np.inf), a)
    c(lambda np_, x: np_.linalg.vector_norm(x, ord=3), a)
    c.run()


UNARY_UFUNCS = [
    "negative", "positive", "sign", "floor", "ceil", "exp", "exp2", "log", "log1p", "expm1",
    "tanh", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "arcsinh",
    "arccosh", "arctanh", "sqrt", "cbrt", "square", "isfinite", "isnan", "isinf", "isposinf",
    "isneginf", "signbit", "reciprocal", "conjugate", "real", "imag", "deg2rad", "rad2deg",
    "log2", "log10", "absolute", "invert", "rint", "round", "trunc", "logical_not", "sinc",
    "angle"]
BINARY_UFUNCS = [
    "add", "subtract", "multiply", "divide", "floor_divide", "remainder", "fmod", "power",
    "float_power", "maximum", "minimum", "arctan2", "nextafter", "equal", "not_equal", "less",
    "less_equal", "greater", "greater_equal", "bitwise_and", "bitwise_or", "bitwise_xor",
    "left_shift", "right_shift", "logical_and", "logical_or", "logical_xor", "hypot",
    "copysign", "heaviside", "logaddexp", "fmax", "fmin"]
UFUNC_VALUES = {BOOL: [True, False, True, False], I8: [1, 0, -3, 5], U8: [1, 0, 3, 7],
                I32: [2, 0, -7, 3], F16: [1.5, -0.0, np.nan, -np.inf],
                F32: [0.25, -2.0, np.inf, 0.0], C64: [1 + 2j, -0.5j, 0, 2]}
# Each pair once, in the order of the more interesting promotion.
BINARY_PAIRS = [(BOOL, BOOL), (I8, U8), (F16, I32), (C64, F32), (U8, 3), (2.5, BOOL),
                (F16, True), (3, C64), (I32, I32), (F32, F32), (-2.5, I8)]


# Functions where JAX accepts complex arguments and refjax raises: none left.
REFJAX_REAL_ONLY = set()  # (logaddexp takes complex inputs, as JAX's, since the jnp change)


def _ufunc_arg(x):
    return np.asarray(UFUNC_VALUES[x], x) if isinstance(x, np.dtype) else x


def _jax_rejects(name, args):
    try:
        jax.eval_shape(lambda: getattr(jnp, name)(*_to(jnp, args)))
    except (TypeError, ValueError):
        return True
    return False


def _check_ufuncs(names, arg_lists):
    """Every ufunc on every argument list: the ones JAX rejects must be rejected by refjax
    too (TypeError or ValueError); the others are compared in one batch."""
    c = Checks()
    for name in names:
        for args in arg_lists:
            args = tuple(_ufunc_arg(a) for a in args)
            if _jax_rejects(name, args) or (name in REFJAX_REAL_ONLY and any(
                    np.iscomplexobj(a) for a in args)):
                with pytest.raises((TypeError, ValueError)):
                    getattr(rnp, name)(*_to(rnp, args))
            else:
                c(name, *args, tol=1e-2 if F16 in [np.asarray(a).dtype for a in args] else
                  1e-5)
    c.run()


def test_unary_ufuncs_match_jax():
    _check_ufuncs(UNARY_UFUNCS, [(BOOL,), (I8,), (U8,), (F16,), (F32,), (C64,), (True,),
                                 (3,), (-2.5,)])


def test_binary_ufuncs_match_jax():
    _check_ufuncs(BINARY_UFUNCS, BINARY_PAIRS)


# ---------------------------------------------------------------- transformations

GRAD_CASES = [
    lambda np_, x: np_.sum(x ** 2),
    lambda np_, x: np_.mean(np_.sin(x), axis=0).sum(),
    lambda np_, x: np_.var(x, axis=1).sum(),
    lambda np_, x: np_.max(x),
    lambda np_, x: np_.einsum("ij,kj->", x, x),
    lambda np_, x: np_.take(x, np_.array([2, 0, 1]), axis=1).sum() * 3,
    lambda np_, x: (np_.take_along_axis(x, np_.argsort(x, axis=1), axis=1)
                    * np_.arange(4.0)).sum(),
    lambda np_, x: np_.sort(x, axis=0)[0].sum(),
    lambda np_, x: np_.where(x > 0, x, 0.5 * x).sum(),
    lambda np_, x: np_.pad(x, 2, mode="reflect").sum(),
    lambda np_, x: np_.roll(np_.cumsum(x, axis=1), 1, axis=0)[0, 1],
    lambda np_, x: np_.trace(np_.dot(x, x.T)),
    lambda np_, x: np_.linalg.norm(x),
    lambda np_, x: np_.logaddexp(x, 1.0).sum(),
    lambda np_, x: np_.median(x),
    lambda np_, x: np_.prod(x, axis=0).sum(),
    lambda np_, x: np_.sinc(x).sum(),
    lambda np_, x: np_.quantile(x, 0.3, axis=1).sum(),
    lambda np_, x: np_.tile(np_.diagonal(x), 2).sum(),
    lambda np_, x: np_.clip(x, -0.5, 0.5).sum(),
    lambda np_, x: np_.hypot(x, 2.0 * x).sum(),
    lambda np_, x: (x[np_.array([2, 0, 5])] ** 2).sum(),
    lambda np_, x: x[:, np_.argmax(x, axis=1)].sum(),
]


@both_backends
def test_grad_and_jit_of_grad():
    """The gradients of all cases in one JAX program; refjax eagerly and under jit."""
    x = np.random.RandomState(0).randn(3, 4).astype(np.float32)
    theirs = jax.jit(lambda v: [jax.grad(lambda u: f(jnp, u))(v) for f in GRAD_CASES])(x)
    for f, expected in zip(GRAD_CASES, theirs):
        grad = refjax.grad(lambda u: f(rnp, u))
        assert_same(grad(rnp.asarray(x)), expected, tol=1e-4)
        assert_same(refjax.jit(grad)(rnp.asarray(x)), expected, tol=1e-4)


VMAP_CASES = [
    lambda np_, x: np_.sum(x, axis=0),
    lambda np_, x: np_.argmax(x),
    lambda np_, x: np_.take(x, np_.argmin(x)),
    lambda np_, x: np_.einsum("i,j->ij", x, x),
    lambda np_, x: np_.roll(x, 1),
    lambda np_, x: np_.quantile(x, 0.3),
    lambda np_, x: np_.searchsorted(np_.sort(x), x),
    lambda np_, x: np_.diag(x),
    lambda np_, x: np_.nonzero(x > 0, size=2)[0],
    lambda np_, x: np_.convolve(x, x[:2]),
    lambda np_, x: np_.take_along_axis(x, np_.argsort(x), 0),
    lambda np_, x: np_.pad(x, (1, 2), mode="wrap"),
]


@both_backends
def test_vmap():
    x = np.random.RandomState(0).randn(3, 5).astype(np.float32)
    theirs = jax.jit(lambda v: [jax.vmap(lambda u: f(jnp, u))(v) for f in VMAP_CASES])(x)
    for f, expected in zip(VMAP_CASES, theirs):
        assert_same(refjax.vmap(lambda u: f(rnp, u))(rnp.asarray(x)), expected, tol=1e-4)


@both_backends
def test_traced_take_out_of_bounds_and_grads():
    """take and x[i] with traced, out-of-bounds and negative indices (one gather each)."""
    x = np.arange(24.0, dtype=np.float32).reshape(6, 4)
    idx = np.array([[5, -1], [9, 0]], np.int32)
    c = Checks()
    c("take", x, idx, axis=0)
    c("take", x, idx, axis=1, mode="clip")
    c(lambda np_, a, i: a[i, 1:], x, idx)
    c.run()
    grad = jax.grad(lambda a, i: (a[i] ** 2).sum())(x, idx)
    assert_same(refjax.jit(refjax.grad(lambda a, i: (a[i] ** 2).sum()))(x, idx), grad)


@both_backends
def test_traced_shift_and_indices():
    c = Checks()
    x = np.arange(10.0, dtype=np.float32).reshape(2, 5)
    c(lambda np_, a, s: np_.roll(a, s, axis=1), x, np.array(7, np.int32))
    c(lambda np_, a, s: np_.roll(a, s), x, np.array(-3, np.int32))
    c(lambda np_, a, i: np_.take(a, i, axis=1, mode="wrap"), x,
      np.array([[9, -1], [2, 3]], np.int32))
    c.run()


METHODS = (("sum", (1,)), ("mean", ()), ("prod", (0,)), ("max", ()), ("min", (1,)),
           ("all", ()), ("any", ()), ("std", ()), ("var", (0,)), ("argmax", ()),
           ("argmin", (1,)), ("cumsum", (0,)), ("cumprod", ()), ("ravel", ()), ("flatten", ()),
           ("squeeze", ()), ("swapaxes", (0, 1)), ("clip", (2, 5)), ("sort", ()),
           ("argsort", ()), ("round", ()), ("repeat", (2,)), ("take", (np.array([1, 2]),)),
           ("trace", ()), ("diagonal", ()), ("ptp", ()))


def test_methods_route_through_numpy():
    c = Checks()
    x = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    for name, args in METHODS:
        c(lambda np_, a, *rest, name=name: getattr(a, name)(*rest), x, *args)
    c(lambda np_, a: a.dot(a.T), x)
    c(lambda np_, a, **k: a.nonzero(**k), x, eager=True, jax_kwargs={"size": 11})
    c.run()


# ---------------------------------------------------------------- errors

ERRORS = [
    lambda np_, x: np_.zeros(-1),
    lambda np_, x: np_.zeros((2.5,)),
    lambda np_, x: np_.zeros(2, 3),
    lambda np_, x: np_.arange(np_.ones(2)),
    lambda np_, x: np_.eye(-1),
    lambda np_, x: np_.sum(x, axis=5),
    lambda np_, x: np_.sum(x, axis=(0, 0)),
    lambda np_, x: np_.sum(x, where=np_.ones((2, 3), int)),
    lambda np_, x: np_.sum([1, 2]),
    lambda np_, x: np_.max(np_.ones((0,))),
    lambda np_, x: np_.argmax(np_.ones((0,))),
    lambda np_, x: np_.argmax(x, axis=(0,)),
    lambda np_, x: np_.concatenate([]),
    lambda np_, x: np_.concatenate([np_.ones(()), np_.ones(())]),
    lambda np_, x: np_.concatenate([x, x.T]),
    lambda np_, x: np_.concatenate([x, np_.ones(3)]),
    lambda np_, x: np_.split(np_.ones(5), 2),
    lambda np_, x: np_.squeeze(x, axis=0),
    lambda np_, x: np_.expand_dims(x, 5),
    lambda np_, x: np_.expand_dims(x, (0, 0)),
    lambda np_, x: np_.moveaxis(x, (0, 1), (0,)),
    lambda np_, x: np_.swapaxes(x, 0, 5),
    lambda np_, x: np_.dot(x, x),
    lambda np_, x: np_.matmul(x, x),
    lambda np_, x: np_.einsum("ij,ij->", x, np_.ones((3, 2))),
    lambda np_, x: np_.einsum("ij->k", x),
    lambda np_, x: np_.einsum("ij,jk->ik", x),
    lambda np_, x: np_.einsum("ijk->", x),
    lambda np_, x: np_.tensordot(x, x, 1),
    lambda np_, x: np_.tensordot(x, x, 3),
    lambda np_, x: np_.take(x, np_.ones(2)),
    lambda np_, x: np_.take(x, np_.ones(2, int), mode="foo"),
    lambda np_, x: np_.take(x, np_.ones(2, int), mode="raise"),
    lambda np_, x: np_.take_along_axis(x, np_.ones(2, int), 1),
    lambda np_, x: np_.take_along_axis(x, np_.ones((2, 3)), 1),
    lambda np_, x: np_.where(np_.ones(2) > 0, x, x),
    lambda np_, x: np_.pad(x, -1),
    lambda np_, x: np_.pad(x, 1, mode="foo"),
    lambda np_, x: np_.pad(np_.ones((0,)), 1, mode="reflect"),
    lambda np_, x: np_.linspace(0, 1, -1),
    lambda np_, x: np_.broadcast_arrays(np_.ones(2), np_.ones(3)),
    lambda np_, x: np_.broadcast_to(np_.ones(2), (3,)),
    lambda np_, x: np_.sort(x, kind="stable"),
    lambda np_, x: np_.sort(x, axis=3),
    lambda np_, x: np_.argsort(x, order="a"),
    lambda np_, x: np_.diagonal(np_.ones(3)),
    lambda np_, x: np_.diag(np_.ones((2, 2, 2))),
    lambda np_, x: np_.trace(x, axis1=0, axis2=0),
    lambda np_, x: np_.tril(np_.ones(3)),
    lambda np_, x: np_.var(x, ddof=1, correction=1),
    lambda np_, x: np_.average(x, weights=np_.ones(2)),
    lambda np_, x: np_.average(x, axis=1, weights=np_.ones(2)),
    lambda np_, x: np_.rot90(np_.ones(3)),
    lambda np_, x: np_.rot90(x, axes=(0, 0)),
    lambda np_, x: np_.roll(x, np_.ones((2, 2), int), 0),
    lambda np_, x: np_.select([x > 0], []),
    lambda np_, x: np_.select([], []),
    lambda np_, x: np_.cumsum(x, axis=2),
    lambda np_, x: np_.quantile(np_.ones(3, complex), 0.5),
    lambda np_, x: np_.quantile(x, 0.5, method="foo"),
    lambda np_, x: np_.searchsorted(np_.ones(3), 1, side="foo"),
    lambda np_, x: np_.float32("a"),
    lambda np_, x: np_.lexsort([]),
    lambda np_, x: np_.full((2,), np_.ones(3)),
    lambda np_, x: np_.inner(x, np_.ones(2)),
    lambda np_, x: np_.diff(x, n=-1),
    lambda np_, x: np_.nan_to_num([1.0]),
    lambda np_, x: np_.atleast_1d([1.0]),
    lambda np_, x: np_.meshgrid(x, x),
    lambda np_, x: np_.meshgrid(np_.ones(2), indexing="foo"),
    lambda np_, x: np_.count_nonzero(x, axis=4),
    lambda np_, x: np_.ptp(np_.ones(0)),
    lambda np_, x: np_.identity(-1),
    lambda np_, x: np_.indices((-1,)),
    lambda np_, x: np_.vdot(x, np_.ones(5)),
    lambda np_, x: np_.clip(x + 1j, 0, 1),
    lambda np_, x: np_.clip(None),
    lambda np_, x: np_.nonzero(np_.ones(())),
    lambda np_, x: np_.hypot(x + 0j, x),
    lambda np_, x: np_.convolve(x, x),
    lambda np_, x: np_.convolve(np_.ones(3), np_.ones(3), mode="foo"),
    lambda np_, x: np_.interp(np_.ones(3), np_.ones(2), np_.ones(3)),
    lambda np_, x: np_.unstack(np_.ones(())),
    lambda np_, x: np_.reshape(x, (4,)),
    lambda np_, x: np_.repeat(x, [1, 2], axis=1),
    lambda np_, x: np_.cross(x[:, :1], x[:, :1]),
    lambda np_, x: np_.mean(x, where=x),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_error_classes_match_jax(case):
    f = ERRORS[case]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as theirs:
            f(jnp, jnp.ones((2, 3)))
        with pytest.raises(Exception) as ours:
            f(rnp, rnp.ones((2, 3)))
    assert issubclass(ours.type, theirs.type) or ours.type.__name__ == theirs.type.__name__, \
        (ours.value, theirs.value)
    assert ours.type.__module__.split(".")[0] != "numpy" and ours.type is not AssertionError


TRACED_ERRORS = [
    lambda np_, x: np_.where(x > 0),
    lambda np_, x: np_.nonzero(x),
    lambda np_, x: np_.arange(x.sum().astype(int)),
    lambda np_, x: np_.unique(x),
    lambda np_, x: np_.zeros(x.shape[0] + x.sum().astype(int)),
    lambda np_, x: np_.repeat(x, x.astype(int), axis=0),
    lambda np_, x: np_.argwhere(x),
]


@both_backends
@pytest.mark.parametrize("case", range(len(TRACED_ERRORS)))
def test_concretization_errors_under_jit(case):
    """A traced value where a concrete one is needed: the class JAX raises
    (ConcretizationTypeError, or a plain TypeError for a traced shape)."""
    f = TRACED_ERRORS[case]
    with pytest.raises(TypeError) as theirs:
        jax.jit(lambda v: f(jnp, v))(jnp.ones(3))
    with pytest.raises(TypeError) as ours:
        refjax.jit(lambda v: f(rnp, v))(rnp.ones(3))
    assert type(ours.value).__name__ == type(theirs.value).__name__, (ours.value, theirs.value)


# ---------------------------------------------------------------- indexing reads bind gather

def _primitive_names(jaxpr):
    """The primitive names of a jaxpr's equations, inner jit bodies inlined."""
    names = []
    for eqn in jaxpr.eqns:
        inner = eqn.params.get("jaxpr")
        if inner is not None and eqn.primitive.name in ("jit", "pjit"):
            names += _primitive_names(getattr(inner, "jaxpr", inner))
        else:
            names.append(eqn.primitive.name)
    return names


# As JAX, a slice next to an index array is part of the gather (its start in the index
# vector, a concatenate) rather than a slice first.
GATHER_READS = [
    lambda np_, x, i: x[i],
    lambda np_, x, i: x[i, 1:],
    lambda np_, x, i: x[1:, i],
    lambda np_, x, i: np_.take(x, i, axis=1),
    lambda np_, x, i: np_.take(x, i, axis=0, mode="clip"),
    lambda np_, x, i: np_.take_along_axis(x, i[None, :], axis=1),
]


@pytest.mark.parametrize("case", range(len(GATHER_READS)))
def test_indexing_reads_stage_a_gather_like_jax(case):
    f = GATHER_READS[case]
    x, i = np.arange(12.0, dtype=np.float32).reshape(3, 4), np.array([0, 2, -1], np.int32)
    ours = _primitive_names(refjax.make_jaxpr(lambda a, b: f(rnp, a, b))(x, i).jaxpr)
    theirs = _primitive_names(jax.make_jaxpr(lambda a, b: f(jnp, a, b))(x, i).jaxpr)
    assert ours.count("gather") == 1, ours
    assert not {"dynamic_slice", "reduce_sum", "eq"} & set(ours), ours
    assert ours == theirs, (ours, theirs)


@both_backends
@pytest.mark.parametrize("mode", (None, "fill", "clip", "wrap"))
def test_take_modes_values_and_grads(mode):
    x = np.random.RandomState(1).randn(4, 5).astype(np.float32)
    idx = np.array([[0, 4], [-1, 7]], np.int32)
    for traced in (False, True):
        for axis in (0, 1, None):
            def f(np_, a, i):
                return np_.take(a, i, axis=axis, mode=mode)
            g = (lambda a, i: f(rnp, a, i)) if not traced else refjax.jit(
                lambda a, i: f(rnp, a, i))
            assert_same(g(rnp.asarray(x), rnp.asarray(idx)), f(jnp, jnp.asarray(x), idx))
    w = np.random.RandomState(2).randn(2, 2, 5).astype(np.float32)
    loss = lambda np_: lambda a, i: (np_.where(np_.isnan(t := np_.take(a, i, axis=0, mode=mode)),
                                               0, t) * w).sum()  # noqa: E731
    assert_same(refjax.grad(loss(rnp))(x, idx), jax.grad(loss(jnp))(x, idx))


@pytest.mark.parametrize("mode", ("wrap", "drop", "fill", "clip", None, "promise_in_bounds",
                                  "raise", "bogus"))
def test_take_and_take_along_axis_accept_jaxs_modes(mode):
    """take has 'wrap' but not 'promise_in_bounds'; take_along_axis passes its mode to the
    gather ('drop' included, no 'wrap'); the errors are JAX's."""
    x, i = np.arange(3.0, dtype=np.float32), np.array([5, -1], np.int32)
    for name in ("take", "take_along_axis"):
        call = lambda np_: getattr(np_, name)(np_.asarray(x), i, 0, mode=mode)  # noqa: E731
        try:
            want = call(jnp)
        except (ValueError, NotImplementedError) as e:
            with pytest.raises(type(e), match=re.escape(str(e))):
                call(rnp)
            continue
        assert_same(call(rnp), want)


@both_backends
def test_take_along_axis_broadcasting_and_grads():
    x = np.random.RandomState(3).randn(3, 1, 5).astype(np.float32)
    idx = np.array([[[0, 4]], [[-1, 2]], [[6, 1]]], np.int32)[:, :, :]   # (3, 1, 2)
    idx = np.broadcast_to(idx, (3, 4, 2)).copy()
    for mode in (None, "clip"):
        for a, i, axis in ((x, idx, 2), (np.swapaxes(x, 0, 2), np.swapaxes(idx, 0, 2), 0),
                           (x, idx[:1], 2)):
            ours = rnp.take_along_axis(rnp.asarray(a), rnp.asarray(i), axis=axis, mode=mode)
            assert_same(ours, jnp.take_along_axis(jnp.asarray(a), i, axis=axis, mode=mode))
    loss = lambda np_: lambda a: np_.take_along_axis(a, idx, axis=2, mode="clip").sum()  # noqa
    assert_same(refjax.grad(loss(rnp))(x), jax.grad(loss(jnp))(x))


@both_backends
def test_advanced_index_out_of_bounds_gets_no_gradient():
    x = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    idx = np.array([0, 5, -1, -7, 2], np.int32)
    for f in (lambda a, i: a[i].sum(), lambda a, i: (a[i, 1:] * 2).sum(),
              lambda a, i: a[i, i[:1] - 1].sum()):
        assert_same(refjax.grad(f)(x, idx), jax.grad(f)(jnp.asarray(x), idx))
        assert_same(refjax.jit(f)(x, idx), jax.jit(f)(jnp.asarray(x), idx))
        assert_same(refjax.vmap(f, in_axes=(None, 0))(x, np.stack([idx, idx[::-1]])),
                    jax.vmap(f, in_axes=(None, 0))(jnp.asarray(x), np.stack([idx, idx[::-1]])))
