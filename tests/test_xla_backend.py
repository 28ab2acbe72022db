"""The xla backend against the numpy_ref oracle: every primitive eager and under jit, layouts,
cross-backend errors, and grad/vmap/jit of a small MLP on both backends."""
import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings, strategies as hst

import refjax
import refjax.numpy as rnp
from refjax.backends.base import get_backend, make_array
from refjax.core import sharding as sh
from refjax.core.avals import ShapedArray
from refjax.core.primitive import all_primitives
from refjax.core.primitives import elementwise as ew
from refjax.core.primitives import structural as st

# Built at collection, before any test starts JAX: it sets JAX's CPU device count.
XLA = get_backend("xla")
from refjax.backends.xla import missing_rules  # noqa: E402

BOOL, I8, I32, U8, U32 = (np.dtype(t) for t in (np.bool_, np.int8, np.int32, np.uint8, np.uint32))
F16, F32, C64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.complex64)
BF16 = np.dtype(ml_dtypes.bfloat16)
FLOAT0 = np.dtype([("float0", np.void, 0)])
FLOAT, INT, COMPLEX = (F32, F16, BF16), (I32, I8, U8, U32), (C64,)
NUM = INT + FLOAT + COMPLEX
ALL = NUM + (BOOL,)
TOL = {F32: 1e-4, F16: 4e-3, BF16: 3e-2, C64: 1e-4}
SHAPES = ((), (2, 3))
few = settings(max_examples=2, deadline=None, database=None)


# ---------------------------------------------------------------- values

DOMAINS = {"real": (-3, 3), "pos": (0.25, 4), "unit": (-0.9, 0.9), "ge1": (1.05, 4),
           "small": (-1.4, 1.4)}


def values(rng, shape, dtype, domain="real"):
    """Random values of dtype: floats in a domain ('any' adds NaN, inf, -0.0 and halves),
    complex numbers in a small box, integers over their whole range ('any') or small."""
    if dtype == BOOL:
        return np.asarray(rng.rand(*shape) < 0.5)
    if dtype.kind in "iu":
        return _ints(rng, shape, dtype, domain)
    if dtype.kind == "c":
        lo, hi = DOMAINS["small"]
        return (rng.uniform(lo, hi, shape) + 1j * rng.uniform(lo, hi, shape)).astype(dtype)
    if domain == "any":
        return _specials(rng, rng.randint(-12, 13, shape) / 2 + rng.uniform(-1, 1, shape)
                         * (rng.rand(*shape) < 0.5)).astype(dtype)
    lo, hi = DOMAINS[domain]
    return rng.uniform(lo, hi, shape).astype(dtype)


def _ints(rng, shape, dtype, domain):
    info = np.iinfo(dtype)
    if domain == "any":
        x = rng.randint(info.min, int(info.max) + 1, shape, dtype=np.int64)
        picks = rng.rand(*shape)
        return np.select([picks < 0.15, picks < 0.25, picks < 0.3],
                         [0, info.min, -1 if info.min else 1], x).astype(dtype)
    if domain == "shift":
        return rng.randint(0, info.bits + 3, shape).astype(dtype)
    return rng.randint(max(info.min, -6), 7, shape).astype(dtype)


def _specials(rng, x):
    picks = rng.rand(*np.shape(x))
    return np.select([picks < 0.06, picks < 0.1, picks < 0.14, picks < 0.2],
                     [np.nan, np.inf, -np.inf, -0.0], x)


# ---------------------------------------------------------------- running and comparing

def run(backend, prim, args, params, jit):
    """prim.bind on `backend` (eager, or inside refjax.jit); outputs as NumPy arrays."""
    with refjax.backend(backend):
        arrays = [make_array(a, ShapedArray(a.shape, a.dtype)) for a in args]
        fn = lambda *xs: prim.bind(*xs, **params)  # noqa: E731
        out = refjax.jit(fn)(*arrays) if jit else fn(*arrays)
    outs = out if prim.multiple_results else [out]
    for o in outs:
        assert o._backend is get_backend(backend)
    return [np.asarray(o) for o in outs]


def assert_same(got, want, exact):
    """Bit-exact for integers, booleans and exact ops (NaN == NaN; signed zeros too when
    exact='bits'); per-dtype tolerance otherwise."""
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, want.dtype)
    if got.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want)
    elif exact:
        got, want = _exactly_wide(got), _exactly_wide(want)
        np.testing.assert_array_equal(got, want)
        if exact == "bits":  # signed zeros must agree; a NaN's sign bit is unspecified
            real = ~np.isnan(want.real)
            np.testing.assert_array_equal(np.signbit(got.real[real]), np.signbit(want.real[real]))
    else:
        wide = np.complex128 if got.dtype.kind == "c" else np.float64
        tol = TOL[got.dtype]
        np.testing.assert_allclose(got.astype(wide), want.astype(wide), rtol=tol, atol=tol,
                                   equal_nan=True)


