"""The derivative and batching checks: JVP vs finite differences, transposes by the dot-product
test, vmap vs a loop, jit commuting with grad and vmap (see checks.py for the conventions)."""
import contextlib

import numpy as np
from hypothesis import note, strategies as st

from ..backends.base import backend as on_backend
from ..spec.base import arg_values, refjax_array
from ..spec.checks import (as_list, assert_close, dtype_name, is_float0, is_inexact, pairing,
                           pairing_scale, tangents_like)
from ..spec.checks import float0_zeros
from .assertions import ConformanceError, assert_conforms
from .checks import (JAX, NotApplicable, _bound, _cotangents, _draw_like, _partial, _with,
                     on_oracle, raises)
from .oracle import enable_x64

_FD_EPS = 1e-5


def _backend_only(target, check):
    if target == JAX:
        raise NotApplicable(f"the {check} check runs on refjax backends, not on real JAX")


def _finite_difference(f, args, idx, tangents):
    def at(step):
        return f(*[refjax_array(np.asarray(args[i]) + step * t, args[i].weak_type)
                   for i, t in zip(idx, tangents)])
    plus, minus = at(_FD_EPS), at(-_FD_EPS)
    return [(np.asarray(p) - np.asarray(m)) / (2 * _FD_EPS) if is_inexact(p) else None
            for p, m in zip(plus, minus)]


def _nondiff_jvp(spec, sample, data):
    """`zero`: tangents (of every inexact argument) give zero / float0 output tangents;
    `raises`: the spec's nondiff_error naming the primitive."""
    import refjax
    args = sample.to_refjax()
    idx = tuple(i for i, a in enumerate(args) if is_inexact(a))
    f = _partial(spec, args, idx, sample.params)
    primals = [args[i] for i in idx]
    tangents = [refjax_array(t) for t in _draw_like(data, primals, "tangent")]
    if spec.nondiff == "raises":
        with raises(spec.nondiff_error, spec.name, f"jvp({spec.name})"):
            refjax.jvp(f, primals, tangents)
        return
    _, out_tangents = refjax.jvp(f, primals, tangents)
    for o, t in zip(f(*primals), out_tangents):
        if is_float0(t.dtype) == is_inexact(o):
            raise ConformanceError(f"tangent dtype {t.dtype} for output {o.dtype}")
        if not is_float0(t.dtype) and np.asarray(t).any():
            raise ConformanceError(f"{spec.name} declares zero tangents, got {t}")


def check_jvp(spec, data, target):
    """JVP (float64) equals central finite differences; nondifferentiable primitives give zero
    tangents or raise as their spec declares."""
    _backend_only(target, "jvp")
    with on_backend(target), enable_x64(True):
        sample = data.draw(spec.diff_samples(), label="sample")
        if spec.nondiff:
            return _nondiff_jvp(spec, sample, data)
        _jvp_vs_fd(spec, sample, data)


def _jvp_vs_fd(spec, sample, data):
    import refjax
    args, idx = sample.to_refjax(), spec.diff_args(sample.sig)
    f = _partial(spec, args, idx, sample.params)
    primals = [args[i] for i in idx]
    raw = _draw_like(data, primals, "tangent")
    if spec.forward == "raises":
        with raises(TypeError, what=f"jvp({spec.name})"):
            refjax.jvp(f, primals, [refjax_array(t) for t in raw])
        return
    primals_out, tangents_out = refjax.jvp(f, primals, [refjax_array(t) for t in raw])
    assert_conforms(primals_out, f(*primals), exact=True, what="jvp primal")
    for k, (t, d) in enumerate(zip(tangents_out, _finite_difference(f, args, idx, raw))):
        if d is None and not is_float0(t.dtype):
            raise ConformanceError(f"output {k}: integer output with tangent {t.dtype}")
        if d is not None:
            assert_close(t, d, spec.fd_tol, what=f"jvp output {k} vs finite differences")


def dot_product_test(spec, sample, idx, data, require_primitive):
    """<J v, w> == <v, J^T w>: linearize gives J v, vjp (transpose rules) gives J^T w."""
    import refjax
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
    if not abs(lhs - rhs) <= rtol * scale + atol:
        raise ConformanceError(f"{spec.name}: <Jv, w> = {lhs} but <v, J^T w> = {rhs}")
    if require_primitive:
        _require_in_linear_jaxpr(spec, f, primals)


def _require_in_linear_jaxpr(spec, f, primals):
    from refjax.core.transforms.linearize import linearize_flat
    _, jaxpr, _ = linearize_flat(f, primals)
    note(f"linear jaxpr:\n{jaxpr}")
    if spec.primitive not in primitives_in(jaxpr):
        raise ConformanceError(f"the linearized jaxpr does not contain {spec.name}: its "
                               "transpose rule never ran")


