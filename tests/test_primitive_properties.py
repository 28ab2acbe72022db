"""Generic property tests of every registered primitive, driven by its entry in refjax.spec."""
import numpy as np
import pytest
from hypothesis import given, note, strategies as st

import jax
import refjax
from refjax.core.jaxpr import typecheck_jaxpr
from refjax.core.primitive import all_primitives
from refjax.core.transforms.linearize import linearize_flat
from refjax.spec import missing_specs, spec_for
from refjax.spec.base import UNCHECKED, arg_values, jax_array, no_args, refjax_array
from refjax.spec.checks import (as_list, assert_close, assert_outputs_match, budget, dtype_name,
                                enable_x64, float0_zeros, is_float0, is_inexact, layouts,
                                pairing, pairing_scale, tangents_like)

NAMES = sorted(all_primitives())
each_primitive = pytest.mark.parametrize("name", NAMES)


def test_every_registered_primitive_has_a_spec():
    assert not missing_specs(), f"primitives without a spec entry: {missing_specs()}"


@each_primitive
def test_spec_is_consistent_with_the_rules(name):
    spec, prim = spec_for(name), all_primitives()[name]
    transposable = spec.linear_args is not no_args or spec.reverse == "raises"
    assert transposable == (prim.transpose is not None), \
        f"{name}: spec linear_args / reverse and the presence of a transpose rule disagree"
    assert spec.reverse in ("ok", "raises") and spec.forward in ("ok", "raises")
    assert (spec.nondiff is None) == (spec.diff_args is not no_args), \
        f"{name}: the spec must declare either differentiable args or `nondiff`"
    assert spec.nondiff in (None, "zero", "raises")


# ---------------------------------------------------------------- helpers

def _draw_sample(data, spec, x64=False):
    return data.draw(spec.samples(x64), label="sample")


def _bound(spec, params):
    def f(*args):
        return spec.bind(*args, **params)
    return f


def _with(args, idx, values):
    full = list(args)
    for i, v in zip(idx, values):
        full[i] = v
    return full


def _partial(spec, args, idx, params):
    """The primitive as a function of the arguments at idx (list out), the others fixed."""
    def f(*vals):
        return as_list(spec.bind(*_with(args, idx, vals), **params))
    return f


def _draw_like(data, values, label):
    return [data.draw(tangents_like(dtype_name(v), tuple(v.shape)), label=label) for v in values]


def _cotangents(data, outs):
    """Random cotangents for inexact outputs, float0 zeros for the others."""
    return [refjax_array(data.draw(tangents_like(dtype_name(o), tuple(o.shape)), label="ct"))
            if is_inexact(o) else float0_zeros(o.shape) for o in outs]


# ---------------------------------------------------------------- eager vs JAX, dtypes, errors

@each_primitive
@given(data=st.data())
@budget(0.5)
def test_eager_matches_jax(name, data):
    spec = spec_for(name)
    x64 = data.draw(st.booleans(), label="x64")
    with enable_x64(x64):
        sample = _draw_sample(data, spec, x64)
        expected = spec.reference(jax, *sample.to_jax(), **sample.params)
        actual = spec.bind(*sample.to_refjax(), **sample.params)
        assert_outputs_match(actual, expected, spec, what=f"{name} vs jax.lax")


@each_primitive
@given(data=st.data())
@budget(0.5)
def test_rejects_the_dtypes_jax_rejects(name, data):
    spec = spec_for(name)
    rejected = spec.rejected_dtypes()
    if not rejected:
        return
    sample = data.draw(spec.samples(dtypes=rejected), label="sample")
    with pytest.raises(TypeError) as info:
        spec.bind(*sample.to_refjax(), **sample.params)
    assert name in str(info.value), f"the error does not name {name!r}: {info.value}"
    jax_error = spec.jax_dtype_error(sample.sig.args[0].dtype) if sample.sig.args else TypeError
    if jax_error is UNCHECKED:
        return
    with pytest.raises(jax_error):
        spec.reference(jax, *sample.to_jax(), **sample.params)


@each_primitive
def test_invalid_inputs_raise_the_declared_error(name):
    spec = spec_for(name)
    for case in spec.invalid_cases():
        with pytest.raises(case.error) as info:
            spec.bind(*map(refjax_array, case.args), **case.params)
        assert name in str(info.value), f"{case.what}: the error does not name {name!r}"
        with pytest.raises(case.error):
            refjax.make_jaxpr(_bound(spec, case.params))(*map(refjax_array, case.args))
        if case.jax_raises():
            with pytest.raises(Exception) as jax_info:
                spec.reference(jax, *map(jax_array, case.args), **case.params)
            assert isinstance(jax_info.value, case.jax_error or case.error), \
                f"{case.what}: JAX raises {type(jax_info.value).__name__}: {jax_info.value}"


