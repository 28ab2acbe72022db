"""Staged programs as JAX stages them: `str(make_jaxpr(f)(...))` and the output types of
programs on an Explicit mesh (jnp.*_like of traced values typed as their prototype, grad
through scan, fori_loop and cond hoisting loop-invariant constants such as the `reshard 1.0`
of tanh's derivative out of the loop), jnp.array of traced scalars, and common jnp functions,
each compared with real JAX's text (8 CPU devices)."""
import contextlib

import jax as real_jax
import numpy as np
import pytest

import refjax

pytestmark = pytest.mark.backends("numpy_ref")  # printing: one backend


def staged(lib, program, mesh=(2,)):
    """{case: (jaxpr text, output types)} of `program(lib)`'s cases {name: (f, args)} on an
    Explicit mesh with axes X (and Y) (no mesh: None), or the class of the error a case
    raises."""
    out = {}
    with _explicit_mesh(lib, mesh):
        for name, (f, args) in program(lib).items():
            try:
                closed = lib.make_jaxpr(f)(*args)
                out[name] = (str(closed), [str(a) for a in closed.out_avals])
            except Exception as e:  # the class JAX raises is part of what is compared
                out[name] = type(e).__name__
    return out


def _explicit_mesh(lib, shape):
    if shape is None:
        return contextlib.nullcontext()
    explicit = (lib.sharding.AxisType.Explicit,) * len(shape)
    return lib.set_mesh(lib.make_mesh(shape, ("X", "Y")[:len(shape)], axis_types=explicit))


def assert_stages_as_jax(program, mesh=(2,)):
    ours, theirs = staged(refjax, program, mesh), staged(real_jax, program, mesh)
    for name in theirs:
        assert ours[name] == theirs[name], name


def _put(lib, shape, spec, dtype=np.float32):
    x = (np.arange(int(np.prod(shape))).reshape(shape) % 7 - 3).astype(dtype) / 4
    return lib.device_put(x, lib.P(*spec))


# ---------------------------------------------------------------- *_like of traced values

def _like_cases(lib):
    jnp, P = lib.numpy, lib.P
    x = _put(lib, (4, 2), ("X", None))
    replicated = lib.NamedSharding(lib.sharding.get_mesh(), P())
    cases = {
        "zeros_like": jnp.zeros_like, "ones_like": jnp.ones_like,
        "empty_like": jnp.empty_like, "full_like": lambda x: jnp.full_like(x, 3.0),
        "lax.full_like": lambda x: lib.lax.full_like(x, 2),
        "dtype": lambda x: jnp.zeros_like(x, dtype=jnp.int32),
        "shape": lambda x: jnp.ones_like(x, shape=(4, 6)),
        "scalar": lambda x: jnp.zeros_like(x.sum()),
        "weak scalar": lambda x: jnp.ones_like(x[0, 0] * 0 + 1.0),
        "out_sharding": lambda x: jnp.zeros_like(x, out_sharding=P(None, "X")),
        "full_like out_sharding": lambda x: jnp.full_like(x, jnp.ones(2), out_sharding=P("X")),
        "device": lambda x: jnp.empty_like(x, device=replicated),
        "grad": lib.grad(lambda x: (jnp.ones_like(x) * x).sum()),
    }
    return {name: (f, (x,)) for name, f in cases.items()}


def test_like_functions_of_traced_values_are_typed_as_jax_types_them():
    """jnp.zeros_like/ones_like/full_like/empty_like and lax.full_like of a traced x on an
    Explicit mesh: one broadcast typed as x (refjax's were replicated), or as out_sharding=
    asks (refjax's: a broadcast, then a reshard); untyped with shape= or device= given."""
    ours = staged(refjax, _like_cases)
    assert ours["zeros_like"][1] == ["float32[4@X,2]"]
    assert ours["out_sharding"][0].count("\n") == 0  # one equation, no reshard
    assert_stages_as_jax(_like_cases)


