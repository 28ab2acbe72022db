"""out_sharding= and device= of jnp's creation functions, jnp.array/asarray, jax.random's
samplers and jax.nn.initializers, compared with real JAX 0.10.2 on 8 CPU devices: values,
types (jax.typeof, which on Explicit axes carries the sharding), shardings and layouts shard
by shard, eagerly and under jit; and JAX's errors for what JAX refuses."""
import inspect
import re

import jax as real_jax

real_jax.config.update("jax_num_cpu_devices", 8)

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from jax_recordings import on_jax  # noqa: E402

import refjax  # noqa: E402

pytestmark = pytest.mark.backends("numpy_ref", "xla")

EXPLICIT, AUTO = "explicit", "auto"


def mesh(lib, kind=EXPLICIT, shape=(4, 2), names=("x", "y")):
    """The same mesh in refjax or JAX (make_mesh picks the same devices in both)."""
    types = (lib.sharding.AxisType.Explicit if kind == EXPLICIT else
             lib.sharding.AxisType.Auto,) * len(shape)
    return lib.make_mesh(shape, names, axis_types=types)


def layout(a):
    """(device id, index slices as (start, stop) pairs), by device id."""
    return sorted((s.device.id, tuple(sl.indices(d)[:2] for sl, d in zip(s.index, a.shape)))
                  for s in a.addressable_shards)


def described(a):
    """What is compared with JAX: the value, the type's text, the sharding's kind and spec
    (or device), and the layout."""
    s = a.sharding
    where = s.spec if hasattr(s, "spec") else sorted(d.id for d in s.device_set)
    return np.asarray(a), str(refjax.typeof(a) if isinstance(a, refjax.Array) else
                              real_jax.typeof(a)), type(s).__name__, str(where), layout(a)


def assert_same(ours, theirs, rtol=0.0, name="", atol=0.0):
    """`ours` (an array) is described as JAX's (`theirs`, a description) says."""
    (v1, *rest1), (v2, *rest2) = described(ours), theirs
    assert rest1 == rest2, name
    assert v1.dtype == v2.dtype, name
    np.testing.assert_allclose(v1, v2, rtol=rtol, atol=atol, err_msg=name)


def run_both(call, kind=EXPLICIT, jit=False):
    """call(lib) under jax.set_mesh(the (4, 2) mesh): refjax's result and the description of
    JAX's."""
    def run(lib):
        with lib.set_mesh(mesh(lib, kind)):
            return lib.jit(lambda: call(lib))() if jit else call(lib)
    return both_described(run)


def both_described(call):
    """call(refjax), and the description of call(real JAX) (recorded: jax_recordings.py)."""
    return call(refjax), on_jax(lambda lib: described(call(lib)))


def _named(lib, *spec):
    return lib.NamedSharding(mesh(lib), lib.P(*spec))


CREATION = {
    "zeros P": lambda lib: lib.numpy.zeros((8, 4), out_sharding=lib.P("x", "y")),
    "ones int": lambda lib: lib.numpy.ones((8, 4), lib.numpy.int32, out_sharding=lib.P("y")),
    "empty two axes": lambda lib: lib.numpy.empty((8,), out_sharding=lib.P(("x", "y"))),
    "full weak": lambda lib: lib.numpy.full((8, 4), 3, out_sharding=lib.P(None, "y")),
    "full_like": lambda lib: lib.numpy.full_like(lib.numpy.ones((8, 2)), 2.5,
                                                 out_sharding=lib.P("x")),
    "zeros_like shape": lambda lib: lib.numpy.zeros_like(lib.numpy.ones(3), shape=(4, 2),
                                                         out_sharding=lib.P("x", "y")),
    "ones_like named": lambda lib: lib.numpy.ones_like(lib.numpy.ones((8, 2)),
                                                       out_sharding=_named(lib, "x")),
    "arange": lambda lib: lib.numpy.arange(8, out_sharding=lib.P("x")),
    "arange stepped": lambda lib: lib.numpy.arange(2.0, 18.0, 2.0, out_sharding=lib.P("x")),
    "array": lambda lib: lib.numpy.array(np.arange(16.0).reshape(8, 2), out_sharding=lib.P("x")),
    "asarray list": lambda lib: lib.numpy.asarray([[1, 2], [3, 4]], out_sharding=lib.P("y")),
    "replicated": lambda lib: lib.numpy.zeros((8, 4), out_sharding=lib.P()),
}


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_creation_out_sharding_matches_jax(jit):
    for name, call in CREATION.items():
        ours, theirs = run_both(call, jit=jit)
        assert_same(ours, theirs, name=name)