def _exactly_wide(x):
    """float64/complex128 (exact for every float type; NumPy's NaN handling applies)."""
    return x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)


def check(prim, args, params, exact=False):
    """prim on xla, eager and jitted, against numpy_ref eager."""
    want = run("numpy_ref", prim, args, params, jit=False)
    for jit in (False, True):
        got = run("xla", prim, args, params, jit)
        for g, w in zip(got, want):
            assert_same(g, w, exact)


def check_many(cases, exact):
    """Each (prim, args, params) eagerly on both backends, and all of them in one refjax.jit
    on xla (one XLA compilation instead of one per case)."""
    want = [run("numpy_ref", *case, jit=False) for case in cases]
    got = [run("xla", *case, jit=False) for case in cases]
    with refjax.backend("xla"):
        arrays = [[make_array(a, ShapedArray(a.shape, a.dtype)) for a in args]
                  for _, args, _ in cases]
        jitted = refjax.jit(lambda xs: [p.bind(*a, **params) for (p, _, params), a
                                        in zip(cases, xs)])(arrays)
    jitted = [[np.asarray(o) for o in (out if p.multiple_results else [out])]
              for (p, _, _), out in zip(cases, jitted)]
    for outs in (got, jitted):
        for g, w in zip((o for case in outs for o in case), (o for case in want for o in case)):
            assert_same(g, w, exact)


# ---------------------------------------------------------------- elementwise

UNARY = [  # (primitive, dtypes, domain, exact)
    (ew.neg_p, NUM, "any", "bits"), (ew.sign_p, NUM, "any", False),
    (ew.floor_p, FLOAT, "any", "bits"), (ew.ceil_p, FLOAT, "any", "bits"),
    (ew.is_finite_p, FLOAT, "any", True), (ew.exp_p, FLOAT + COMPLEX, "real", False),
    (ew.exp2_p, FLOAT + COMPLEX, "real", False), (ew.log_p, FLOAT + COMPLEX, "pos", False),
    (ew.log1p_p, FLOAT + COMPLEX, "pos", False), (ew.expm1_p, FLOAT + COMPLEX, "real", False),
    (ew.tanh_p, FLOAT + COMPLEX, "real", False), (ew.logistic_p, FLOAT + COMPLEX, "real", False),
    (ew.sin_p, FLOAT + COMPLEX, "real", False), (ew.cos_p, FLOAT + COMPLEX, "real", False),
    (ew.tan_p, FLOAT + COMPLEX, "small", False), (ew.asin_p, FLOAT + COMPLEX, "unit", False),
    (ew.acos_p, FLOAT + COMPLEX, "unit", False), (ew.atan_p, FLOAT + COMPLEX, "real", False),
    (ew.sinh_p, FLOAT + COMPLEX, "real", False), (ew.cosh_p, FLOAT + COMPLEX, "real", False),
    (ew.asinh_p, FLOAT + COMPLEX, "real", False), (ew.acosh_p, FLOAT + COMPLEX, "ge1", False),
    (ew.atanh_p, FLOAT + COMPLEX, "unit", False), (ew.sqrt_p, FLOAT + COMPLEX, "pos", False),
    (ew.rsqrt_p, FLOAT + COMPLEX, "pos", False), (ew.cbrt_p, FLOAT, "real", False),
    (ew.abs_p, NUM, "any", False), (ew.not_p, INT + (BOOL,), "any", True),
    (ew.square_p, NUM, "real", False), (ew.erf_p, FLOAT, "real", False),
    (ew.erf_inv_p, FLOAT, "unit", False), (ew.lgamma_p, FLOAT, "pos", False),
    (ew.digamma_p, FLOAT, "pos", False), (ew.real_p, COMPLEX, "real", False),
    (ew.imag_p, COMPLEX, "real", False), (ew.conj_p, NUM, "real", False),
    (st.copy_p, ALL, "any", "bits"),
]

BINARY = [  # (primitive, dtypes, domain of x, domain of y, exact)
    (ew.add_p, NUM, "real", "real", False), (ew.sub_p, NUM, "real", "real", False),
    (ew.add_any_p, NUM, "real", "real", False), (ew.mul_p, ALL, "real", "real", False),
    (ew.div_p, NUM, "any", "real", False), (ew.rem_p, INT + FLOAT, "any", "real", False),
    (ew.pow_p, FLOAT + COMPLEX, "pos", "real", False), (ew.max_p, ALL, "any", "any", "bits"),
    (ew.min_p, ALL, "any", "any", "bits"), (ew.atan2_p, FLOAT, "real", "real", False),
    (ew.nextafter_p, FLOAT, "any", "any", "bits"), (ew.and_p, INT + (BOOL,), "any", "any", True),
    (ew.or_p, INT + (BOOL,), "any", "any", True), (ew.xor_p, INT + (BOOL,), "any", "any", True),
    (ew.shift_left_p, INT, "any", "shift", True),
    (ew.shift_right_logical_p, INT, "any", "shift", True),
    (ew.shift_right_arithmetic_p, INT, "any", "shift", True),
    (ew.polygamma_p, FLOAT, "polygamma_m", "pos", False),
] + [(p, ALL, "any", "any", True) for p in (ew.eq_p, ew.ne_p)] + [
    (p, INT + FLOAT + (BOOL,), "any", "any", True) for p in (ew.lt_p, ew.le_p, ew.gt_p, ew.ge_p)]