def test_like_with_a_partition_spec_as_device_is_a_type_error():
    """device=P() is refused with a TypeError naming the argument, traced or not (JAX raises
    AttributeError: 'P' object has no attribute '_is_concrete')."""
    mesh = refjax.make_mesh((2,), ("X",), axis_types=(refjax.sharding.AxisType.Explicit,))
    with refjax.set_mesh(mesh):
        x = _put(refjax, (4, 2), ("X", None))
        for run in (lambda f: f(x), lambda f: refjax.make_jaxpr(f)(x)):
            with pytest.raises(TypeError, match="device= expects a Device or a Sharding"):
                run(lambda x: refjax.numpy.full_like(x, 1.5, device=refjax.P()))


# ---------------------------------------------------------------- jnp.array of traced values

def _array_cases(lib):
    jnp, f32 = lib.numpy, np.float32
    a, b, v = f32(1), f32(2), np.ones(3, f32)
    cases = {
        "python scalars": (lambda a, b, c: jnp.array([a, b, c]), (1.0, 2.0, 3.0)),
        "scalars": (lambda a, b: jnp.array([a, b]), (a, b)),
        "mixed with numbers": (lambda a, b: jnp.array([a, 2.0, b, 3]), (a, b)),
        "ints": (lambda a: jnp.array([a, 2]), (np.int32(1),)),
        "int and float": (lambda a, b: jnp.array([a, b]), (np.int32(1), b)),
        "arrays": (lambda a, b: jnp.array([a, b]), (v, v)),
        "nested": (lambda a, b: jnp.array([[a, b], [b, a]]), (a, b)),
        "nested arrays": (lambda a, b: jnp.array([[a, b], (b, a)]), (v[:2], v[1:])),
        "dtype": (lambda a, b: jnp.array([a, b], dtype=jnp.int32), (a, b)),
        "asarray": (lambda a, b: jnp.asarray((a, b)), (a, b)),
        "one": (lambda a: jnp.array([a]), (a,)),
        "weak": (lambda a: jnp.array([a, a]), (1.0,)),
        "numpy scalar": (lambda a: jnp.array([a, np.float32(2)]), (a,)),
        "seventeen": (lambda a: jnp.array([a] * 17), (a,)),
        "bools": (lambda a, b: jnp.array([a, b]), (True, False)),
        "stack": (lambda a, b: jnp.stack([a, b], axis=1), (v, v)),
        "hstack": (lambda a, b: jnp.hstack([a, b]), (v, v)),
        "hstack scalars": (lambda a, b: jnp.hstack([a, b]), (a, b)),
        "vstack": (lambda a, b: jnp.vstack([a, b]), (v, v)),
        "dstack": (lambda a, b: jnp.dstack([a, b]), (v, v)),
        "column_stack": (lambda a, b: jnp.column_stack([a, b]), (v, v)),
        "atleast_3d": (lambda a, b: jnp.atleast_3d(a, b), (a, v)),
    }
    return cases


def test_array_of_traced_values_stages_as_jax():
    """jnp.array/asarray of sequences holding tracers: each element converted to the common
    dtype, broadcast to a leading dimension and concatenated (refjax staged one `stack` and
    a conversion after it), nested lists level by level, wide lists in groups of 16; hstack,
    vstack, dstack and column_stack through the jitted atleast_1d/2d/3d (refjax: reshapes)."""
    text = staged(refjax, _array_cases, mesh=None)["python scalars"][0]
    assert "concatenate[dimension=0] e g i" in text and "stack[" not in text
    assert_stages_as_jax(_array_cases, mesh=None)


# ---------------------------------------------------------------- grad through loops

