"""Collectives and vma (varying manual axes) in check_vma shard_map bodies as JAX 0.10.2 names
and reports them, against real JAX: the printed names and params of every collective
(`reduce_scatter` for lax.psum_scatter), the type errors of loop carries and cond branches
whose vma differ, reductions over a mix of varying and invariant axes, linearize's tangent
check, and the programs of JAX's shard_map_test.py about vma typing."""
import functools
import re

import jax as real_jax
import numpy as np
import pytest

import refjax

real_jax.config.update("jax_num_cpu_devices", 8)


def _mesh(jax, shape=(4, 2), names=("i", "j")):
    return jax.make_mesh(shape, names, axis_types=(jax.sharding.AxisType.Auto,) * len(shape))


def _smap(jax, f, in_specs, out_specs, check_vma=True, mesh=None):
    return jax.shard_map(f, mesh=mesh or _mesh(jax), in_specs=in_specs, out_specs=out_specs,
                         check_vma=check_vma)


def _outcome(thunk):
    """What thunk() gives: its value (as NumPy, nested), or (error class, message)."""
    try:
        return _as_numpy(thunk())
    except Exception as e:  # noqa: BLE001  (class and text are compared with JAX's)
        return type(e), str(e)


def _as_numpy(v):
    if isinstance(v, (list, tuple)):
        return type(v)(_as_numpy(a) for a in v)
    return (str(v.dtype), np.asarray(v).tolist()) if hasattr(v, "dtype") else v


def _on_both(build):
    return build(refjax), build(real_jax)


# JAX prints the states of a mixed reduction as a set, whose order depends on the process's
# string hashing; refjax prints them sorted.
# ---------------------------------------------------------------- printed collectives

def _collectives(jax):
    """{name: thunk printing the jaxpr JAX stages}: every collective, tiled and not, of
    varying and invariant operands, over one axis and two."""
    P, lax, jnp = jax.sharding.PartitionSpec, jax.lax, jax.numpy
    x, x16 = jnp.arange(64.0).reshape(8, 8), jnp.arange(64.0).reshape(16, 4)
    ints = (jnp.zeros(16, jnp.int32), jnp.ones(16, jnp.int32))
    programs = {
        "reduce_scatter": (lambda x: lax.psum_scatter(x, "i"), P("i"), P("i"), x16),
        "reduce_scatter_tiled": (lambda x: lax.psum_scatter(x, "i", scatter_dimension=1,
                                                            tiled=True), P("i"), P(None, "i"), x),
        "reduce_scatter_of_invariant": (lambda x: lax.psum_scatter(x, "i", tiled=True), P(),
                                        P("i"), x),
        "axis_index_of_two_axes": (lambda x: x + lax.axis_index("i") + lax.axis_index(
            ("i", "j")), P(("i", "j")), P(("i", "j")), x),
        "all_to_all": (lambda x: lax.all_to_all(x, "i", 1, 0, tiled=True), P("i"), P("i"), x),
        "all_to_all_of_invariant": (lambda x: lax.all_to_all(x, "i", 0, 0, tiled=True), P(),
                                    P("i"), x),
        "pbroadcast": (lambda x: lax.pbroadcast(x, "i", 1), P("i"), P("i"), x),
        "ppermute_of_invariant": (lambda x: lax.ppermute(x, "i", [(0, 1), (1, 0)]), P(),
                                  P("i"), x),
        "pmax_pmin": (lambda x: (lax.pmax(x, "i"), lax.pmin(x, ("i", "j"))), P(("i", "j")),
                      (P(), P()), x),
        "pcast_psum_pmean": (lambda x: (lax.pcast(x, "j", to="varying"), lax.psum(x, "i"),
                                        lax.pmean(x, "i")), P("i"), (P("i", "j"), P(), P()), x),
        "all_gather_of_two_axes": (lambda x: lax.all_gather(x, ("j", "i"), axis=1),
                                   P(("i", "j")), P(("i", "j")), x),
        "reduce_scatter_of_two_axes": (lambda x: lax.psum_scatter(x, ("i", "j"), tiled=True),
                                       P(("i", "j")), P(("i", "j")), jnp.arange(512.0).reshape(
                                           64, 8)),
        "ppermute_of_two_axes": (lambda x: lax.ppermute(x, ("j", "i"), [(0, 1), (1, 0)]),
                                 P(("i", "j")), P(("i", "j")), x),
        "all_to_all_of_two_axes": (lambda x: lax.all_to_all(x, ("i", "j"), 1, 1, tiled=True),
                                   P(("i", "j")), P(("i", "j")), x),
        "ragged_all_to_all": (lambda x, o, io, ss, oo, rs: lax.ragged_all_to_all(
            x, o, io, ss, oo, rs, axis_name="i"), (P("i"),) * 6, P("i"),
            (x, jnp.zeros((8, 8)), *ints, *ints)),
    }
    out = {}
    for name, (f, ins, outs, args) in programs.items():
        args = args if isinstance(args, tuple) else (args,)
        for check in (True, False):
            g = _smap(jax, f, ins, outs, check)
            out[name, check] = _outcome(lambda g=g, args=args: str(jax.make_jaxpr(g)(*args)))
    return out