SAMPLERS = {
    "ball": lambda r, k, o: r.ball(k, 2, shape=(8,), out_sharding=o),
    "bernoulli": lambda r, k, o: r.bernoulli(k, 0.3, (8, 4), out_sharding=o),
    "beta": lambda r, k, o: r.beta(k, 2.0, 3.0, (8, 4), out_sharding=o),
    "bits": lambda r, k, o: r.bits(k, (8, 4), out_sharding=o),
    "categorical": lambda r, k, o: r.categorical(k, np.zeros((8, 4, 3), np.float32),
                                                 out_sharding=o),
    "cauchy": lambda r, k, o: r.cauchy(k, (8, 4), out_sharding=o),
    "chisquare": lambda r, k, o: r.chisquare(k, 3.0, (8, 4), out_sharding=o),
    "dirichlet": lambda r, k, o: r.dirichlet(k, np.ones(3, np.float32), (8, 4),
                                             out_sharding=o),
    "exponential": lambda r, k, o: r.exponential(k, (8, 4), out_sharding=o),
    "f": lambda r, k, o: r.f(k, 3.0, 4.0, (8, 4), out_sharding=o),
    "gamma": lambda r, k, o: r.gamma(k, 2.0, (8, 4), out_sharding=o),
    "generalized_normal": lambda r, k, o: r.generalized_normal(k, 1.5, (8, 4), out_sharding=o),
    "geometric": lambda r, k, o: r.geometric(k, 0.3, (8, 4), out_sharding=o),
    "gumbel": lambda r, k, o: r.gumbel(k, (8, 4), out_sharding=o),
    "laplace": lambda r, k, o: r.laplace(k, (8, 4), out_sharding=o),
    "loggamma": lambda r, k, o: r.loggamma(k, 2.0, (8, 4), out_sharding=o),
    "logistic": lambda r, k, o: r.logistic(k, (8, 4), out_sharding=o),
    "lognormal": lambda r, k, o: r.lognormal(k, 0.5, (8, 4), out_sharding=o),
    "maxwell": lambda r, k, o: r.maxwell(k, (8, 4), out_sharding=o),
    "multivariate_normal": lambda r, k, o: r.multivariate_normal(
        k, np.zeros(2, np.float32), np.eye(2, dtype=np.float32), (8, 4), out_sharding=o),
    "normal": lambda r, k, o: r.normal(k, (8, 4), out_sharding=o),
    "orthogonal": lambda r, k, o: r.orthogonal(k, 3, (8, 4), out_sharding=o),
    "pareto": lambda r, k, o: r.pareto(k, 2.0, (8, 4), out_sharding=o),
    "permutation": lambda r, k, o: r.permutation(k, 8, out_sharding=o),
    "poisson": lambda r, k, o: r.poisson(k, 3.0, (8, 4), out_sharding=o),
    "rademacher": lambda r, k, o: r.rademacher(k, (8, 4), out_sharding=o),
    "randint": lambda r, k, o: r.randint(k, (8, 4), 0, 10, out_sharding=o),
    "rayleigh": lambda r, k, o: r.rayleigh(k, 2.0, (8, 4), out_sharding=o),
    "t": lambda r, k, o: r.t(k, 3.0, (8, 4), out_sharding=o),
    "triangular": lambda r, k, o: r.triangular(k, 0.0, 0.5, 1.0, (8, 4), out_sharding=o),
    "truncated_normal": lambda r, k, o: r.truncated_normal(k, -1.0, 1.0, (8, 4),
                                                           out_sharding=o),
    "uniform": lambda r, k, o: r.uniform(k, (8, 4), out_sharding=o),
    "wald": lambda r, k, o: r.wald(k, 1.0, (8, 4), out_sharding=o),
}