# ---------------------------------------------------------------- jit

@each_primitive
@given(data=st.data())
def test_jit_matches_eager(name, data):
    spec = spec_for(name)
    sample = _draw_sample(data, spec)
    args, f = sample.to_refjax(), _bound(spec, sample.params)
    closed = refjax.make_jaxpr(f)(*args)
    note(f"jaxpr:\n{closed}")
    typecheck_jaxpr(closed.jaxpr)
    jitted, eager = refjax.jit(f)(*args), f(*args)
    assert_outputs_match(jitted, eager, spec, exact=True, what=f"jit({name})")
    assert layouts(jitted) == layouts(eager), f"jit({name}): the layouts differ from eager"


# ---------------------------------------------------------------- derivatives

_FD_EPS = 1e-5


def _finite_difference(f, args, idx, tangents):
    def at(step):
        return f(*[refjax_array(np.asarray(args[i]) + step * t, args[i].weak_type)
                   for i, t in zip(idx, tangents)])
    plus, minus = at(_FD_EPS), at(-_FD_EPS)
    return [(np.asarray(p) - np.asarray(m)) / (2 * _FD_EPS) if is_inexact(p) else None
            for p, m in zip(plus, minus)]


def _check_nondiff(spec, sample, data):
    """`zero`: tangents (of every inexact argument) give zero / float0 output tangents;
    `raises`: the spec's nondiff_error naming the primitive."""
    args = sample.to_refjax()
    idx = tuple(i for i, a in enumerate(args) if is_inexact(a))
    f = _partial(spec, args, idx, sample.params)
    primals = [args[i] for i in idx]
    tangents = [refjax_array(t) for t in _draw_like(data, primals, "tangent")]
    if spec.nondiff == "raises":
        with pytest.raises(spec.nondiff_error, match=spec.name):
            refjax.jvp(f, primals, tangents)
        return
    _, out_tangents = refjax.jvp(f, primals, tangents)
    for o, t in zip(f(*primals), out_tangents):
        assert is_float0(t.dtype) != is_inexact(o), f"tangent dtype {t.dtype} for output {o.dtype}"
        if not is_float0(t.dtype):
            assert not np.asarray(t).any(), f"{spec.name} declares zero tangents, got {t}"


@each_primitive
@given(data=st.data())
def test_jvp_matches_finite_differences(name, data):
    spec = spec_for(name)
    with enable_x64(True):
        sample = data.draw(spec.diff_samples(), label="sample")
        if spec.nondiff:
            return _check_nondiff(spec, sample, data)
        args, idx = sample.to_refjax(), spec.diff_args(sample.sig)
        f = _partial(spec, args, idx, sample.params)
        raw = _draw_like(data, [args[i] for i in idx], "tangent")
        if spec.forward == "raises":
            with pytest.raises(TypeError):
                refjax.jvp(f, [args[i] for i in idx], [refjax_array(t) for t in raw])
            return
        primals_out, tangents_out = refjax.jvp(f, [args[i] for i in idx],
                                               [refjax_array(t) for t in raw])
        assert_outputs_match(primals_out, f(*[args[i] for i in idx]), exact=True, what="jvp primal")
        fd = _finite_difference(f, args, idx, raw)
        for k, (t, d) in enumerate(zip(tangents_out, fd)):
            if d is None:
                assert is_float0(t.dtype), f"output {k}: integer output with tangent {t.dtype}"
            else:
                assert_close(t, d, spec.fd_tol, what=f"jvp output {k} vs finite differences")