def test_collectives_print_as_jax():
    ours, theirs = _on_both(_collectives)
    for key, text in theirs.items():
        assert ours[key] == text, key
    assert "= reduce_scatter[" in ours["reduce_scatter", True]
    assert "psum_scatter" not in ours["reduce_scatter_tiled", False]


def _several_axes(jax, kind):
    """A collective over two axes (named out of mesh order) under jit, and the gradient
    through it: one equation, whose value is JAX's."""
    P, lax, jnp = jax.sharding.PartitionSpec, jax.lax, jax.numpy
    both, x = P(("i", "j")), jnp.arange(64.0).reshape(8, 8)
    body, spec, shape, *rest = {
        "all_gather": (lambda v: lax.all_gather(v, ("j", "i"), axis=1, tiled=True),
                       P("i", "j"), (8, 64)),
        "reduce_scatter": (lambda v: lax.psum_scatter(v, ("j", "i"), scatter_dimension=1,
                                                      tiled=True),
                           P("i", "j"), (8, 1), P(None, ("j", "i")),
                           jnp.arange(512.0).reshape(32, 16)),
        "ppermute": (lambda v: lax.ppermute(v, ("j", "i"), [(0, 1), (1, 2), (2, 0), (5, 7)]),
                     both, (8, 8)),
        "all_to_all": (lambda v: lax.all_to_all(v, ("j", "i"), 1, 0, tiled=True), both,
                       (64, 1))}[kind]
    out_spec, arg = rest or (spec, x)
    f = jax.jit(_smap(jax, body, spec, out_spec))
    weights = jnp.arange(float(np.prod(shape))).reshape(shape)
    return _outcome(lambda: (f(arg), jax.grad(lambda v: (f(v) * weights).sum())(arg)))


@pytest.mark.backends("numpy_ref", "xla")
@pytest.mark.parametrize("kind", ["reduce_scatter", "all_gather", "ppermute", "all_to_all"])
def test_collectives_over_several_axes_compute_as_jax(kind):
    ours, theirs = _on_both(functools.partial(_several_axes, kind=kind))
    assert ours == theirs and isinstance(ours, tuple) and len(ours) == 2


# ---------------------------------------------------------------- loops and conds