def _sample(name, spec, jit=False):
    def call(lib):
        key = lib.random.key(7)
        if jit:
            return lib.jit(lambda k: SAMPLERS[name](lib.random, k, lib.P(*spec)))(key)
        return SAMPLERS[name](lib.random, key, lib.P(*spec))
    return call


def _spec(name):
    return ("x",) if name in ("ball", "permutation") else ("x", "y")


# The layout is applied by one backend-independent path (jax.reshard); the xla backend runs it
# in the tests above and below. The gamma-based samplers compile slowly on xla.
@pytest.mark.backends("numpy_ref")
@pytest.mark.parametrize("name", ["normal"] + sorted(set(SAMPLERS) - {"normal"}))
def test_sampler_out_sharding_matches_jax(name):
    """Each sampler's samples laid out as asked, with JAX's values (the numpy_ref backend's
    special functions agree with XLA's to a few float32 ulps of the O(1) samples) and JAX's
    typed sharding."""
    ours, theirs = run_both(_sample(name, _spec(name)))
    assert_same(ours, theirs, rtol=2e-5, atol=1e-6, name=name)
    with refjax.set_mesh(mesh(refjax)):
        plain = SAMPLERS[name](refjax.random, refjax.random.key(7), None)
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(plain))


def test_every_sampler_with_out_sharding_is_tested():
    named = {n for n in dir(real_jax.random) if callable(getattr(real_jax.random, n)) and
             "out_sharding" in inspect.signature(getattr(real_jax.random, n)).parameters}
    assert named == set(SAMPLERS)


def test_samplers_under_jit_match_jax():
    for name in ("normal", "randint"):
        ours, theirs = run_both(_sample(name, _spec(name), jit=True))
        assert_same(ours, theirs, rtol=2e-5, name=name)


def test_signatures_match_jax():
    """Every jnp, jax.random and nn.initializers function taking device= or out_sharding= in
    JAX takes them in refjax, of the same kind and default."""
    modules = [(real_jax.numpy, refjax.numpy), (real_jax.random, refjax.random)]
    for theirs_mod, ours_mod in modules:
        for name in dir(theirs_mod):
            params = _placement_params(getattr(theirs_mod, name))
            if params and name not in _NOT_CREATION:
                assert _placement_params(getattr(ours_mod, name)) == params, name


# Functions whose out_sharding is another engineer's (dot/einsum/reshape family), and astype,
# whose copy and device refjax also takes positionally (its device= is tested below).
_NOT_CREATION = {"astype", "bincount", "broadcast_to", "dot", "einsum", "matmul", "percentile",
                 "ravel", "repeat", "reshape", "tensordot"}


def _placement_params(f):
    try:
        params = inspect.signature(f).parameters
    except (TypeError, ValueError):
        return {}
    return {k: (params[k].kind, params[k].default) for k in ("device", "out_sharding")
            if k in params}


# ---------------------------------------------------------------- device=

DEVICE = {
    "zeros device": lambda lib: lib.numpy.zeros((4,), device=lib.devices()[3]),
    "eye device": lambda lib: lib.numpy.eye(4, device=lib.devices()[2]),
    "empty_like device": lambda lib: lib.numpy.empty_like(np.ones(3), device=lib.devices()[5]),
    "asarray device": lambda lib: lib.numpy.asarray(np.arange(4.0), device=lib.devices()[1]),
    "array device": lambda lib: lib.numpy.array([1, 2], device=lib.devices()[6]),
    "linspace sharding": lambda lib: lib.numpy.linspace(
        0.0, 1.0, 8, device=lib.NamedSharding(mesh(lib, AUTO), lib.P("x"))),
    "arange sharding": lambda lib: lib.numpy.arange(
        8, device=lib.NamedSharding(mesh(lib, AUTO), lib.P("x"))),
    "arange device": lambda lib: lib.numpy.arange(1, 17, 2, device=lib.devices()[3]),
    "full sharding": lambda lib: lib.numpy.full(
        (8, 2), 1.5, device=lib.NamedSharding(mesh(lib, AUTO), lib.P("x", "y"))),
}