def _loop_cases(lib):
    jnp, lax = lib.numpy, lib.lax
    ws = _put(lib, (3, 4, 4), ())
    x = _put(lib, (2, 4), ("X", None))
    w, x0, xs = _put(lib, (4, 4), ()), _put(lib, (4,), ()), _put(lib, (3, 4), ())

    def layers(ws, x):  # the page's predict/loss3: tanh's `reshard 1.0` is hoisted
        return jnp.sum(lax.scan(lambda x, w: (jnp.tanh(x @ w), None), x, ws)[0] ** 2)

    def fori(ws, x):  # a scan whose known body also slices the consts
        return jnp.sum(lax.fori_loop(0, 3, lambda i, c: jnp.tanh(c @ ws[i]), x))

    def while_(ws, x):
        return lax.while_loop(lambda c: c[0] < 3,
                              lambda c: (c[0] + 1, jnp.tanh(c[1] @ ws[c[0]])), (0, x))

    def closes_over(w, x0):  # a const, ys, and an accumulated const cotangent
        def body(c, x):
            h = jnp.sin(c @ w) + x * 2.0
            return h, jnp.cos(h).sum()
        c, ys = lax.scan(body, x0, xs)
        return c.sum() + ys.sum()

    def invariant(w, x0):  # a residual made of consts alone: hoisted, not stacked
        return lax.scan(lambda c, x: (c * jnp.sum(w ** 2) + jnp.log1p(x * x), None),
                        x0, xs)[0].sum()

    return {
        "scan": (lib.grad(layers), (ws, x)),
        "scan argnums": (lib.grad(layers, argnums=(0, 1)), (ws, x)),
        "fori_loop": (lib.grad(fori), (ws, x)),
        "while": (while_, (ws, x)),
        "consts": (lib.grad(closes_over, argnums=(0, 1)), (w, x0)),
        "consts vjp": (lambda w, x: lib.vjp(lambda x: closes_over(w, x), x)[1](1.0), (w, x0)),
        "invariant residual": (lib.grad(invariant, argnums=(0, 1)), (w, x0)),
        "jvp": (lambda w, x: lib.jvp(invariant, (w, x), (w, x)), (w, x0)),
        "linearize": (lambda w, x: lib.linearize(closes_over, w, x)[1](w, x), (w, x0)),
    }


def test_grad_through_loops_stages_as_jax():
    """grad through scan and fori_loop on Explicit axes as JAX stages it (its
    _scan_known_hoisting): equations of the known body reading only consts (tanh's
    derivative's `reshard 1.0`, a function of closed-over weights) run once before the loop
    and enter it as consts, in JAX's order; residuals among them are not stacked; the zero
    tangent of a carry is made in the backward pass; a const's cotangent is summed as it is
    made; squeeze transposes to broadcast_in_dim; the linear loop's body binds residuals to
    variables of its own. refjax staged them inside the loop."""
    text = staged(refjax, _loop_cases)["scan"][0]
    assert text.index("c:f32[] = reshard 1.0:f32[]") < text.index("= scan[")
    assert_stages_as_jax(_loop_cases)


# ---------------------------------------------------------------- jnp functions JAX jits

