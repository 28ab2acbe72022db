"""Varying manual axes (vma) in the staged types of shard_map bodies, against real JAX 0.10.2:
`jax.typeof` inside jitted and staged bodies, the printed jaxprs (implicit `pvary`,
`psum_invariant`, the collectives, control flow, the transposed body of a gradient), the type
errors of control flow and pvary, and random programs typed as JAX types them."""
import jax as real_jax
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import refjax

real_jax.config.update("jax_num_cpu_devices", 8)
pytestmark = pytest.mark.backends("numpy_ref")  # types and texts: no backend computes them


def _mesh(jax, kind="Auto"):
    return jax.make_mesh((4, 2), ("i", "j"), axis_types=(getattr(jax.sharding.AxisType, kind),) * 2)


def _smap(jax, f, in_specs, out_specs, check_vma=True):
    return jax.shard_map(f, mesh=_mesh(jax), in_specs=in_specs, out_specs=out_specs,
                         check_vma=check_vma)


def _on_both(build):
    """build(jax) on refjax and on JAX: the two results."""
    return build(refjax), build(real_jax)


# ---------------------------------------------------------------- typeof inside the body

def _issue_program(jax, check_vma=True):
    """The issue's program: on Explicit axes, typeof of x and x + y in the body, under jit,
    make_jaxpr and eagerly; returns (types seen, printed jaxpr, value)."""
    P, seen = jax.sharding.PartitionSpec, []
    mesh = _mesh(jax, "Explicit")

    def f(x, y):
        z = x + y
        seen.extend([str(jax.typeof(x)), str(jax.typeof(z))])
        return jax.lax.psum(z, "i")
    def g():  # a new function each time: JAX reuses a body's trace for the same one
        return jax.shard_map(lambda x, y: f(x, y), mesh=mesh, in_specs=(P("i"), P()),
                             out_specs=P(), check_vma=check_vma)
    with jax.set_mesh(mesh):
        x = jax.device_put(jax.numpy.arange(8.0), P("i"))
        y = jax.numpy.ones(2)
        value = np.asarray(jax.jit(g())(x, y))
        text = str(jax.make_jaxpr(g())(x, y))
        g()(x, y)
    return seen, text, value


def test_typeof_in_jitted_staged_and_eager_bodies_as_jax():
    ours, theirs = _on_both(_issue_program)
    assert ours[0] == theirs[0] == ["float32[2]{V:i}"] * 6
    assert ours[1] == theirs[1] and "pvary[axes=('i',)]" in ours[1]
    assert "psum_invariant[axes=('i',)]" in ours[1]
    np.testing.assert_array_equal(ours[2], theirs[2])


def test_check_vma_false_bodies_carry_no_vma_and_stage_psum():
    ours, theirs = _on_both(lambda jax: _issue_program(jax, check_vma=False))
    assert ours[0] == theirs[0] == ["float32[2]"] * 6
    assert ours[1] == theirs[1] and "psum[axes=('i',) axis_index_groups=None]" in ours[1]
    np.testing.assert_array_equal(ours[2], theirs[2])


# ---------------------------------------------------------------- printed jaxprs