def _dot_product_test(spec, sample, idx, data, require_primitive):
    """<J v, w> == <v, J^T w>: linearize gives J v, vjp (transpose rules) gives J^T w."""
    args = sample.to_refjax()
    f = _partial(spec, args, idx, sample.params)
    primals = [args[i] for i in idx]
    outs, f_vjp = refjax.vjp(f, *primals)
    raw = _draw_like(data, primals, "v")
    v = [refjax_array(t) for t in raw]
    w = _cotangents(data, outs)
    jtw = f_vjp(w)
    if spec.forward == "raises":  # no forward mode (custom_vjp): J v by finite differences
        jv, (rtol, atol) = [d if d is not None else np.zeros(0) for d in
                            _finite_difference(f, args, idx, raw)], spec.fd_tol
    else:
        jv, (rtol, atol) = refjax.linearize(f, *primals)[1](*v), (1e-9, 1e-12)
    lhs = sum(pairing(a, b) for a, b in zip(jv, w))
    rhs = sum(pairing(a, b) for a, b in zip(v, jtw))
    scale = sum(map(pairing_scale, jv, w)) + sum(map(pairing_scale, v, jtw))
    assert abs(lhs - rhs) <= rtol * scale + atol, f"<Jv, w> = {lhs} but <v, J^T w> = {rhs}"
    if require_primitive:
        _, jaxpr, _ = linearize_flat(f, primals)
        note(f"linear jaxpr:\n{jaxpr}")
        assert spec.primitive in _primitives_in(jaxpr), \
            f"the linearized jaxpr does not contain {spec.name}: its transpose rule never ran"


def _primitives_in(jaxpr):
    """The primitives of a jaxpr's equations, including those of the jaxprs in their params
    (jit, cond branches, shard_map bodies...)."""
    found = set()
    for eqn in jaxpr.eqns:
        found.add(eqn.primitive)
        for value in eqn.params.values():
            for sub in value if isinstance(value, tuple) else (value,):
                inner = getattr(sub, "jaxpr", None)
                if inner is not None and hasattr(inner, "eqns"):
                    found |= _primitives_in(inner)
    return found


@each_primitive
@given(data=st.data())
def test_transpose_is_adjoint_of_jvp(name, data):
    spec = spec_for(name)
    with enable_x64(True):
        sample = data.draw(spec.diff_samples(), label="sample")
        if spec.reverse == "raises":
            return _check_no_reverse_mode(spec, sample)
        linear = spec.linear_args(sample.sig)
        for subset in [(i,) for i in linear if len(linear) > 1]:
            _dot_product_test(spec, sample, subset, data, require_primitive=False)
        if linear:
            # Jointly, the tangents must flow through the primitive (an argument alone may
            # not matter, e.g. an operand a cond branch ignores).
            _dot_product_test(spec, sample, linear, data, require_primitive=True)


@each_primitive
@given(data=st.data())
def test_vjp_is_adjoint_of_jvp(name, data):
    spec = spec_for(name)
    with enable_x64(True):
        sample = data.draw(spec.diff_samples(), label="sample")
        if spec.nondiff:
            return _check_nondiff_vjp(spec, sample, data)
        if spec.reverse == "raises":
            return _check_no_reverse_mode(spec, sample)
        _dot_product_test(spec, sample, spec.diff_args(sample.sig), data, require_primitive=False)


def _check_no_reverse_mode(spec, sample):
    """Forward mode only: vjp raises a ValueError (as JAX's while_loop does)."""
    args, idx = sample.to_refjax(), spec.diff_args(sample.sig)
    f = _partial(spec, args, idx, sample.params)
    with pytest.raises(ValueError):
        outs, f_vjp = refjax.vjp(f, *[args[i] for i in idx])
        f_vjp([refjax_array(np.zeros(o.shape, o.dtype)) if is_inexact(o) else
               float0_zeros(o.shape) for o in outs])


def _check_nondiff_vjp(spec, sample, data):
    args = sample.to_refjax()
    idx = tuple(i for i, a in enumerate(args) if is_inexact(a))
    f = _partial(spec, args, idx, sample.params)
    primals = [args[i] for i in idx]
    if spec.nondiff == "raises":
        with pytest.raises(spec.nondiff_error, match=spec.name):
            refjax.vjp(f, *primals)
        return
    outs, f_vjp = refjax.vjp(f, *primals)
    for ct in f_vjp(_cotangents(data, outs)):
        assert not np.asarray(ct).any(), f"{spec.name} declares zero derivatives, got {ct}"


# ---------------------------------------------------------------- vmap

def _in_axes_configs(data, sample):
    """Each argument batched alone, then all together, at random (also negative) positions."""
    n = len(sample.sig.args)
    subsets = [(i,) for i in range(n)] + ([tuple(range(n))] if n > 1 else [])
    configs = []
    for subset in subsets:
        axes = [None] * n
        for i in subset:
            rank = len(sample.sig.args[i].shape)
            axes[i] = data.draw(st.integers(-(rank + 1), rank), label=f"in_axes[{i}]")
        configs.append(tuple(axes))
    return configs