def _jnp_cases(lib):
    jnp = lib.numpy
    x = np.arange(12, dtype=np.float32).reshape(3, 4) / 7 - 0.5
    v = np.arange(5, dtype=np.float32) - 2.0
    cases = {
        "diff": (jnp.diff, (v,)),
        "diff n axis": (lambda x: jnp.diff(x, n=2, axis=0, append=x[:1]), (x,)),
        "abs": (jnp.abs, (v,)),
        "relu": (lib.nn.relu, (x,)),
        "fmax": (jnp.fmax, (v, v)),
        "fmin": (jnp.fmin, (v, v[::-1])),
        "nan_to_num": (jnp.nan_to_num, (v,)),
        "count_nonzero": (lambda x: jnp.count_nonzero(x, axis=1), (x,)),
        "heaviside": (jnp.heaviside, (v, np.float32(0.5))),
        "logaddexp": (jnp.logaddexp, (v, v[::-1])),
        "logaddexp2": (jnp.logaddexp2, (v, v[::-1])),
        "floor_divide": (jnp.floor_divide, (x, np.float32(0.3))),
        "mod": (jnp.mod, (x, np.float32(0.3))),
        "clip": (lambda x: jnp.clip(x, -0.2, 0.3), (x,)),
        "python floats": (lambda x: x * np.pi + 0.1, (x,)),
        "square": (lambda x: jnp.square(x) + lib.grad(lambda x: jnp.square(x).sum())(x), (x,)),
        "var": (jnp.var, (x,)),
        "std": (lambda x: jnp.std(x, axis=[0], ddof=1, keepdims=True), (x,)),
        "var mean": (lambda x: jnp.var(x.astype(int), axis=1, mean=1.0), (x,)),
        "outer": (jnp.outer, (v, v)),
        "broadcast ranks": (lambda x, v: x[:, :1] * v[:4] - x[:1] / v[1:], (x, v)),
        "split": (lambda x: jnp.split(x, [1, 3], axis=1) + jnp.array_split(x, 2), (x,)),
        "hsplit": (lambda x: jnp.hsplit(x, 2), (x,)),
        "nn": (lambda v: [f(v) for f in (lib.nn.silu, lib.nn.elu, lib.nn.leaky_relu, lib.nn.relu6,
                                        lib.nn.hard_tanh, lib.nn.celu, lib.nn.selu,
                                        lib.nn.soft_sign)], (v,)),
        "glu": (lib.nn.glu, (x,)),
        "gelu": (lambda v: (lib.nn.gelu(v), lib.nn.gelu(v, approximate=False)), (v,)),
        "nn jits": (lambda x: (lib.nn.log_softmax(x), lib.nn.standardize(x, axis=0),
                               lib.nn.one_hot(jnp.arange(3), 4, axis=0)), (x,)),
        "cumulative": (lambda v: (jnp.cumulative_sum(v, include_initial=True),
                                  jnp.cumulative_prod(v)), (v,)),
        "softplus": (lambda v: (lib.nn.softplus(v), lib.nn.log_sigmoid(v),
                                jnp.logaddexp2(v[:, None], v[:3])), (v,)),
        "logsumexp": (lambda x: (lib.nn.logsumexp(x), lib.nn.logsumexp(x, axis=1, b=x[0],
                                                                       keepdims=True)), (x,)),
        "conj": (jnp.conj, (v,)),
        "around": (lambda v: jnp.around(v, 1), (v,)),
        "append rollaxis": (lambda x: jnp.rollaxis(jnp.append(x, x, axis=0), 1), (x,)),
        "matvec": (jnp.matvec, (x, v[:4])),
        "angle ptp": (lambda v: jnp.angle(v) + jnp.ptp(v), (v,)),
        "sorts": (lambda v: (jnp.sort_complex(v), jnp.lexsort((v, -v))), (v,)),
        "linspace": (lambda a: jnp.linspace(a, 1.0, 5), (np.float32(0),)),
        "spaces": (lambda: (jnp.linspace(0, 1, 4, endpoint=False), jnp.logspace(0, 1, 5),
                            jnp.geomspace(1, 10, 5)), ()),
        "log2 log10": (lambda v: jnp.log2(v) + jnp.log10(v), (v,)),
        "trunc deg2rad": (lambda v: jnp.trunc(v) + jnp.deg2rad(v) + jnp.rad2deg(v), (v,)),
        "fmod modf": (lambda v: (jnp.fmod(v, 0.7), jnp.modf(v)), (v,)),
        "signs": (lambda v: (jnp.signbit(v), jnp.copysign(v, -v)), (v,)),
        "kron": (jnp.kron, (v[:2], v[:3])),
        "power int": (jnp.power, (v, np.int32(3))),
        "cross": (lambda x: jnp.cross(x[:, :3], x[0, 1:]), (x,)),
        "select": (lambda x: jnp.select([x > 0, x < -0.3], [x, -x], 0.5), (x,)),
        "rot90": (lambda x: jnp.rot90(x, 3), (x,)),
        "resize": (lambda v: jnp.resize(v, (2, 4)), (v,)),  # JAX refuses a list (unhashable)
        "partition vander": (lambda v: (jnp.partition(v, 2), jnp.vander(v, 3),
                                        jnp.trapezoid(v, dx=0.5)), (v,)),
        "sinc": (jnp.sinc, (v,)),
        "hypot isclose": (lambda v: (jnp.hypot(v, v[::-1]), jnp.isclose(v, v[::-1]),
                                     jnp.allclose(v, v, equal_nan=True)), (v,)),
        "nan reductions": (lambda x: (jnp.nansum(x), jnp.nanprod(x, axis=0, where=x > 0),
                                      jnp.nanmax(x, axis=1, keepdims=True, initial=-1.0),
                                      jnp.nanmin(x), jnp.nanmean(x, axis=(0, 1))), (x,)),
        "nanarg nancum": (lambda x: (jnp.nanargmax(x), jnp.nanargmin(x, axis=1, keepdims=True),
                                     jnp.nancumsum(x), jnp.nancumprod(x, axis=0)), (x,)),
        "nanvar nanstd": (lambda x: (jnp.nanvar(x), jnp.nanstd(x, axis=1, ddof=1)), (x,)),
        "roll": (lambda x: (jnp.roll(x, (1, -1), axis=(0, 1)), jnp.roll(x, 2)), (x,)),
        "slice_in_dim fftshift": (lambda v: (lib.lax.slice_in_dim(v, 1, 4), jnp.fft.fftshift(v),
                                             jnp.resize(v, 3)), (v,)),
        "ufunc names": (lambda v: (jnp.divide(v, 2.0), jnp.degrees(v), jnp.radians(v),
                                   jnp.arccosh(v), jnp.rint(v), jnp.i0(v)), (v,)),
        "logical": (lambda v: (jnp.logical_and(v, v[::-1]), jnp.logical_or(v, 1.0),
                               jnp.logical_xor(v, v), jnp.logical_not(v), jnp.isreal(v),
                               jnp.iscomplex(v)), (v,)),
        "convolve correlate": (lambda v: (jnp.convolve(v, v[:3]), jnp.correlate(
            v[:2], v, mode="full"), jnp.convolve(v, v[:2], mode="same")), (v,)),
        "quantiles": (lambda x: (jnp.quantile(x, 0.3), jnp.median(x, axis=1, keepdims=True),
                                 jnp.percentile(x, np.array([10., 90.]), axis=0,
                                                method="nearest")), (x,)),
        "cov": (lambda x: (jnp.cov(x), jnp.cov(x, rowvar=False, fweights=np.arange(3))), (x,)),
        "pad": (lambda x: [jnp.pad(x, ((1, 2), (0, 1)), mode=m)
                           for m in ("constant", "edge", "wrap", "empty")], (x,)),
        "polyadd ediff1d": (lambda v: (jnp.polyadd(v[:3], v), jnp.ediff1d(v)), (v,)),
        "scatters": (lambda v: (v.at[1].mul(2.0), v.at[2].min(0.0), v.at[3].set(1.0),
                                v.astype(int).at[1].add(2)), (v,)),
        # one scatter-add each (JAX shares one update_jaxpr among several)
        "bincount": (lambda v: (jnp.bincount(jnp.arange(5) % 3, v, length=4),
                                jnp.histogram_bin_edges(v, 4)), (v,)),
        "nonzero": (lambda v: jnp.nonzero(v, size=3), (v,)),
        "argwhere": (lambda v: jnp.argwhere(v, size=2), (v,)),
        "tril_indices": (lambda: jnp.tril_indices(3, 1), ()),
        "triu_indices": (lambda: jnp.triu_indices(2, -1, 4), ()),
        "flatnonzero": (lambda v: jnp.flatnonzero(v.reshape(1, 5), size=3, fill_value=9), (v,)),
        "trace indices": (lambda x: (jnp.trace(x), jnp.trace(x[None], axis1=2, dtype=jnp.int32),
                                     jnp.indices((2, 3)), jnp.indices((2, 3), sparse=True)), (x,)),
        "nan quantiles": (lambda x: (jnp.nanquantile(x, 0.3, axis=(0, 1), keepdims=True),
                                     jnp.nanmedian(x, axis=1),
                                     jnp.nanpercentile(x, np.array([5., 50.]), axis=0,
                                                       keepdims=True)), (x,)),
    }
    return {name: (lib.jit(f), args) for name, (f, args) in cases.items()}