def _control_flow_errors(jax):
    """{name: outcome} of loops whose carry changes vma and conds whose branches differ."""
    lax, jnp, P = jax.lax, jax.numpy, jax.sharding.PartitionSpec
    y3 = jnp.ones(3)

    def swap3(carry, _):
        return (carry[2], carry[0], carry[1]), ()
    bodies = {
        "fori": lambda x, y: lax.fori_loop(0, 3, lambda i, c: c * x, y),
        "fori_dict": lambda x, y: lax.fori_loop(
            0, 3, lambda i, c: {"a": c["a"] * x, "b": c["b"]}, {"a": y, "b": y})["a"],
        "fori_traced_bounds": lambda x, y: lax.fori_loop(
            0, y[0].astype(jnp.int32), lambda i, c: c * x, y),
        "while": lambda x, y: lax.while_loop(lambda c: c[0] < 3,
                                             lambda c: (c[0] + 1, c[1] * x), (0, y))[1],
        "scan_over_varying_xs": lambda x, y: lax.scan(lambda c, a: (c * a, a), y, x)[0],
        "scan_three_carries": lambda x, y: lax.scan(
            swap3, (x, y, lax.pcast(x, "j", to="varying")), (), length=2)[0][0],
        "cond": lambda x, y: lax.cond(y[0] > 0, lambda: x, lambda: y),
        "cond_tuple": lambda x, y: lax.cond(y[0] > 0, lambda: (y, x), lambda: (y, y))[1],
        "cond_structure": lambda x, y: lax.cond(y[0] > 0, lambda: (x, x), lambda: x),
        "switch": lambda x, y: lax.switch(0, [lambda: x, lambda: y, lambda: y]),
        "fixed_scan": lambda x, y: lax.scan(lambda c, a: (c * x, a),
                                            lax.pcast(y, "i", to="varying"), y3)[0],
    }
    return {name: _outcome(lambda f=f: jax.make_jaxpr(_smap(jax, f, (P("i"), P()), P("i")))(
        jnp.arange(8.0), jnp.ones(2)).eqns[0].primitive.name) for name, f in bodies.items()}


def test_loop_and_cond_vma_errors_as_jax():
    """JAX's TypeError and text for each, naming the carry (`loop_carry` for fori_loop) or
    the branch functions. refjax's fori_loop errors start with `lax.fori_loop: ` (its errors
    name the operation; JAX's name only the scan or while_loop it became)."""
    ours, theirs = _on_both(_control_flow_errors)
    assert ours["fixed_scan"] == theirs["fixed_scan"] == "shard_map"
    for name, (cls, text) in ((n, o) for n, o in theirs.items() if n != "fixed_scan"):
        want = f"lax.fori_loop: {text}" if name.startswith("fori") else text
        assert ours[name] == (cls, want), name
        assert cls is TypeError
    assert "loop_carry[1]" in theirs["fori"][1] and "branch1" in theirs["switch"][1]


# ---------------------------------------------------------------- reductions over a mix

def _mixed_reductions(jax):
    """Reductions over ('i', 'j') of a value varying over i only, staged and run (eagerly
    and under jit)."""
    lax, P = jax.lax, jax.sharding.PartitionSpec
    x = jax.numpy.arange(32.0).reshape(8, 4)
    bodies = {"psum": lambda v: lax.psum(v, ("i", "j")),
              "pmean": lambda v: lax.pmean(v, ("i", "j")),
              "psum_scatter": lambda v: lax.psum_scatter(v, ("i", "j"), tiled=True),
              "pmax": lambda v: lax.pmax(v, ("i", "j")),
              "pmin": lambda v: lax.pmin(v, ("j", "i")),
              "all_gather": lambda v: lax.all_gather(v, ("i", "j"), tiled=True)}
    out = {}
    for name, body in bodies.items():  # all_gather's result varies over both axes
        f = _smap(jax, body, P("i"), P(("i", "j")) if name == "all_gather" else P())
        runs = (lambda f: f, jax.jit) if name.startswith("p") else (jax.jit,)
        out[name] = [_outcome(lambda f=f: run(f)(x)) for run in runs]
    return out