def _programs(jax):
    """{name: (shard_map'd function, args)}: each staged as JAX stages it."""
    P, lax, jnp = jax.sharding.PartitionSpec, jax.lax, jax.numpy
    x, y = jnp.arange(8.0), jnp.ones(2)
    perm = [(0, 1), (1, 2), (2, 3), (3, 0)]

    def scan_body(x, y):
        return lax.scan(lambda c, a: (c * y + a, c), x, jnp.arange(3.0))

    def cond_body(x, y):
        return lax.cond(y[0] > 0, lambda a, b: a * b, lambda a, b: a + 1.0, x, y)
    return {
        "literal_pvary": (_smap(jax, lambda x, y: lax.psum(x * 2.0 + y, "i"),
                                (P("i"), P()), P()), (x, y)),
        "pmax_psum_over_two_axes": (_smap(jax, lambda x, y: (
            lax.pmax(y, "i"), lax.psum(y, ("i", "j")), lax.pmax(x, ("i", "j")),
            lax.pmean(x, "i")), (P("i"), P()), (P(), P(), P(), P())), (x, y)),
        "collectives": (_smap(jax, lambda x, y: (
            lax.all_gather(y, "i"), lax.ppermute(y, "i", perm),
            lax.all_gather(x, "i", tiled=True), y + lax.axis_index("i")),
            (P("i"), P()), (P("i"),) * 4), (x, y)),
        "outputs_made_varying": (_smap(jax, lambda x, y: (y, x * 0.0),
                                       (P("i"), P()), (P("j"), P(("i", "j")))), (x, y)),
        "scan": (_smap(jax, scan_body, (P("i"), P()), (P("i"), P("i"))), (x, y)),
        "cond": (_smap(jax, cond_body, (P("i"), P()), P("i")), (x, y)),
        "nested_jit": (_smap(jax, jax.jit(lambda x, y: jnp.sin(x) + y),
                             (P("i"), P()), P("i")), (x, y)),
        "jvp": (lambda x, y, t: jax.jvp(_smap(jax, lambda x, y: lax.psum(jnp.sin(x) * y, "i"),
                                              (P("i"), P()), P()), (x, y), (t, y)), (x, y, x)),
    }


def test_printed_jaxprs_of_shard_map_bodies_as_jax():
    ours, theirs = _on_both(_programs)
    for name in theirs:
        f, args = ours[name]
        g, jargs = theirs[name]
        assert str(refjax.make_jaxpr(f)(*args)) == str(real_jax.make_jaxpr(g)(*jargs)), name


def _vjp_program(jax):
    P = jax.sharding.PartitionSpec
    f = _smap(jax, lambda x, y: jax.lax.psum(x + y, "i"), (P("i"), P()), P())
    x, y, ct = jax.numpy.arange(8.0), jax.numpy.ones(2), jax.numpy.array([1.0, -2.0])
    pullback = lambda x, y, ct: jax.vjp(f, x, y)[1](ct)  # noqa: E731
    return str(jax.make_jaxpr(pullback)(x, y, ct)), [np.asarray(g) for g in pullback(x, y, ct)]


def test_vjp_transposes_pvary_to_psum_invariant_as_jax():
    """The transposed body: the invariant cotangent is made varying (psum_invariant's
    transpose), and y's cotangent is summed by the transpose of y's pvary."""
    (ours, our_grads), (theirs, their_grads) = _on_both(_vjp_program)
    assert ours == theirs
    assert ours.count("psum_invariant[axes=('i',)]") == 2 and ours.count("pvary") == 2
    for a, b in zip(our_grads, their_grads):
        np.testing.assert_array_equal(a, b)


# ---------------------------------------------------------------- type errors

def _error(jax, build):
    P = jax.sharding.PartitionSpec
    f = build(jax, jax.lax, jax.numpy)
    try:
        jax.make_jaxpr(_smap(jax, f, (P("i"), P()), P("i")))(jax.numpy.arange(8.0),
                                                             jax.numpy.ones(2))
    except Exception as e:  # noqa: BLE001  (the class and text are compared with JAX's)
        return type(e), str(e).split("\n--------------------")[0]
    return None


def test_scan_carry_of_other_vma_is_jax_type_error():
    ours, theirs = _on_both(lambda jax: _error(jax, lambda jax, lax, jnp: lambda x, y: lax.scan(
        lambda c, a: (c * x, a), y, jnp.arange(3.0))[0]))
    assert ours == theirs and ours[0] is TypeError and "manual axis types" in ours[1]


def test_cond_branches_of_other_vma_are_jax_type_error():
    ours, theirs = _on_both(lambda jax: _error(jax, lambda jax, lax, jnp: lambda x, y: lax.cond(
        y[0] > 0, lambda: x, lambda: y)))
    assert ours[0] is theirs[0] is TypeError
    # JAX also names the branch functions' source lines, which refjax's message leaves out
    hint = "This might be fixed by applying `jax.lax.pcast(..., (), to='varying')` to the output"
    assert hint in ours[1] and hint in theirs[1]


def test_pcast_of_a_varying_value_is_jax_value_error():
    ours, theirs = _on_both(lambda jax: _error(
        jax, lambda jax, lax, jnp: lambda x, y: lax.pcast(x, "i", to="varying")))
    assert ours == theirs and ours[0] is ValueError