def _case_id(case):
    return case[0].name


def _accepted(prim, dts, arity, **params):
    """The dtypes among dts the primitive's abstract eval accepts (the primitive, not this
    table, decides: rules written elsewhere may tighten)."""
    def ok(dtype):
        try:
            prim.abstract_eval(*[ShapedArray((), dtype)] * arity, **params)
        except TypeError:
            return False
        return True
    return tuple(d for d in dts if ok(d))


@pytest.mark.parametrize("case", UNARY, ids=_case_id)
@few
@given(data=hst.data())
def test_unary(case, data):
    prim, dts, domain, exact = case
    dtype, shape, seed = _draw_signature(data, _accepted(prim, dts, 1))
    check(prim, [values(np.random.RandomState(seed), shape, dtype, domain)], {}, exact)


def _draw_signature(data, dts, shapes=SHAPES):
    return (data.draw(hst.sampled_from(dts)), data.draw(hst.sampled_from(shapes)),
            data.draw(hst.integers(0, 2**31)))


@pytest.mark.parametrize("case", BINARY, ids=_case_id)
@few
@given(data=hst.data())
def test_binary(case, data):
    prim, dts, dom_x, dom_y, exact = case
    dtype, shape, seed = _draw_signature(data, _accepted(prim, dts, 2))
    rng = np.random.RandomState(seed)
    scalar = data.draw(hst.sampled_from([None, 0, 1]))  # rank-0 operands broadcast
    shapes = [() if i == scalar else shape for i in range(2)]
    if dom_x == "polygamma_m":
        x = rng.randint(0, 3, shapes[0]).astype(dtype)
    else:
        x = values(rng, shapes[0], dtype, dom_x)
    check(prim, [x, values(rng, shapes[1], dtype, dom_y)], {}, exact)


@few
@given(data=hst.data())
def test_round(data):
    dtype, shape, seed = _draw_signature(data, FLOAT)
    method = data.draw(hst.sampled_from([0, 1]))
    check(ew.round_p, [values(np.random.RandomState(seed), shape, dtype, "any")],
          {"rounding_method": method}, "bits")


@few
@given(data=hst.data())
def test_integer_pow(data):
    dtype, shape, seed = _draw_signature(data, NUM)
    y = data.draw(hst.integers(0 if dtype.kind in "iu" else -3, 5))
    check(ew.integer_pow_p, [values(np.random.RandomState(seed), shape, dtype, "small")],
          {"y": y})


@few
@given(data=hst.data())
def test_convert_element_type(data):
    """Bit-exact, saturation and NaN included."""
    dtype, shape, seed = _draw_signature(data, ALL)
    new = data.draw(hst.sampled_from(ALL))
    x = values(np.random.RandomState(seed), shape, dtype, "any")
    if dtype.kind == "f" and new.kind in "iu":
        x = (x * np.float32(10.0 ** data.draw(hst.integers(0, 11)))).astype(dtype)
    check(ew.convert_element_type_p, [x], {"new_dtype": new, "weak_type": False,
                                           "sharding": None}, exact=new.kind != "c")


@few
@given(data=hst.data())
def test_select_n(data):
    dtype, shape, seed = _draw_signature(data, ALL)
    rng = np.random.RandomState(seed)
    n = data.draw(hst.integers(1, 3))
    which_shape = data.draw(hst.sampled_from([(), shape]))
    if n <= 2 and data.draw(hst.booleans()):
        which = np.asarray(rng.rand(*which_shape) < 0.5) if n == 2 else np.zeros(which_shape,
                                                                                  BOOL)
    else:
        which = rng.randint(0, n, which_shape).astype(I32)
    cases = [values(rng, shape, dtype, "any") for _ in range(n)]
    check(ew.select_n_p, [which, *cases], {}, "bits")


@few
@given(data=hst.data())
def test_clamp(data):
    dtype, shape, seed = _draw_signature(data, INT + FLOAT)
    rng = np.random.RandomState(seed)
    bound_shape = data.draw(hst.sampled_from([(), shape]))
    lo, hi = (values(rng, bound_shape, dtype, "small") for _ in range(2))
    check(ew.clamp_p, [lo, values(rng, shape, dtype, "any"), hi], {}, True)


# ---------------------------------------------------------------- structural