# Under jit JAX 0.10 honours device= in jnp.array/asarray/linspace/arange and ignores it
# elsewhere; refjax does the same. (jnp.arange and jnp.eye given a NamedSharding under jit come
# out of JAX replicated over its mesh, a by-product of constant folding: not compared.)
_NOT_UNDER_JIT = {"arange sharding"}
# jnp.linspace's samples are 1 ulp from JAX's at some points on both backends (XLA's division
# by a constant); the placement is what is compared here.
_RTOL = {"linspace sharding": 2e-7}


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_device_matches_jax(jit):
    """device= commits eager results to the device or sharding; under jit see above."""
    for name, call in DEVICE.items():
        if jit and name in _NOT_UNDER_JIT:
            continue
        ours, theirs = both_described(lambda lib: lib.jit(lambda: call(lib))() if jit
                                      else call(lib))
        assert_same(ours, theirs, _RTOL.get(name, 0.0), name)


def test_device_under_jit_on_traced_values_matches_jax():
    x = np.arange(8.0, dtype=np.float32)
    for lib in (refjax, real_jax):
        for f in (lib.numpy.asarray, lib.numpy.array, lib.numpy.zeros_like):
            out = lib.jit(lambda v: f(v, device=lib.devices()[3]))(x)
            assert out.sharding.device_set == {lib.devices()[3 if f is not
                                                                lib.numpy.zeros_like else 0]}


ARRAY_API = {
    "astype": lambda lib, d: lib.numpy.astype(lib.numpy.arange(8.0), lib.numpy.int32, device=d),
    "method astype": lambda lib, d: lib.numpy.arange(8.0).astype(lib.numpy.int32, device=d),
    "rfftfreq": lambda lib, d: lib.numpy.fft.rfftfreq(14, device=d),
    "from_dlpack": lambda lib, d: lib.numpy.from_dlpack(np.arange(8.0), device=d),
}


def test_array_api_device_arguments_match_jax():
    """astype, fft.rfftfreq/fftfreq and from_dlpack commit their result to device= (astype and
    the frequencies under jit too), as JAX's."""
    for name, call in ARRAY_API.items():
        for target in (lambda lib: lib.devices()[5],
                       lambda lib: lib.NamedSharding(mesh(lib, AUTO), lib.P("x"))):
            if name == "from_dlpack" and not hasattr(target(refjax), "device"):
                continue  # one device only: the error is compared below
            ours, theirs = both_described(lambda lib: call(lib, target(lib)))
            # rfftfreq divides by 14: XLA's division by a constant is 1 ulp off at some points
            assert_same(ours, theirs, rtol=2e-7 if name == "rfftfreq" else 0.0, name=name)
    for lib_call in (lambda lib: lib.jit(lambda: lib.numpy.fft.fftfreq(8, device=lib.devices()[5]))(),
                     lambda lib: lib.jit(lambda v: lib.numpy.astype(v, lib.numpy.int32,
                                                                    device=lib.devices()[5]))(
                         np.arange(8.0, dtype=np.float32))):
        ours, theirs = both_described(lib_call)
        assert_same(ours, theirs)


def test_fftfreq_on_a_sharding_does_better_than_jax():
    """JAX's fftfreq fails on a NamedSharding over a 1-d mesh axis (its scalar divisor is
    committed to the same sharding: ValueError); refjax lays the frequencies out as asked."""
    sharding = lambda lib: lib.NamedSharding(mesh(lib, AUTO), lib.P("x"))  # noqa: E731
    with pytest.raises(ValueError, match="with_sharding_constraint"):
        real_jax.numpy.fft.fftfreq(8, device=sharding(real_jax))
    out = refjax.numpy.fft.fftfreq(8, device=sharding(refjax))
    np.testing.assert_array_equal(np.asarray(out), np.fft.fftfreq(8).astype(np.float32))
    assert out.sharding == sharding(refjax)