# ---------------------------------------------------------------- random programs

_SPECS = ((), ("i",), ("j",), (("i", "j"),))
_OPS = st.one_of(
    st.tuples(st.sampled_from(("add", "mul")), st.integers(0, 99), st.integers(0, 99)),
    st.tuples(st.just("sin"), st.integers(0, 99)),
    st.tuples(st.just("psum"), st.integers(0, 99), st.sampled_from((("i",), ("j",), ("i", "j")))),
    st.tuples(st.just("all_gather"), st.integers(0, 99), st.sampled_from(("i", "j"))))


def _apply(jax, op, vals):
    lax, pick = jax.lax, lambda k: vals[k % len(vals)]
    if op[0] in ("add", "mul"):
        return getattr(lax, op[0])(pick(op[1]), pick(op[2]))
    if op[0] == "sin":
        return lax.sin(pick(op[1]))
    if op[0] == "psum":
        return lax.psum(pick(op[1]), op[2])
    return lax.all_gather(pick(op[1]), op[2]).sum(0)


def _random_program(jax, specs, ops):
    """Blocks of shape (2,) split by `specs`; each op applied to earlier values; the staged
    typeof of every value and the printed jaxpr."""
    P, seen = jax.sharding.PartitionSpec, []
    mesh = _mesh(jax)

    def body(*xs):
        vals = list(xs)
        for op in ops:
            vals.append(_apply(jax, op, vals))
        seen.extend(str(jax.typeof(v)) for v in vals)
        return vals
    in_specs = tuple(P(*s) for s in specs)
    args = [jax.numpy.ones(2 * int(np.prod([mesh.shape[a] for e in s for a in
                                            (e if isinstance(e, tuple) else (e,))])))
            for s in specs]
    f = jax.shard_map(body, mesh=mesh, in_specs=in_specs,
                      out_specs=[P(("i", "j"))] * (len(specs) + len(ops)))
    return seen, str(jax.make_jaxpr(f)(*args))


def _typed_or_error(jax, specs, ops):
    try:
        return _random_program(jax, specs, ops)
    except ValueError as e:  # a psum over axes the value varies over only in part
        # refjax's message names those axes (test_shard_map.py); JAX's lists the states
        assert "psum" in str(e)
        return ValueError


@given(st.lists(st.sampled_from(_SPECS), min_size=1, max_size=3),
       st.lists(_OPS, min_size=1, max_size=5))
def test_random_programs_are_typed_as_jax(specs, ops):
    ours, theirs = _on_both(lambda jax: _typed_or_error(jax, specs, ops))
    assert ours == theirs


def _psum_of_constants(jax):
    """psum of values no trace holds, inside a jitted body and eagerly: computed at once."""
    P, seen = jax.sharding.PartitionSpec, []

    def body(x):
        n = jax.lax.psum(1, ("i", "j"))
        seen.append((type(n).__name__, n))
        return x / n
    for run in (jax.jit, lambda f: f):
        run(_smap(jax, body, P("i"), P("i")))(jax.numpy.arange(8.0))
    return seen


def test_psum_of_a_python_scalar_is_the_axis_size_as_jax():
    ours, theirs = _on_both(_psum_of_constants)
    assert ours == theirs == [("int", 8)] * 2


def _jit_in_eager_body(jax):
    """A jitted function called from an eager body is staged with the body's types."""
    P, seen = jax.sharding.PartitionSpec, []

    @jax.jit
    def inner(x, y):
        z = x + y
        seen.extend(str(jax.typeof(v)) for v in (x, y, z))
        return jax.lax.psum(z, "i")

    def body(x, y):
        out = inner(x, y)
        seen.append(str(jax.typeof(out)))
        return out
    value = _smap(jax, body, (P("i"), P()), P())(jax.numpy.arange(8.0), jax.numpy.ones(2))
    return seen, np.asarray(value)


def test_jit_inside_an_eager_body_is_typed_as_jax():
    (ours, a), (theirs, b) = _on_both(_jit_in_eager_body)
    assert ours == theirs == ["float32[2]{V:i}", "float32[2]", "float32[2]{V:i}", "float32[2]"]
    np.testing.assert_array_equal(a, b)