def _members(data, sample, size):
    """`size` samples sharing the signature (the first is `sample`)."""
    more = [data.draw(st.tuples(*[arg_values(a) for a in sample.sig.args]), label="member")
            for _ in range(size - 1)]
    return [sample.values] + more


def _batched_args(sample, members, in_axes):
    args = []
    for i, (a, ax) in enumerate(zip(sample.sig.args, in_axes)):
        value = members[0][i] if ax is None else np.stack([m[i] for m in members], axis=ax)
        args.append(refjax_array(value, a.weak))
    return args


def _loop(spec, sample, members, in_axes):
    """The primitive applied to each batch member, stacked along a new leading axis."""
    results = []
    for m in members:
        vals = [m[i] if ax is not None else members[0][i] for i, ax in enumerate(in_axes)]
        results.append(as_list(spec.bind(*[refjax_array(v, a.weak) for v, a in
                                           zip(vals, sample.sig.args)], **sample.params)))
    return [refjax_array(np.stack([np.asarray(r[k]) for r in results]), results[0][k].weak_type)
            for k in range(len(results[0]))]


def _vmap_case(spec, sample, members, in_axes, jit=False):
    if not in_axes:  # no operands (iota): map over an unused argument
        f = lambda _: spec.bind(**sample.params)  # noqa: E731
        g = refjax.jit(refjax.vmap(f)) if jit else refjax.vmap(f)
        return as_list(g(np.zeros(len(members), np.float32)))
    f = _bound(spec, sample.params)
    g = refjax.vmap(f, in_axes=in_axes)
    return as_list((refjax.jit(g) if jit else g)(*_batched_args(sample, members, in_axes)))


@each_primitive
@given(data=st.data())
def test_vmap_matches_loop(name, data):
    spec = spec_for(name)
    sample = _draw_sample(data, spec)
    members = _members(data, sample, data.draw(st.integers(1, 3), label="batch size"))
    for in_axes in _in_axes_configs(data, sample) or [()]:
        note(f"in_axes={in_axes}")
        expected = _loop(spec, sample, members, in_axes)
        actual = _vmap_case(spec, sample, members, in_axes)
        assert_outputs_match(actual, expected, spec, what=f"vmap({name}, in_axes={in_axes})")


# ---------------------------------------------------------------- transformations under jit

def _loss(spec, args, idx, params, weights):
    """A real scalar: sum over outputs of Re(sum(out * weight)), as a function of args[idx]."""
    lax = refjax.lax

    def loss(*vals):
        total = 0.0
        for o, w in zip(as_list(spec.bind(*_with(args, idx, vals), **params)), weights):
            if w is not None:
                s = lax.reduce_sum(lax.mul(o, w), tuple(range(len(o.shape))))
                total = total + (lax.real(s) if dtype_name(s).startswith("complex") else s)
        return total
    return loss


@each_primitive
@given(data=st.data())
@budget(0.5)
def test_jit_commutes_with_grad_and_vmap(name, data):
    spec = spec_for(name)
    sample = _draw_sample(data, spec)
    members = _members(data, sample, 2)
    for in_axes in _in_axes_configs(data, sample)[-1:] or [()]:
        assert_outputs_match(_vmap_case(spec, sample, members, in_axes, jit=True),
                             _vmap_case(spec, sample, members, in_axes), spec,
                             what=f"jit(vmap({name}))")
    if spec.nondiff:
        return
    with enable_x64(True):
        sample = data.draw(spec.diff_samples(), label="diff sample")
        args, idx = sample.to_refjax(), spec.diff_args(sample.sig)
        outs = as_list(spec.bind(*args, **sample.params))
        weights = [refjax_array(data.draw(tangents_like(dtype_name(o), tuple(o.shape))))
                   if is_inexact(o) else None for o in outs]
        loss = _loss(spec, args, idx, sample.params, weights)
        argnums = tuple(range(len(idx)))
        primals = [args[i] for i in idx]
        if spec.reverse == "raises":
            for g in (refjax.grad(loss, argnums), refjax.jit(refjax.grad(loss, argnums))):
                with pytest.raises(ValueError):
                    g(*primals)
            return
        eager = refjax.grad(loss, argnums)(*primals)
        tol = (1e-10, 1e-12)
        assert_close(refjax.jit(refjax.grad(loss, argnums))(*primals), eager, tol, "jit(grad)")
        assert_close(refjax.grad(refjax.jit(loss), argnums)(*primals), eager, tol, "grad(jit)")