def test_linspace_retstep_places_the_samples():
    d = refjax.devices()[4]
    samples, step = refjax.numpy.linspace(0.0, 1.0, 5, retstep=True, device=d)
    assert samples.sharding.device_set == {d}
    np.testing.assert_allclose(np.asarray(samples), np.linspace(0, 1, 5))
    assert float(step) == 0.25


# ---------------------------------------------------------------- *_like keep x's layout

def _x(lib, kind, spec):
    value = np.arange(32.0, dtype=np.float32).reshape(8, 4)
    if spec is None:  # committed to one device
        return lib.device_put(value, lib.devices()[3])
    return lib.device_put(value, lib.NamedSharding(mesh(lib, kind), lib.P(*spec)))


LIKE = {
    "zeros_like": lambda lib, x: lib.numpy.zeros_like(x),
    "ones_like int": lambda lib, x: lib.numpy.ones_like(x, dtype=lib.numpy.int32),
    "full_like": lambda lib, x: lib.numpy.full_like(x, 2),
    "full_like array fill": lambda lib, x: lib.numpy.full_like(x, np.ones((8, 1), np.float32)),
    "empty_like": lambda lib, x: lib.numpy.empty_like(x),
    "zeros_like new shape": lambda lib, x: lib.numpy.zeros_like(x, shape=(8,)),
    "lax.full_like": lambda lib, x: lib.lax.full_like(x, 3.0),
    "scalar from x": lambda lib, x: lib.numpy.zeros_like(x.sum() * 0 + 1.0),
}


def test_like_functions_keep_the_layout_of_their_argument_as_jax():
    """Eagerly, jnp's *_like and lax.full_like lay their result out as their (committed)
    argument is, when the shape is the same (or the argument is replicated), as JAX's."""
    for kind, spec in ((AUTO, ("x", "y")), (EXPLICIT, ("x", None)), (AUTO, ()), (AUTO, None)):
        for name, call in LIKE.items():
            ours, theirs = both_described(lambda lib: call(lib, _x(lib, kind, spec)))
            assert_same(ours, theirs, name=f"{name} on {kind} {spec}")


def test_lax_full_like_sharding_as_jax():
    s = lambda lib: lib.NamedSharding(mesh(lib, AUTO), lib.P("y"))  # noqa: E731
    ours, theirs = both_described(lambda lib: lib.lax.full_like(np.ones(8, np.float32), 2.0,
                                                                sharding=s(lib)))
    assert_same(ours, theirs)


LAX_FULL = {
    "weak float": lambda lib: lib.lax.full((8,), 2.5),
    "weak int": lambda lib: lib.lax.full((8,), 2),
    "dtype": lambda lib: lib.lax.full((8,), 2, np.float32),
    "numpy scalar": lambda lib: lib.lax.full((3,), np.float32(1.5)),
    "sharding": lambda lib: lib.lax.full((8,), 2.5, sharding=lib.NamedSharding(
        mesh(lib, AUTO), lib.P("x"))),
    "device": lambda lib: lib.lax.full((8,), 2, sharding=lib.sharding.SingleDeviceSharding(
        lib.devices()[2])),
    "sharding under jit": lambda lib: lib.jit(lambda: lib.lax.full((8,), 2.5, sharding=(
        lib.NamedSharding(mesh(lib, AUTO), lib.P("x")))))(),
}


def test_lax_full_matches_jax():
    """lax.full: dtype and weak type from the fill value unless given; an eager result
    committed to `sharding` is not weakly typed; under jit the sharding is ignored (JAX's
    lax.full says so); a non-scalar fill is JAX's TypeError."""
    assert list(inspect.signature(refjax.lax.full).parameters) == \
        list(inspect.signature(real_jax.lax.full).parameters)
    for name, call in LAX_FULL.items():
        ours, theirs = both_described(call)
        assert_same(ours, theirs, name=name)
    bad = lambda lib: lib.lax.full((3,), np.ones(2))  # noqa: E731
    assert _error(refjax, bad) == _jax_error(bad)