def _structural_cases(rng, dtype):
    x = values(rng, (2, 1, 3), dtype, "any")
    v = values(rng, (4,), dtype, "any")
    idx = lambda *i: [np.array(k, I32) for k in i]  # noqa: E731
    return [
        (st.broadcast_in_dim_p, [x], dict(shape=(4, 2, 5, 3), broadcast_dimensions=(1, 2, 3),
                                          sharding=None)),
        (st.broadcast_in_dim_p, [v[0]], dict(shape=(2, 3), broadcast_dimensions=(),
                                             sharding=None)),
        (st.reshape_p, [x], dict(new_sizes=(3, 2), dimensions=None, sharding=None)),
        (st.squeeze_p, [x], dict(dimensions=(1,))),
        (st.transpose_p, [x], dict(permutation=(2, 0, 1))),
        (st.rev_p, [x], dict(dimensions=(0, 2))),
        (st.slice_p, [x], dict(start_indices=(1, 0, 0), limit_indices=(2, 1, 3),
                               strides=None)),
        (st.slice_p, [v], dict(start_indices=(1,), limit_indices=(4,), strides=(2,))),
        (st.dynamic_slice_p, [x, *idx(1, 0, 2)], dict(slice_sizes=(1, 1, 2))),
        (st.dynamic_slice_p, [v, *idx(-5)], dict(slice_sizes=(2,))),
        (st.dynamic_update_slice_p, [x, x[:1, :, :2], *idx(3, 0, -1)], {}),
        (st.pad_p, [x, v[0]], dict(padding_config=((1, -1, 1), (0, 0, 0), (-1, 2, 2)))),
        (st.concatenate_p, [x, x[:, :, :1]], dict(dimension=2)),
        (st.copy_p, [v], {}),
    ]


@pytest.mark.parametrize("dtype", (BOOL, BF16, U32, C64), ids=str)
def test_structural(dtype):
    """Bit-exact on every width of dtype, NaN, infinities and signed zeros included."""
    check_many(_structural_cases(np.random.RandomState(0), dtype), "bits")


@pytest.mark.parametrize("dtype", (I8, U32, BF16, F32, C64), ids=str)
def test_iota(dtype):
    check(st.iota_p, [], dict(dtype=dtype, shape=(3, 4), dimension=1, sharding=None), True)


# ---------------------------------------------------------------- reductions, dot, sort

from refjax.core.primitives import linalg  # noqa: E402
from refjax.core.primitives import reductions as red, sorting  # noqa: E402


def _axes(data, ndim):
    return tuple(sorted(data.draw(hst.sets(hst.integers(0, max(ndim - 1, 0)), max_size=ndim))
                        if ndim else ()))


@pytest.mark.parametrize("name", ["reduce_sum", "reduce_prod", "reduce_max", "reduce_min",
                                  "reduce_and", "reduce_or"])
@few
@given(data=hst.data())
def test_reduce(name, data):
    logical = name in ("reduce_and", "reduce_or")
    dts = INT + (BOOL,) if logical else NUM + ((BOOL,) if name in ("reduce_max", "reduce_min")
                                                else ())
    dtype, shape, seed = _draw_signature(data, dts, ((4,), (2, 3), (3, 0)))
    domain = "any" if name in ("reduce_max", "reduce_min") or dtype.kind in "iu" else "pos"
    x = values(np.random.RandomState(seed), shape, dtype, domain)
    check(getattr(red, f"{name}_p"), [x], {"axes": _axes(data, len(shape))},
          exact=domain == "any")


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@few
@given(data=hst.data())
def test_argminmax(name, data):
    dtype, shape, seed = _draw_signature(data, INT + FLOAT + (BOOL,), ((5,), (2, 3)))
    axis = data.draw(hst.integers(0, len(shape) - 1))
    x = values(np.random.RandomState(seed), shape, dtype, "any")
    check(getattr(red, f"{name}_p"), [x], {"axes": (axis,), "index_dtype": I32}, True)


@pytest.mark.parametrize("name", ["cumsum", "cumprod", "cummax", "cummin"])
@few
@given(data=hst.data())
def test_cumulative(name, data):
    dtype, shape, seed = _draw_signature(data, NUM, ((5,), (2, 3)))
    domain = "any" if name in ("cummax", "cummin") or dtype.kind in "iu" else "pos"
    x = values(np.random.RandomState(seed), shape, dtype, domain)
    params = {"axis": data.draw(hst.integers(0, len(shape) - 1)),
              "reverse": data.draw(hst.booleans())}
    check(getattr(red, f"{name}_p"), [x], params, exact=domain == "any")


DOTS = [  # (lhs shape, rhs shape, dimension_numbers)
    ((3,), (3,), (((0,), (0,)), ((), ()))),
    ((2, 3), (3, 4), (((1,), (0,)), ((), ()))),
    ((2, 3, 4), (2, 4), (((2,), (1,)), ((0,), (0,)))),
    ((3, 2), (3, 2), (((0,), (0,)), ((), ()))),
]