def primitives_in(jaxpr):
    """The primitives of a jaxpr's equations, including those of the jaxprs in their params
    (jit, cond branches, shard_map bodies...)."""
    found = set()
    for eqn in jaxpr.eqns:
        found.add(eqn.primitive)
        for value in eqn.params.values():
            for sub in value if isinstance(value, tuple) else (value,):
                inner = getattr(sub, "jaxpr", None)
                if inner is not None and hasattr(inner, "eqns"):
                    found |= primitives_in(inner)
    return found


def check_transpose(spec, data, target):
    """Each linear argument's transpose, alone and jointly, passes the dot-product test."""
    _backend_only(target, "transpose")
    with on_backend(target), enable_x64(True):
        sample = data.draw(spec.diff_samples(), label="sample")
        if spec.reverse == "raises":
            return _no_reverse_mode(spec, sample)
        linear = spec.linear_args(sample.sig)
        if not linear:
            raise NotApplicable(f"{spec.name} is not linear in any argument")
        for subset in [(i,) for i in linear if len(linear) > 1]:
            dot_product_test(spec, sample, subset, data, require_primitive=False)
        # Jointly, the tangents must flow through the primitive (an argument alone may not
        # matter, e.g. an operand a cond branch ignores).
        dot_product_test(spec, sample, linear, data, require_primitive=True)


def check_vjp(spec, data, target):
    """vjp is the adjoint of the JVP (dot-product test); zero or raising as the spec says."""
    _backend_only(target, "vjp")
    with on_backend(target), enable_x64(True):
        sample = data.draw(spec.diff_samples(), label="sample")
        if spec.nondiff:
            return _nondiff_vjp(spec, sample, data)
        if spec.reverse == "raises":
            return _no_reverse_mode(spec, sample)
        dot_product_test(spec, sample, spec.diff_args(sample.sig), data, require_primitive=False)


def _no_reverse_mode(spec, sample):
    """Forward mode only: vjp raises a ValueError (as JAX's while_loop does)."""
    import refjax
    args, idx = sample.to_refjax(), spec.diff_args(sample.sig)
    f = _partial(spec, args, idx, sample.params)
    with raises(ValueError, what=f"vjp({spec.name})"):
        outs, f_vjp = refjax.vjp(f, *[args[i] for i in idx])
        f_vjp([refjax_array(np.zeros(o.shape, o.dtype)) if is_inexact(o) else
               float0_zeros(o.shape) for o in outs])


def _nondiff_vjp(spec, sample, data):
    import refjax
    args = sample.to_refjax()
    idx = tuple(i for i, a in enumerate(args) if is_inexact(a))
    f = _partial(spec, args, idx, sample.params)
    primals = [args[i] for i in idx]
    if spec.nondiff == "raises":
        with raises(spec.nondiff_error, spec.name, f"vjp({spec.name})"):
            refjax.vjp(f, *primals)
        return
    outs, f_vjp = refjax.vjp(f, *primals)
    for ct in f_vjp(_cotangents(data, outs)):
        if np.asarray(ct).any():
            raise ConformanceError(f"{spec.name} declares zero derivatives, got {ct}")


# ---------------------------------------------------------------- vmap

def in_axes_configs(data, sample):
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


def members(data, sample, size):
    """`size` samples sharing the signature (the first is `sample`)."""
    more = [data.draw(st.tuples(*[arg_values(a) for a in sample.sig.args]), label="member")
            for _ in range(size - 1)]
    return [sample.values] + more


def _batched_args(sample, group, in_axes):
    args = []
    for i, (a, ax) in enumerate(zip(sample.sig.args, in_axes)):
        value = group[0][i] if ax is None else np.stack([m[i] for m in group], axis=ax)
        args.append(refjax_array(value, a.weak))
    return args


def _loop(spec, sample, group, in_axes):
    """The primitive applied to each batch member, stacked along a new leading axis."""
    results = []
    for m in group:
        vals = [m[i] if ax is not None else group[0][i] for i, ax in enumerate(in_axes)]
        results.append(as_list(spec.bind(*[refjax_array(v, a.weak) for v, a in
                                           zip(vals, sample.sig.args)], **sample.params)))
    return [refjax_array(np.stack([np.asarray(r[k]) for r in results]), results[0][k].weak_type)
            for k in range(len(results[0]))]


def vmap_case(spec, sample, group, in_axes, jit=False):
    """vmap (optionally under jit) of the primitive over the batch `group` with `in_axes`."""
    import refjax
    if not in_axes:  # no operands (iota): map over an unused argument
        f = lambda _: spec.bind(**sample.params)  # noqa: E731
        g = refjax.jit(refjax.vmap(f)) if jit else refjax.vmap(f)
        return as_list(g(np.zeros(len(group), np.float32)))
    g = refjax.vmap(_bound(spec, sample.params), in_axes=in_axes)
    return as_list((refjax.jit(g) if jit else g)(*_batched_args(sample, group, in_axes)))