# ---------------------------------------------------------------- errors

def _error(lib, call, kind=None):
    """(class name, message without the source line JAX appends and refjax's name prefix)."""
    ctx = lib.set_mesh(mesh(lib, kind)) if kind else lib.set_mesh(None)
    try:
        with ctx:
            call(lib)
    except Exception as e:  # noqa: BLE001 - the class and message are compared
        text = re.sub(r"^[\w.]+: ", "", str(e).split(" This error occurs at source")[0])
        return type(e).__name__, re.sub(r"<class '[\w.]+'>", "<class>", text)
    return None


def _jax_error(call, kind=None):
    """_error on real JAX (recorded: jax_recordings.py)."""
    return on_jax(_error, call, kind)


ERRORS = {
    "spec without a mesh": (None, lambda lib: lib.numpy.zeros(4, out_sharding=lib.P("x"))),
    "not a sharding": (None, lambda lib: lib.numpy.ones(4, out_sharding="x")),
    "both": (EXPLICIT, lambda lib: lib.numpy.zeros(8, device=lib.devices()[0],
                                                   out_sharding=lib.P("x"))),
    "auto axis": (AUTO, lambda lib: lib.numpy.arange(8, out_sharding=lib.P("x"))),
    "auto axis sampler": (AUTO, lambda lib: lib.random.normal(lib.random.key(0), (8,),
                                                               out_sharding=lib.P("x"))),
    "other mesh": (EXPLICIT, lambda lib: lib.numpy.ones(8, out_sharding=lib.NamedSharding(
        mesh(lib, EXPLICIT, (8,), ("a",)), lib.P("a")))),
    "indivisible": (EXPLICIT, lambda lib: lib.random.uniform(lib.random.key(0), (6,),
                                                              out_sharding=lib.P("x"))),
    "sampler spec without a mesh": (None, lambda lib: lib.random.bits(
        lib.random.key(0), (8,), out_sharding=lib.P("x"))),
    "from_dlpack on several devices": (None, lambda lib: lib.numpy.from_dlpack(
        np.ones(8), device=lib.NamedSharding(mesh(lib, AUTO), lib.P("x")))),
    "linspace takes no out_sharding": (None, lambda lib: lib.numpy.linspace(
        0, 1, out_sharding=lib.P())),
}

# Messages that are JAX's in substance but worded from refjax's types.
_CLASS_ONLY = {"linspace takes no out_sharding"}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_jax(name):
    kind, call = ERRORS[name]
    ours, theirs = _error(refjax, call, kind), _jax_error(call, kind)
    assert theirs is not None and ours is not None
    assert ours[0] == theirs[0]
    if name not in _CLASS_ONLY:
        assert ours[1].replace("refjax", "jax") == theirs[1].replace("jaxlib._jax", "jax")


def test_explicit_layout_without_a_mesh_is_refused_as_jax_refuses_it():
    """JAX cannot place an Explicit-axis layout with no jax.set_mesh mesh (ValueError asking
    for one); refjax refuses it the same way rather than guessing the mesh."""
    call = lambda lib: lib.numpy.zeros(  # noqa: E731
        (8, 4), out_sharding=lib.NamedSharding(mesh(lib), lib.P("x", "y")))
    for lib in (refjax, real_jax):
        with pytest.raises(ValueError, match="jax.set_mesh"):
            call(lib)
    # On Auto axes only a replicated spec is allowed, and needs no placement: both give an
    # unsharded array.
    ours, theirs = both_described(lambda lib: lib.numpy.zeros(4, out_sharding=lib.NamedSharding(
        mesh(lib, AUTO), lib.P())))
    assert_same(ours, theirs)


# ---------------------------------------------------------------- nn.initializers

INITIALIZERS = ["zeros", ("constant", 2.0), ("glorot_uniform",)]


@pytest.mark.backends("numpy_ref")  # the samplers' layouts are backend-independent (above)
def test_initializers_pass_out_sharding_as_jax():
    for entry in INITIALIZERS:
        def call(lib, entry=entry):
            init = getattr(lib.nn.initializers, entry) if isinstance(entry, str) else \
                getattr(lib.nn.initializers, entry[0])(*entry[1:])
            return init(lib.random.key(3), (8, 4), out_sharding=lib.P("x", "y"))
        ours, theirs = run_both(call)
        assert_same(ours, theirs, rtol=2e-5, name=str(entry))