@few
@given(data=hst.data())
def test_dot_general(data):
    lhs_shape, rhs_shape, dims = data.draw(hst.sampled_from(DOTS))
    dtype, _, seed = _draw_signature(data, ALL)
    rhs_dtype = data.draw(hst.sampled_from([dtype, F32]))
    pet = data.draw(hst.sampled_from([None, F32, I32]))
    if dtype.kind == "c" or rhs_dtype.kind == "c" or pet == I32 and dtype.kind in "fc":
        pet = None
    rng = np.random.RandomState(seed)
    args = [values(rng, lhs_shape, dtype, "pos"), values(rng, rhs_shape, rhs_dtype, "pos")]
    check(linalg.dot_general_p, args, dict(dimension_numbers=dims, precision=None,
                                           preferred_element_type=pet))


@few
@given(data=hst.data())
def test_sort(data):
    """Stable, NaNs last, -0.0 == 0.0: bit-exact on both backends."""
    dtype, shape, seed = _draw_signature(data, ALL, ((6,), (2, 5)))
    rng = np.random.RandomState(seed)
    n = data.draw(hst.integers(1, 3))
    keys = [values(rng, shape, dtype, "any" if dtype.kind == "f" else "small")]
    keys = [np.round(k * 2) / 2 if k.dtype.kind == "f" else k for k in keys]
    operands = keys + [values(rng, shape, I32, "any") for _ in range(n - 1)]
    params = dict(dimension=data.draw(hst.integers(0, len(shape) - 1)),
                  is_stable=data.draw(hst.booleans()), num_keys=data.draw(hst.integers(1, n)))
    check(sorting.sort_p, operands, params, "bits")


def _control_flow_results():
    lax = refjax.lax

    def g(x, n):
        y = lax.cond(x.sum() > 0, lambda v: v * 2.0, lambda v: v - 1.0, x)
        y = lax.fori_loop(0, 3, lambda i, v: v * 1.5 + i.astype(np.float32), y)
        carry, ys = lax.scan(lambda c, v: (c + v, c * v), np.float32(0.0), y)
        return carry + ys.sum() + lax.switch(n % 3, [lambda: 0.0, lambda: 1.0, lambda: 2.0])

    def f(x, n):
        count, y = lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * 1.5),
                                  (np.int32(0), x))
        return g(y, count)

    x, n = rnp.asarray(np.linspace(-1, 2, 4).astype(np.float32)), rnp.asarray(np.int32(4))
    outs = [f(x, n), refjax.jit(f)(x, n), refjax.grad(g)(x, n), refjax.jit(refjax.grad(g))(x, n),
            refjax.vmap(f, in_axes=(0, None))(rnp.stack([x, -x]), n)]
    return [np.asarray(o) for o in outs]


def test_control_flow():
    """cond, switch, while_loop, fori_loop and scan: eager, jit, grad and vmap."""
    with refjax.backend("numpy_ref"):
        want = _control_flow_results()
    with refjax.backend("xla"):
        got = _control_flow_results()
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def _shard_map_results(sharded):
    from refjax.core.transforms.shard_map import shard_map
    lax = refjax.lax
    mesh = refjax.make_mesh((2, 4), ("x", "y"))

    def body(a):
        return (lax.psum(a, "x"), lax.pmax(a, "y"), lax.pmin(a, "y"),
                lax.all_gather(a, "y", tiled=True), lax.ppermute(a, "x", [(0, 1), (1, 0)]),
                a * lax.axis_index("y").astype(np.float32),
                lax.psum_scatter(a, "y", scatter_dimension=1, tiled=True),
                lax.all_to_all(a, "y", 1, 1, tiled=True))

    xy, x_ = sh.P("x", "y"), sh.P("x", None)
    # all_gather's result is typed varying over "y" (as in JAX), so returning it replicated
    # over "y" needs check_vma=False; numpy_ref still checks the replication on the data
    f = shard_map(body, mesh=mesh, in_specs=xy, out_specs=(sh.P(None, "y"), x_, x_, x_) + (xy,) * 4,
                  check_vma=False)
    x = np.arange(64, dtype=np.float32).reshape(4, 16)
    x = refjax.device_put(x, sh.NamedSharding(mesh, xy)) if sharded else rnp.asarray(x)
    outs = list(f(x)) + list(refjax.jit(f)(x)) + [refjax.grad(lambda v: f(v)[0].sum())(x)]
    return [(np.asarray(o), o.sharding) for o in outs]