@pytest.mark.backends("numpy_ref", "xla")
def test_reductions_over_varying_and_invariant_axes_as_jax():
    """psum, pmean and psum_scatter refuse the mix with JAX's ValueError and text, eagerly
    and under jit (refjax then says which axes the value varies over and how to fix it: JAX
    lists only the states); pmax, pmin and all_gather accept it and compute JAX's values."""
    ours, theirs = _on_both(_mixed_reductions)
    for name in ("psum", "pmean", "psum_scatter"):
        for (cls, text), (jcls, jtext) in zip(ours[name], theirs[name]):
            assert cls is jcls is ValueError
            head, tail = text.removeprefix("lax.pmean: ").split(". The value varies", 1)
            assert head == jtext  # the set of states printed in JAX's order
            assert tail.startswith(" over ('i',) but not over ('j',)")
    for name in ("pmax", "pmin", "all_gather"):
        assert ours[name] == theirs[name], name


# ---------------------------------------------------------------- linearize

def _linearize_in_body(jax, fix):
    P = jax.sharding.PartitionSpec

    def body(t):
        p = jax.numpy.array([1.0])
        p = jax.lax.pcast(p, "x", to="varying") if fix else p
        _, f_jvp = jax.linearize(lambda v: v ** 2, p)
        return f_jvp(t)
    f = _smap(jax, body, P("x"), P("x"), mesh=_mesh(jax, (2,), ("x",)))
    run = jax.jit(f) if fix else f  # refused eagerly, computed under jit
    return _outcome(lambda: run(jax.numpy.ones(2)))


def test_linearize_refuses_tangents_of_other_vma_as_jax():
    ours, theirs = _on_both(lambda jax: [_linearize_in_body(jax, fix) for fix in (0, 1)])
    assert ours == theirs and theirs[1] == ("float32", [2.0, 2.0])
    assert ours[0][0] is ValueError and "to the primal value passed" in ours[0][1]


# ---------------------------------------------------------------- shard_map_test.py's programs

def _psum_types(jax):
    """shard_map_test.py's test_get_check_rep: aval.mat.varying before and after psum."""
    P, seen = jax.sharding.PartitionSpec, []
    for run in (jax.jit, lambda f: f):
        for axes in (("j",), ("i",), ("i", "j")):
            def body(x, axes=axes):
                out = jax.lax.psum(x, axes)
                seen.append((sorted(x.aval.mat.varying), sorted(out.aval.mat.varying)))
                return out
            spec = P(*(a for a in ("i", "j") if a not in axes))
            run(_smap(jax, body, P("i", "j"), spec))(np.zeros((8, 8), np.float32))
    return seen


def test_aval_mat_after_psum_as_jax():
    ours, theirs = _on_both(_psum_types)
    assert ours == theirs and theirs[2] == (["i", "j"], [])


def _swapped_carries(jax, fix):
    """shard_map_test.py's test_scan_pvary_errors2: three carries rotated by the body."""
    P = jax.sharding.PartitionSpec
    mesh = _mesh(jax, (1, 1), ("i", "j"))

    def body(x, y, z):
        if fix:
            x, y = jax.lax.pcast(x, "j", to="varying"), jax.lax.pcast(y, ("i", "j"),
                                                                       to="varying")
        rotate = lambda c, _: ((c[2], c[0], c[1]), ())  # noqa: E731
        return jax.lax.scan(rotate, (x, y, z), (), length=2)[0]
    f = _smap(jax, body, (P("i"), P(), P(("i", "j"))), P(("i", "j")), mesh=mesh)
    return _outcome(lambda: f(*[jax.numpy.arange(3.0)] * 3))


@pytest.mark.parametrize("fix", [False, True])
def test_rotated_scan_carries_as_jax(fix):
    ours, theirs = _on_both(functools.partial(_swapped_carries, fix=fix))
    assert ours == theirs