# ---------------------------------------------------------------- shard_map without in_specs

def _sharded_input(lib, spec=("x", "y")):
    return lib.device_put(np.arange(32.0, dtype=np.float32).reshape(8, 4), lib.P(*spec))


def test_shard_map_infers_in_specs_over_a_subset_of_axes_as_jax():
    """With axis_names a subset of an Explicit mesh's axes, each argument's inferred in_spec
    is its type's spec reduced to those axes (JAX's _manual_spec)."""
    for names, out in (({"x"}, ("x",)), ({"y"}, (None, "y"))):
        # refjax's result keeps the out_specs' layout; JAX's type keeps the non-manual axis
        # of the argument too (P('x', 'y') for both): a difference of layout only.
        ours, theirs = _over_a_subset(refjax, names, out), on_jax(_over_a_subset, names, out)
        for a, b in zip(ours, theirs, strict=True):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def _over_a_subset(lib, names, out):
    with lib.set_mesh(mesh(lib)):
        x = _sharded_input(lib)
        # given in_specs naming only the manual axes: JAX checks them against the type only
        # when every mesh axis goes manual
        return [lib.shard_map(lambda a: a * 2 + 1, out_specs=lib.P(*out), axis_names=names)(x),
                lib.shard_map(lambda a: a * 2 + 1, in_specs=lib.P(*out), out_specs=lib.P(*out),
                              axis_names=names)(x)]


def test_shard_map_refuses_a_spec_it_cannot_reduce_as_jax():
    def call(lib):
        x = _sharded_input(lib, (("y", "x"), None))
        return lib.shard_map(lambda a: a, out_specs=lib.P(), axis_names={"x"})(x)
    ours, theirs = _error(refjax, call, EXPLICIT), _error(real_jax, call, EXPLICIT)
    assert ours == theirs == ("ValueError", "Invalid spec: P(('y', 'x'), None)")


def test_shard_map_infers_in_specs_from_a_traced_values_type():
    """Inside jit a traced argument's in_spec comes from its type's sharding, as in JAX 0.10
    (the staged in_specs are the ones JAX's typeof gives the argument); run, the staged
    program gives JAX's values."""
    from refjax.core.avals import ShapedArray
    from refjax.core.jaxpr import eval_jaxpr
    from refjax.core.transforms.staging import trace_to_jaxpr
    with real_jax.set_mesh(mesh(real_jax)):
        x_jax = _sharded_input(real_jax)
        want = real_jax.jit(real_jax.shard_map(lambda a: a * 2, out_specs=real_jax.P("x", "y")))(
            x_jax)
        spec = str(real_jax.typeof(x_jax).sharding.spec)
    m = mesh(refjax)
    with refjax.set_mesh(m):
        aval = ShapedArray((8, 4), np.dtype(np.float32),
                           sharding=refjax.NamedSharding(m.abstract_mesh, refjax.P("x", "y")))
        body = refjax.shard_map(lambda a: a * 2, out_specs=refjax.P("x", "y"))
        jaxpr, consts = trace_to_jaxpr(lambda a: [body(a)], [aval])
        (eqn,) = jaxpr.eqns
        assert [str(s) for s in eqn.params["in_specs"]] == [spec]
        (got,) = eval_jaxpr(jaxpr, consts, _sharded_input(refjax))
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_shard_map_without_in_specs_inside_jit_as_jax():
    """jit's arguments are typed on Explicit axes, so shard_map infers its in_specs inside a
    real jit call as JAX 0.10 does: values, type and layout as JAX's."""
    def call(lib):
        with lib.set_mesh(mesh(lib)):
            x = _sharded_input(lib)
            return lib.jit(lib.shard_map(lambda a: a * 2, out_specs=lib.P("x", "y")))(x)
    assert_same(*both_described(call))