@pytest.mark.parametrize("sharded", [False, True])
def test_shard_map_collectives(sharded):
    """Values and layouts of every collective inside shard_map, eager, jit and grad."""
    with refjax.backend("numpy_ref"):
        want = _shard_map_results(sharded)
    with refjax.backend("xla"):
        got = _shard_map_results(sharded)
    for (g, gs), (w, ws) in zip(got, want):
        np.testing.assert_array_equal(g, w)
        assert gs == ws


# ---------------------------------------------------------------- coverage

DEDICATED = {"jit", "stop_gradient", "custom_jvp_call", "custom_vjp_call", "custom_lin",
             "sharding_constraint", "round", "integer_pow", "convert_element_type",
             "select_n", "clamp", "iota", "reduce_sum", "reduce_prod", "reduce_max",
             "reduce_min", "reduce_and", "reduce_or", "argmax", "argmin", "cumsum", "cumprod",
             "cummax", "cummin", "dot_general", "sort", "cond", "while", "scan", "shard_map",
             "psum", "pmax", "pmin", "all_gather", "ppermute", "axis_index", "reduce_scatter",
             "all_to_all", "pvary",
             # compared across backends by test_differential.py and, with JAX's documented
             # meaning, by test_shard_more.py (psum_invariant: by test_shard_map.py)
             "pbroadcast", "psum_invariant",
             # compared with JAX on both backends by test_debugging.py and test_checkpoint.py
             "debug_print", "debug_callback", "remat2", "name",
             # by test_debug_and_devices.py (the shardings inspected, against JAX)
             "inspect_sharding",
             # by test_xla_metadata.py (values and staged equations on both backends)
             "xla_metadata_value",
             # compared across backends by test_differential.py and test_gather.py
             "gather", "scatter-add", "scatter-mul", "scatter-min", "scatter-max", "scatter",
             # compared across backends by test_differential.py (their spec samples) and
             # test_lax_misc.py / test_special_numpy.py (programs, against JAX)
             "scatter-sub", "erfc", "bessel_i0e", "bessel_i1e", "igamma", "igammac",
             "igamma_grad_a", "random_gamma_grad", "regularized_incomplete_beta", "zeta",
             "bitcast_convert_type", "population_count", "clz", "mulhi", "complex", "fft",
             "top_k", "approx_top_k", "split", "stack", "unstack", "tile",
             "optimization_barrier", "rng_bit_generator", "rng_uniform", "ragged_all_to_all",
             # compared across backends by test_differential.py and test_linalg.py
             "cholesky", "cholesky_update", "lu", "lu_pivots_to_permutation", "geqrf",
             "householder_product", "ormqr", "qr", "symmetric_product", "eigh", "eig", "svd",
             "schur", "hessenberg", "tridiagonal", "triangular_solve", "tridiagonal_solve",
             "custom_linear_solve",
             # by test_differential.py, test_convolution.py, test_windowed.py and
             # test_select_and_scatter.py
             "select_and_scatter",
             "conv_general_dilated", "reduce_window", "reduce_window_sum", "reduce_window_max",
             "reduce_window_min", "select_and_gather_add", "select_and_scatter_add", "reduce",
             "reduce_xor", "reduce_precision", "cumlogsumexp",
             # compared with JAX on both backends by test_callbacks.py (and their specs)
             "pure_callback", "io_callback",
             # by test_custom_batching.py (programs, against JAX) and test_differential.py
             "custom_vmap_call",
             # by test_differential.py (its spec samples) and test_ragged_dot.py (against JAX)
             "ragged_dot_general",
             # by test_composite.py (programs, against JAX) and test_differential.py
             "composite",
             # by test_differential.py (their spec samples) and test_toplevel_more.py
             "empty", "linear_call",
             # by test_differential.py (its spec samples) and test_staging_as_jax.py (the
             # unused residual slots of cond's partial evaluation, against JAX)
             "empty2",
             # by test_differential.py (their spec samples) and test_key_reuse.py (on xla)
             "random_wrap", "random_unwrap",
             # and by test_checkify.py (programs, against JAX, on both backends) and its spec
             "check",
             # and by test_refs.py (programs, against JAX on both backends) and test_differential.py
             "new_ref", "get", "swap", "addupdate", "freeze", "empty_ref", "free_ref",
             # by test_device_sets.py (programs, against JAX on both backends) and
             # test_differential.py (its spec samples)
             "device_put",
             # by test_unreduced_loops.py (programs, against JAX on both backends) and
             # test_differential.py (their spec samples)
             "preduced", "reduced_vary_cast_p", "vary_unreduced_cast_p",
             # by test_unreduced_manual.py (programs, against JAX on both backends) and
             # test_differential.py (its spec samples)
             "unreduced_psum", "unreduced_reduce_scatter", "all_gather_reduced"}


def test_every_primitive_has_a_rule():
    assert missing_rules() == []


def test_every_primitive_is_compared():
    covered = {p.name for p, *_ in UNARY + BINARY} | DEDICATED
    covered |= {p.name for p, _, _ in _structural_cases(np.random.RandomState(0), F32)}
    assert sorted(set(all_primitives()) - covered) == []