def check_vmap(spec, data, target):
    """vmap equals a Python loop over the batch, for each argument batched alone and all
    together, at random axes."""
    _backend_only(target, "vmap")
    with on_backend(target):
        sample = data.draw(spec.samples(), label="sample")
        group = members(data, sample, data.draw(st.integers(1, 3), label="batch size"))
        for in_axes in in_axes_configs(data, sample) or [()]:
            note(f"in_axes={in_axes}")
            assert_conforms(vmap_case(spec, sample, group, in_axes),
                            _loop(spec, sample, group, in_axes), spec=spec,
                            what=f"vmap({spec.name}, in_axes={in_axes})")


def _loss(spec, args, idx, params, weights):
    """A real scalar: sum over outputs of Re(sum(out * weight)), as a function of args[idx]."""
    import refjax
    lax = refjax.lax

    def loss(*vals):
        total = 0.0
        for o, w in zip(as_list(spec.bind(*_with(args, idx, vals), **params)), weights):
            if w is not None:
                s = lax.reduce_sum(lax.mul(o, w), tuple(range(len(o.shape))))
                total = total + (lax.real(s) if dtype_name(s).startswith("complex") else s)
        return total
    return loss


def check_grad(spec, data, target):
    """jit(vmap) equals vmap, and jit(grad), grad(jit) equal grad (or raise as declared)."""
    _backend_only(target, "grad")
    with on_backend(target):
        sample = data.draw(spec.samples(), label="sample")
        group = members(data, sample, 2)
        for in_axes in in_axes_configs(data, sample)[-1:] or [()]:
            assert_conforms(vmap_case(spec, sample, group, in_axes, jit=True),
                            vmap_case(spec, sample, group, in_axes), spec=spec,
                            what=f"jit(vmap({spec.name}))")
        if spec.nondiff:
            return
        with enable_x64(True), _unless_filtered_out():
            _grad_under_jit(spec, data)


def _unless_filtered_out():
    """The float64 part of a check is skipped (the rest counts) when --dtypes leaves it out."""
    return contextlib.suppress(NotApplicable)


def _grad_under_jit(spec, data):
    import refjax
    sample = data.draw(spec.diff_samples(), label="diff sample")
    args, idx = sample.to_refjax(), spec.diff_args(sample.sig)
    outs = as_list(spec.bind(*args, **sample.params))
    weights = [refjax_array(data.draw(tangents_like(dtype_name(o), tuple(o.shape))))
               if is_inexact(o) else None for o in outs]
    loss = _loss(spec, args, idx, sample.params, weights)
    argnums, primals = tuple(range(len(idx))), [args[i] for i in idx]
    if spec.reverse == "raises":
        for g in (refjax.grad(loss, argnums), refjax.jit(refjax.grad(loss, argnums))):
            with raises(ValueError, what=f"grad({spec.name})"):
                g(*primals)
        return
    eager = refjax.grad(loss, argnums)(*primals)
    tol = (1e-10, 1e-12)
    assert_close(refjax.jit(refjax.grad(loss, argnums))(*primals), eager, tol, "jit(grad)")
    assert_close(refjax.grad(refjax.jit(loss), argnums)(*primals), eager, tol, "grad(jit)")


def check_batched_and_vjp_vs_oracle(spec, data, target):
    """jit(vmap) of the primitive and its jitted pullback on the target equal the oracle's."""
    _backend_only(target, "vjp-vs-oracle")
    sample = data.draw(spec.samples(), label="sample")
    batched = sample._replace(values=tuple(np.stack([v] * 2) for v in sample.values))
    results = [_jit_vmap_on(b, spec, batched) for b in ("numpy_ref", target)]
    assert_conforms(results[1], results[0], spec=spec, what=f"jit(vmap({spec.name})) on {target}")
    if spec.nondiff or spec.reverse == "raises":
        return
    with enable_x64(True), _unless_filtered_out():
        sample = data.draw(spec.diff_samples(), label="diff sample")
        outs = on_oracle(spec, sample)
        cts = [data.draw(tangents_like(np.dtype(o.dtype).name, tuple(o.shape)), label="ct")
               if is_inexact(o) else None for o in outs]
        expected = vjp_on("numpy_ref", spec, sample, cts)
        assert_close(vjp_on(target, spec, sample, cts), expected, (1e-8, 1e-10),
                     what=f"vjp({spec.name}) on {target}")


def _jit_vmap_on(backend, spec, batched):
    import refjax
    in_axes = (0,) * len(batched.values)
    with on_backend(backend):
        f = _bound(spec, batched.params)
        g = refjax.vmap(f, in_axes=in_axes) if in_axes else f
        return as_list(refjax.jit(g)(*batched.to_refjax()))


def vjp_on(backend, spec, sample, cotangents):
    """The pullback of the cotangents, as one jitted computation (one compilation)."""
    import refjax
    with on_backend(backend):
        args = sample.to_refjax()
        idx = spec.diff_args(sample.sig)
        f = _partial(spec, args, idx, sample.params)

        def pull(primals, cts):
            outs, pullback = refjax.vjp(f, *primals)
            return pullback([c if c is not None else float0_zeros(o.shape)
                             for c, o in zip(cts, outs)])
        cts = [refjax_array(c) if c is not None else None for c in cotangents]
        return refjax.jit(pull)([args[i] for i in idx], cts)