def test_jnp_functions_stage_in_jits_of_their_names_as_jax():
    """diff, fmax, fmin, nan_to_num, count_nonzero and heaviside in a jit of their own
    (refjax inlined them), jnp.abs and jnp.mod named so (refjax: absolute, remainder),
    nn.relu's custom_jvp holding a jit, logaddexp's custom_jvp and rule named as JAX's,
    heaviside's scalars inline, floor_divide rounding as lax.round's default, jnp.square
    binding lax's square (refjax: integer_pow), with its derivative; a Python
    float written inline prints its own digits (refjax printed its float32 value's); roll in
    JAX's jit `_roll_static`, lax.slice_in_dim printing its strides (1,) (refjax: None);
    divide, degrees and radians named so (refjax: true_divide, rad2deg, deg2rad), arccosh,
    rint, i0, isreal and iscomplex in jits of their own; the logical functions comparing with
    an inline 0 (refjax broadcast it); convolve and correlate one conv_general_dilated in
    JAX's jit `_conv` (refjax: a matrix of sliding windows and a dot); quantile, percentile,
    median and their nan forms as JAX's _quantile (a gather at the clamped floor and ceiling
    of each position, or indexing with iotas past the NaNs; refjax took along a last axis);
    cov in a jit of its own through average(returned=True); pad in JAX's jit `_pad` taking
    constant_values (its widths NumPy integers, printed so), mode empty concatenating;
    polyadd, polysub and ediff1d in jits; the scatters printing JAX's update_consts and
    update_jaxpr (refjax printed neither; JAX shares one jaxpr among the scatters of a
    combiner and dtype, pulled to the top, refjax prints each inline); bincount as JAX's
    `.at[clip(x, 0)].add(weights, mode="drop")` into zeros (refjax: a one-hot sum), nonzero,
    argwhere and flatnonzero through it (JAX's cumsum of the binned running count);
    histogram_bin_edges taking the range's ptp for each edge; trace masking with an eye in a
    jit of its own (refjax summed a strided slice; an offset given is JAX's operand, refjax's
    static); indices broadcasting 1-d iotas; tril_indices and triu_indices as nonzero of
    tril/triu(ones) (refjax: NumPy's constants)."""
    assert "name=diff" in staged(refjax, _jnp_cases, mesh=None)["diff"][0]
    assert_stages_as_jax(_jnp_cases, mesh=None)