# ---------------------------------------------------------------- arrays and layouts

def test_buffers_are_jax_arrays_and_convert_to_numpy():
    import jax
    with refjax.backend("xla"):
        x = rnp.asarray(np.arange(6, dtype=np.float32).reshape(2, 3))
        y = x * 2
    assert isinstance(y._buf, jax.Array)
    np.testing.assert_array_equal(np.asarray(y), np.arange(6).reshape(2, 3) * 2)
    assert y.devices() == {XLA.devices()[0]}


def test_put_copies_host_memory():
    host = np.ones(1024, np.float32)
    x = make_array(host, ShapedArray(host.shape, host.dtype), XLA)
    host[0] = 5.0
    assert np.asarray(x)[0] == 1.0


def test_devices_are_shared_with_numpy_ref():
    assert XLA.devices() == get_backend("numpy_ref").devices()
    assert all(a is b for a, b in zip(XLA.devices(), get_backend("numpy_ref").devices()))


@pytest.mark.parametrize("src,dst", [("numpy_ref", "xla"), ("xla", "numpy_ref")])
def test_array_of_another_backend_is_rejected(src, dst):
    with refjax.backend(src):
        x = rnp.asarray(np.ones(3, np.float32))
    with refjax.backend(dst), pytest.raises(ValueError, match="device_put"):
        x + x
    with refjax.backend(dst):
        moved = refjax.device_put(np.asarray(x))
        np.testing.assert_array_equal(np.asarray(moved + moved), 2 * np.ones(3))


def _layouts():
    mesh = refjax.make_mesh((2, 4), ("x", "y"))
    rows = sh.NamedSharding(mesh, sh.P("x", None))
    cols = sh.NamedSharding(mesh, sh.P(None, "y"))
    x = refjax.device_put(np.arange(32, dtype=np.float32).reshape(4, 8), rows)
    on3 = refjax.device_put(np.ones(3, np.float32), refjax.devices()[3])
    outs = [x, x * 2, x.sum(0), refjax.jit(lambda a: a @ a.T)(x),
            refjax.jit(lambda a: refjax.lax.with_sharding_constraint(a + 1, cols))(x),
            refjax.lax.with_sharding_constraint(x, cols), on3, on3 + 1]
    return [(o.sharding, [(s.device, s.index, s.replica_id, s.data.tolist())
                          for s in o.addressable_shards]) for o in outs]


def test_layouts_match_numpy_ref():
    with refjax.backend("numpy_ref"):
        want = _layouts()
    with refjax.backend("xla"):
        got = _layouts()
    for g, w in zip(got, want):
        assert g == w


def test_float0_tangents():
    """Integer inputs get float0 cotangents, eagerly and through jit; they stay NumPy."""
    def f(x, n):
        return (x * n.astype(np.float32)).sum()
    for b in ("numpy_ref", "xla"):
        with refjax.backend(b):
            x, n = rnp.asarray(np.ones(2, np.float32)), rnp.asarray(np.int32(3))
            for grad in (refjax.grad(f, (0, 1), allow_int=True),
                         refjax.jit(refjax.grad(f, (0, 1), allow_int=True))):
                gx, gn = grad(x, n)
                np.testing.assert_array_equal(np.asarray(gx), [3.0, 3.0])
                assert np.asarray(gn).dtype == FLOAT0 and np.asarray(gn).shape == ()


# ---------------------------------------------------------------- transformations

def _mlp_loss(params, x, y):
    h = rnp.tanh(x @ params["w1"] + params["b1"])
    return rnp.mean((h @ params["w2"] - y) ** 2)


def _mlp_results():
    rng = np.random.RandomState(0)
    params = {"w1": rng.randn(3, 8).astype(np.float32), "b1": np.zeros(8, np.float32),
              "w2": rng.randn(8, 2).astype(np.float32)}
    params = {k: rnp.asarray(v) for k, v in params.items()}
    x, y = rnp.asarray(rng.randn(5, 3).astype(np.float32)), rnp.asarray(
        rng.randn(5, 2).astype(np.float32))
    grads = refjax.grad(_mlp_loss)(params, x, y)
    jit_grads = refjax.jit(refjax.grad(_mlp_loss))(params, x, y)
    per_example = refjax.vmap(_mlp_loss, in_axes=(None, 0, 0))(params, x, y)
    jvp_out = refjax.jvp(lambda w: _mlp_loss({**params, "w1": w}, x, y), (params["w1"],),
                         (rnp.ones_like(params["w1"]),))
    leaves = [grads[k] for k in sorted(grads)] + [jit_grads[k] for k in sorted(jit_grads)]
    return [np.asarray(v) for v in leaves + [per_example, *jvp_out,
                                             refjax.jit(_mlp_loss)(params, x, y)]]