def _pcast_misuse(jax):
    """shard_map_test.py's test_pcast_axis_name_is_not_set and test_pvary_eager: a set of
    axis names (no order) and pcast outside shard_map."""
    P, seen = jax.sharding.PartitionSpec, []
    mesh = _mesh(jax, (2,), ("x",))

    def body(names_of, x):
        seen.append(_outcome(lambda: jax.lax.pcast(x, names_of(x), to="varying")))
    for names_of in (lambda x: {"x"}, lambda x: x.aval.mat.varying):
        for run in (jax.jit, lambda f: f):
            run(_smap(jax, functools.partial(body, names_of), P(), None, mesh=mesh))(
                np.arange(8.0))
    seen.append(_outcome(lambda: jax.lax.pcast(np.arange(8.0), "x", to="varying")))
    return seen


def test_pcast_misuse_as_jax():
    """JAX's errors; refjax's name the lax function first."""
    ours, theirs = _on_both(_pcast_misuse)
    assert [(cls, "lax.pcast: " + text) for cls, text in theirs] == ours
    assert [cls for cls, _ in ours] == [TypeError] * 4 + [ValueError]


def _no_sharding(text):
    """A struct's repr without JAX's sharding on the body's Manual mesh (refjax's abstract
    mesh inside a shard_map body does not show its axes as Manual, so it names none)."""
    return re.sub(r", sharding=NamedSharding\(mesh=AbstractMesh\(.*?\), spec=P\(.*?\)\)", "",
                  text)


def _filled_like(jax):
    """Values filled like a varying one (lax.full_like, jnp's *_like, of a value or of
    eval_shape's struct, also inside a vmap): the printed body and what typeof says."""
    P, seen = jax.sharding.PartitionSpec, []
    lax, jnp = jax.lax, jax.numpy

    def body(x, p):
        def per_row(v):
            struct = jax.eval_shape(lambda a, b: (a * b).sum(), v, p)
            seen.extend([_no_sharding(repr(struct)), str(jax.typeof(struct)),
                         str(jax.typeof(lax.full_like(struct, 1)))])
            return v
        jax.vmap(per_row)(x)
        return (lax.full_like(x, 1) * 2, jnp.zeros_like(x), jnp.full_like(x, 2.0),
                lax.full_like(x, 3, shape=(3,)), jnp.zeros(3))
    f = _smap(jax, body, (P("x"), P()), (P("x"),) * 4 + (P(),), mesh=_mesh(jax, (2,), ("x",)))
    text = str(jax.make_jaxpr(f)(np.arange(8.0).reshape(4, 2), np.ones(2)))
    return text, seen


def test_values_filled_like_a_varying_one_vary_as_jax():
    """JAX's full_like makes its fill vary where its model does (a pvary after the
    broadcast); eval_shape's structs carry the manual axis type, which typeof reads."""
    ours, theirs = _on_both(_filled_like)
    assert ours == theirs
    assert ours[0].count("pvary[axes=('x',)]") == 6
    assert ours[1][1:] == ["float32[]{V:x}"] * 2


def _replication_errors(jax):
    """Outputs claimed replicated that vary, under one prefix spec: JAX names the spec's
    place in out_specs for each (under jit) or the first (eagerly); and a custom_vjp whose
    bwd rule returns an invariant cotangent for a varying input."""
    P, jnp = jax.sharding.PartitionSpec, jax.numpy

    def sums(x, y, z):
        return [jnp.expand_dims(a.sum(), 0) for a in (x, y, z)]
    f = _smap(jax, sums, (P(None), P("x"), P(("x", "y"))), P(None),
              mesh=_mesh(jax, (2, 2), ("x", "y")))
    out = [_outcome(lambda: run(f)(*[jnp.arange(4)] * 3)) for run in (jax.jit, lambda g: g)]

    @jax.custom_vjp
    def g(x):
        return jax.lax.psum(x, "i")
    g.defvjp(lambda x: (g(x), None), lambda _, ct: (jax.lax.psum(ct, "i"),))
    h = _smap(jax, lambda x: g(g(x)), P("i"), P(), mesh=_mesh(jax, (4,), ("i",)))
    return out + [_outcome(lambda: jax.grad(lambda x: h(x).sum())(jnp.ones(4)))]