def test_jnp_broadcasting_and_reductions_stage_as_jax():
    """Operands of one rank are left to lax, which broadcasts their size-1 dimensions (refjax
    broadcast each to the full shape: a reshape and a broadcast_in_dim per operand), as in
    jnp.outer and var's centring; var and std are jits `_var`/`_std` taking the correction as
    a traced int and ending in `_where`; jnp.split binds lax.split with NumPy-int sizes."""
    ours = staged(refjax, _jnp_cases, mesh=None)
    assert "mul d e" in ours["outer"][0] and "reshape" not in ours["outer"][0]
    assert "name=_var" in ours["var"][0] and "split[axis=0 sizes=(np.int64(2), np.int64(1))]" in ours["split"][0]


# ---------------------------------------------------------------- cond and scan under AD, vmap

def _control_flow_cases(lib):
    jnp, lax = lib.numpy, lib.lax
    xs = np.arange(6, dtype=np.float32).reshape(3, 2) / 5
    w = np.full(2, 0.5, np.float32)

    def cnd(p, x, w):
        return lax.cond(p, lambda x, w: (jnp.sin(x) * w, x * 2.0),
                        lambda x, w: (jnp.cos(x) + w, x), x, w)

    def total(outs):
        return sum(o.sum() for o in outs)

    def scan_sin(c, xs, reverse=False):
        return lax.scan(lambda c, x: (jnp.sin(c) * x, c), c, xs, reverse=reverse)

    return {
        "cond grad": (lib.grad(lambda x, w: total(cnd(True, x, w)), argnums=(0, 1)), (w, w)),
        "cond vjp": (lambda p, x, w: lib.vjp(lambda x: cnd(p, x, w), x)[1]((w, w)), (True, w, w)),
        "cond linearize": (lambda p, x, w: lib.linearize(lambda x: cnd(p, x, w), x)[1](x),
                           (True, w, w)),
        "switch grad": (lambda i, x: lib.grad(lambda x: lax.switch(
            i, [jnp.sin, jnp.cos, lambda x: x * x], x).sum())(x), (1, w)),
        "scan grad reverse": (lib.grad(lambda c, xs: scan_sin(c, xs, True)[0].sum()), (w, xs)),
        "scan in jit grad": (lib.grad(lib.jit(lambda c, xs: total(scan_sin(c, xs)))), (w, xs)),
        "scan in cond grad": (lib.grad(lambda c, xs: lax.cond(
            True, lambda c: lax.scan(lambda c, x: (jnp.sin(c) * x, None), c, xs)[0],
            lambda c: c, c).sum()), (w, xs)),
        "vmap grad scan": (lib.vmap(lib.grad(lambda c, xs, w: lax.scan(
            lambda c, x: (jnp.sin(c * w) + x, c), c, xs)[0].sum()), in_axes=(0, None, None)),
            (xs, xs, w)),
        "vmap scan": (lib.vmap(lambda c, xs: lax.scan(lambda c, x: (c * x, c + x), c, xs),
                               in_axes=(0, None)), (xs, xs)),
        "cond in scan grad": (lib.grad(lambda c, xs: lax.scan(lambda c, x: (lax.cond(
            x[0] > 0.2, jnp.sin, jnp.cos, c) * x, None), c, xs)[0].sum()), (w, xs)),
        "remat in scan grad": (lib.grad(lambda c, xs: lax.scan(lib.checkpoint(
            lambda c, x: (jnp.sin(c) * x, None)), c, xs)[0].sum()), (w, xs)),
    }