def test_mlp_grad_vmap_jit_agree():
    with refjax.backend("numpy_ref"):
        want = _mlp_results()
    with refjax.backend("xla"):
        got = _mlp_results()
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


def test_custom_jvp_and_vjp():
    @refjax.custom_jvp
    def f(x):
        return rnp.sin(x)
    f.defjvp(lambda primals, tangents: (f(primals[0]), 2.0 * tangents[0]))

    @refjax.custom_vjp
    def g(x):
        return x * x
    g.defvjp(lambda x: (g(x), x), lambda x, ct: (3.0 * ct,))

    def results():
        x = rnp.asarray(np.float32(0.5))
        return [float(v) for v in (f(x), refjax.grad(f)(x), refjax.jit(refjax.grad(f))(x),
                                    g(x), refjax.grad(g)(x), refjax.jit(refjax.grad(g))(x))]
    with refjax.backend("numpy_ref"):
        want = results()
    with refjax.backend("xla"):
        got = results()
        with pytest.raises(TypeError):
            refjax.jvp(g, (rnp.asarray(np.float32(0.5)),), (rnp.asarray(np.float32(1.0)),))
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_stop_gradient_eager_and_jit():
    def results():
        x = rnp.asarray(np.float32(1.5))
        loss = lambda v: v * refjax.lax.stop_gradient(v)  # noqa: E731
        return [float(refjax.grad(loss)(x)), float(refjax.jit(refjax.grad(loss))(x))]
    with refjax.backend("numpy_ref"):
        want = results()
    with refjax.backend("xla"):
        assert results() == want


def test_x64_program_returning_only_a_literal_keeps_float64():
    """round's zero derivative stages a jit whose body just returns a float64 literal; the
    xla backend ran it without x64 and JAX narrowed it to float32 (then add_any failed)."""
    import jax
    import jax.numpy as jjnp
    f = lambda a: rnp.round(a) + a  # noqa: E731
    refjax.config.update("jax_enable_x64", True)
    try:
        with jax.enable_x64(True):
            want = jax.vmap(jax.grad(lambda a: jjnp.round(a) + a))(np.array([0.5, 2.0]))
        with refjax.backend("xla"):
            got = refjax.vmap(refjax.grad(f))(np.array([0.5, 2.0]))
            scalar = refjax.grad(f)(np.float64(0.5))
    finally:
        refjax.config.update("jax_enable_x64", False)
    assert got.dtype == want.dtype == np.float64 and scalar.dtype == np.float64
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_compile_is_cached_per_jaxpr():
    with refjax.backend("xla"):
        closed = refjax.make_jaxpr(lambda a: a + 1)(np.float32(1))
        assert XLA.compile(closed) is XLA.compile(closed)
        x = rnp.asarray(np.float32(1))
        assert float(np.asarray(XLA.compile(closed)([x._buf])[0])) == 2.0


def test_compile_cache_tells_constants_from_arguments():
    """Two jaxprs equal but for one binder being a constant in the first and an argument in
    the second must not share a compiled program."""
    with refjax.backend("xla"):
        first = refjax.jit(lambda: refjax.numpy.asarray(np.ones(3, np.float32)) * 2.0)()
        second = refjax.jit(lambda c: c * 2.0)(refjax.numpy.full((3,), 5.0))
    np.testing.assert_array_equal(np.asarray(first), np.full(3, 2.0, np.float32))
    np.testing.assert_array_equal(np.asarray(second), np.full(3, 10.0, np.float32))


def test_integer_division_by_a_constant_zero_does_not_kill_the_process():
    """XLA folds constant operands with the host's integer division, whose trap (SIGFPE)
    kills the process: JAX 0.10.2 dies on `jit(lambda: lax.div(jnp.int32(3), 0))()` and on
    `jnp.var` of an empty array with an integer dtype. refjax's xla backend gives XLA's
    values, as numpy_ref computes them (x / 0 is -1, x % 0 is x, INT_MIN / -1 is INT_MIN)."""
    lowest = np.int32(np.iinfo(np.int32).min)

    def program():
        lax = refjax.lax
        return (lax.div(rnp.int32(3), np.int32(0)), lax.rem(rnp.int32(3), np.int32(0)),
                lax.div(rnp.int32(lowest), np.int32(-1)), lax.rem(rnp.int32(lowest), np.int32(-1)),
                lax.div(rnp.uint8(7), np.uint8(0)), rnp.var(rnp.ones((0,)), dtype=rnp.int32))

    with refjax.backend("xla"):
        ours = refjax.jit(program)()
    with refjax.backend("numpy_ref"):
        oracle = refjax.jit(program)()
    assert [v.item() for v in ours[:5]] == [-1, 3, int(lowest), 0, 255]
    assert [v.item() for v in ours[:5]] == [v.item() for v in oracle[:5]]
    assert np.isnan(ours[5]) and np.isnan(oracle[5])