def test_replication_and_custom_vjp_vma_errors_as_jax():
    ours, theirs = _on_both(_replication_errors)
    (jit_cls, jit_text), (eager_cls, eager_text), vjp = ours
    assert ours[0] == theirs[0] and jit_text.count("* out_specs is P(None,)") == 2
    # JAX's eager shard_map names its own wrapper, not the function
    assert (eager_cls, eager_text) == (theirs[1][0], theirs[1][1].replace("_rem_singleton",
                                                                          "sums"))
    assert vjp == theirs[2] and vjp[0] is ValueError and "manual axis types" in vjp[1]


def _nested_types(jax, dim1, dim2):
    """shard_map_test.py's test_nested_partial_auto_1d: a shard_map over 'y' inside one over
    'x' (Explicit mesh, jitted): the inner body's inputs vary over the outer's axes too."""
    P, seen = jax.sharding.PartitionSpec, []
    mesh = jax.make_mesh((2, 2, 2), ("x", "y", "z"),
                         axis_types=(jax.sharding.AxisType.Explicit,) * 3)

    def typed(name, x, out):
        seen.append((name, sorted(x.aval.mat.varying), sorted(out.aval.mat.varying)))
        return out

    def inner(x):
        return typed("inner", x, x * x)

    def outer(x):
        return typed("outer", x, jax.shard_map(inner, in_specs=P(None, dim2),
                                               out_specs=P(None, dim2), axis_names={"y"})(x))
    f = jax.jit(lambda x: jax.shard_map(outer, in_specs=P(dim1, None), out_specs=P(dim1, None),
                                        axis_names={"x"})(x))
    with jax.set_mesh(mesh):
        value = f(jax.device_put(np.arange(32.0).reshape(4, 8), P(dim1, dim2)))
    return _as_numpy(value), seen


@pytest.mark.parametrize("dims", [("x", "y"), (None, "y"), ("x", None), (None, None)])
def test_nested_shard_map_bodies_typed_as_jax(dims):
    ours, theirs = _on_both(lambda jax: _nested_types(jax, *dims))
    assert ours == theirs


def _structs(jax):
    """A ShapeDtypeStruct as a model: its type, filled values like it, JAX's TypeError for a
    manual_axis_type that is not one, and an array function refusing it."""
    s = jax.ShapeDtypeStruct((2,), np.float32)
    return [_outcome(f) for f in (
        lambda: str(jax.typeof(s)), lambda: jax.lax.full_like(s, 1),
        lambda: jax.numpy.zeros_like(s), lambda: jax.numpy.ones_like(s, dtype=np.int32),
        lambda: jax.ShapeDtypeStruct((2,), np.float32, manual_axis_type=3),
        lambda: jax.numpy.add(s, 1))]


def test_shape_dtype_structs_as_models_as_jax():
    ours, theirs = _on_both(_structs)
    assert ours[:5] == theirs[:5] and ours[4][0] is TypeError
    assert ours[5][0] is theirs[5][0] is TypeError  # JAX's text names its own class path


def _unbound(jax):
    """shard_map_test.py's test_psum_not_under_shmap_error, and pcast's counterpart: under
    jit outside any shard_map."""
    lax = jax.lax
    return [_outcome(lambda f=f: jax.jit(f)(np.arange(4.0))) for f in (
        lambda x: lax.psum(x, "x"), lambda x: lax.pcast(x, "x", to="varying"))]


@pytest.mark.backends("numpy_ref", "xla")
def test_collectives_outside_shard_map_under_jit_as_jax():
    ours, theirs = _on_both(_unbound)
    assert ours == theirs and [cls for cls, _ in ours] == [NameError] * 2