def test_cond_and_scan_under_transformations_stage_as_jax():
    """cond's partial evaluation shares residual slots among branches by type (JAX's
    _merge_branch_residuals: two branches with one and three f32[2] residuals have three
    slots, not four) and fills a branch's unused slots with `empty2` broadcasts; a partially
    evaluated scan takes its forwarded xs and stacked residuals in the order its body made
    them; vmap of an elementwise operation on a batched and an unbatched operand gives the
    unbatched one a leading 1 (np.int64 dimensions) and lets the operation broadcast it. The
    bodies of a scan's partial evaluation lose their dead code (a cond's unused `empty2`
    fillers, what a checkpointed body recomputes) as JAX's linearize_jaxpr drops it."""
    text = staged(refjax, _control_flow_cases, mesh=None)["cond grad"][0]
    assert text.splitlines()[1].count(":f32[2]") == 5  # 2 outputs and 3 residual slots
    assert "empty2[dtype=float32 memory_space=MemorySpace.Device]" in text
    assert_stages_as_jax(_control_flow_cases, mesh=None)


def test_sinc_derivatives_at_zero_are_jax_s():
    """jnp.sinc's value at 0 comes from JAX's custom_jvp `_sinc_maclaurin`, whose k-th
    derivative is the Maclaurin series' k-th term: the derivative of order 2n at 0 is
    (-1)**n pi**(2n) / (2n + 1) (hand-computed; refjax's second derivative there was 0), and
    the fourth, through jits of float0 cotangents of the nondifferentiable order, no longer
    fails."""
    fs = [refjax.numpy.sinc]
    for _ in range(4):
        fs.append(refjax.grad(fs[-1]))
    np.testing.assert_allclose([float(f(0.0)) for f in fs[1:]],
                               [0.0, -np.pi ** 2 / 3, 0.0, np.pi ** 4 / 5], rtol=1e-6)
