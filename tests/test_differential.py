"""Every primitive's spec samples on the xla backend against the numpy_ref oracle."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import refjax
from refjax.backends.base import get_backend
from refjax.core.primitive import all_primitives
from refjax.spec import spec_for
from refjax.spec.checks import (as_list, assert_close, assert_outputs_match, budget, enable_x64,
                                float0_zeros, is_inexact, layouts, tangents_like)
from refjax.spec.base import refjax_array

# Built at collection, before any test starts JAX (it sets JAX's CPU device count). When the
# backend cannot be built this module errors: the comparison must not be silently skipped.
XLA = get_backend("xla")

NAMES = sorted(all_primitives())
each_primitive = pytest.mark.parametrize("name", NAMES)


def _on(backend, spec, sample, jit=False):
    """The primitive applied to the sample on `backend` (values created there)."""
    with refjax.backend(backend):
        f = lambda *args: spec.bind(*args, **sample.params)  # noqa: E731
        return as_list((refjax.jit(f) if jit else f)(*sample.to_refjax()))


@each_primitive
@given(data=st.data())
@budget(0.4)
def test_xla_matches_numpy_ref(name, data):
    spec = spec_for(name)
    x64 = data.draw(st.booleans(), label="x64")
    with enable_x64(x64):
        sample = data.draw(spec.samples(x64), label="sample")
        expected = _on("numpy_ref", spec, sample)
        for jit in (False, True):
            actual = _on("xla", spec, sample, jit)
            what = f"{name} on xla{' under jit' if jit else ''}"
            assert_outputs_match(actual, expected, spec, what=what)
            assert layouts(actual) == layouts(expected), f"{what}: layouts differ"


def _vjp_on(backend, spec, sample, cotangents):
    """The pullback of the cotangents, as one jitted computation (one XLA compilation)."""
    with refjax.backend(backend):
        args = sample.to_refjax()
        idx = spec.diff_args(sample.sig)

        def f(*vals):
            full = list(args)
            for i, v in zip(idx, vals):
                full[i] = v
            return as_list(spec.bind(*full, **sample.params))

        def pull(primals, cts):
            outs, pullback = refjax.vjp(f, *primals)
            return pullback([c if c is not None else float0_zeros(o.shape)
                             for c, o in zip(cts, outs)])
        cts = [refjax_array(c) if c is not None else None for c in cotangents]
        return refjax.jit(pull)([args[i] for i in idx], cts)


@each_primitive
@given(data=st.data())
@budget(0.25)
def test_xla_derivatives_and_batching_match_numpy_ref(name, data):
    spec = spec_for(name)
    sample = data.draw(spec.samples(), label="sample")
    size = 2
    batched = sample._replace(values=tuple(np.stack([v] * size) for v in sample.values))
    in_axes = (0,) * len(sample.values)
    results = []
    for backend in ("numpy_ref", "xla"):
        with refjax.backend(backend):
            f = lambda *a: spec.bind(*a, **sample.params)  # noqa: E731
            g = refjax.vmap(f, in_axes=in_axes) if in_axes else f
            results.append(as_list(refjax.jit(g)(*batched.to_refjax())))
    assert_outputs_match(results[1], results[0], spec, what=f"jit(vmap({name})) on xla")
    if spec.nondiff or spec.reverse == "raises":
        return
    with enable_x64(True):
        sample = data.draw(spec.diff_samples(), label="diff sample")
        outs = _on("numpy_ref", spec, sample)
        cts = [data.draw(tangents_like(np.dtype(o.dtype).name, tuple(o.shape)), label="ct")
               if is_inexact(o) else None for o in outs]
        expected = _vjp_on("numpy_ref", spec, sample, cts)
        assert_close(_vjp_on("xla", spec, sample, cts), expected, (1e-8, 1e-10),
                     what=f"vjp({name}) on xla")
