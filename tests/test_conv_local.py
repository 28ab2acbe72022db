"""lax.conv_general_dilated_local (the unshared convolution) against real JAX and a Python loop:
values, dtypes and shapes over 1-D and 2-D dimension numbers, strides, paddings and dilations;
jit, vmap and gradients; the errors for kernels that do not fit."""
import functools

import jax
import numpy as np
import pytest

import refjax
from refjax import lax
from refjax.spec.checks import assert_close

both_backends = pytest.mark.backends("numpy_ref", "xla")
TOL = (2e-5, 2e-5)

# (lhs layout sizes, dimension_numbers, window_strides, padding, filter_shape, lhs_dilation,
#  rhs_dilation): 1-D and 2-D, default and permuted layouts, string and explicit paddings
CASES = [
    ((2, 3, 6, 5), None, (1, 1), "VALID", (3, 3), None, None),
    ((2, 6, 5, 3), ("NHWC", "HWIO", "NHWC"), (2, 1), "SAME", (3, 2), None, (1, 2)),
    ((2, 6, 5, 3), ("NHWC", "WIOH", "CWNH"), (1, 2), ((1, 0), (2, 1)), (2, 3), (2, 1), None),
    ((2, 3, 7), ("NCH", "OIH", "NCH"), (2,), "SAME", (3,), None, None),
    ((7, 2, 3), ("HNC", "IHO", "CNH"), (1,), "VALID", (2,), (1,), (2,)),
]


def _inputs(case, seed=0, out_features=4):
    """lhs and a kernel of the shape the case's patches need (taken from JAX's patches)."""
    shape, dn, strides, padding, window, lhs_d, rhs_d = case
    rng = np.random.RandomState(seed)
    lhs = rng.randn(*shape).astype(np.float32)
    patches = jax.eval_shape(lambda x: jax.lax.conv_general_dilated_patches(
        x, window, strides, padding, lhs_d, rhs_d, dn), lhs).shape
    spec = jax.lax.conv_dimension_numbers(shape, (1, 1) + window, dn)
    rhs_shape = [0] * len(shape)
    rhs_shape[spec.rhs_spec[0]] = out_features
    for r, o in zip(spec.rhs_spec[1:], spec.out_spec[1:]):
        rhs_shape[r] = patches[o]
    return lhs, rng.randn(*rhs_shape).astype(np.float32)


def _args(case):
    _, dn, strides, padding, window, lhs_d, rhs_d = case
    return dict(window_strides=strides, padding=padding, filter_shape=window,
                lhs_dilation=lhs_d, rhs_dilation=rhs_d, dimension_numbers=dn)


def _jax_local(lhs, rhs, case, **kwargs):
    """JAX's result, jitted: one compilation per case rather than one per primitive."""
    return jax.jit(functools.partial(jax.lax.conv_general_dilated_local, **_args(case),
                                     **kwargs))(lhs, rhs)


def _close(ours, theirs, tol=TOL):
    assert np.asarray(ours).dtype == np.asarray(theirs).dtype
    assert np.shape(ours) == np.shape(theirs)
    assert_close(ours, theirs, tol, "conv_general_dilated_local")


@both_backends
def test_values_shapes_and_dtypes_match_jax():
    inputs = [_inputs(case) for case in CASES]
    # JAX's results for every case from one jitted program: one compilation, not five
    theirs = jax.jit(lambda ins: [jax.lax.conv_general_dilated_local(*pair, **_args(case))
                                  for pair, case in zip(ins, CASES)])(inputs)
    for (lhs, rhs), case, want in zip(inputs, CASES, theirs):
        _close(lax.conv_general_dilated_local(lhs, rhs, **_args(case)), want)


@both_backends
def test_matches_a_python_loop_over_output_positions():
    """out[n, o, i] = sum over (c, k) of padded_lhs[n, c, i*stride + k] * rhs[o, c*K + k, i]: the
    kernel's 'I' dimension is input features major, then the window."""
    case = ((2, 3, 8), ("NCH", "OIH", "NCH"), (2,), ((2, 1),), (3,), None, None)
    lhs, rhs = _inputs(case, seed=1, out_features=5)
    padded = np.pad(lhs, ((0, 0), (0, 0), (2, 1)))
    want = np.zeros((2, 5, rhs.shape[2]))
    for n, o, i in np.ndindex(*want.shape):
        for c, k in np.ndindex(3, 3):
            want[n, o, i] += padded[n, c, 2 * i + k] * rhs[o, 3 * c + k, i]
    _close(lax.conv_general_dilated_local(lhs, rhs, **_args(case)), want.astype(np.float32))


@both_backends
def test_a_kernel_repeated_at_every_position_is_conv_general_dilated():
    """As JAX's own test: tiling a shared kernel over the output positions gives the shared
    convolution (1-, 2- and 3-D, permuted layouts, precisions)."""
    rng = np.random.RandomState(4)
    for dn, precision in ((("NCH", "OIH", "HCN"), None),
                          (("HNCW", "WIHO", "NWCH"), lax.Precision.HIGHEST),
                          (("NCHWD", "DOIHW", "NDHWC"), (lax.Precision.DEFAULT, "highest"))):
        n = len(dn[0]) - 2
        lhs = _laid_out(rng.randn(*(2, 3, 7, 6, 5)[:n + 2]), "NCHWD", dn[0])
        rhs = _laid_out(rng.randn(*(4, 3, 2, 3, 2)[:n + 2]), "OIHWD", dn[1])
        kwargs = dict(window_strides=(1, 2, 3)[:n], padding="SAME", rhs_dilation=(2, 1, 1)[:n],
                      dimension_numbers=dn, precision=precision)
        shared = lax.conv_general_dilated(lhs, rhs, **kwargs)
        # the kernel's 'I' dimension: input features major, then the window in rhs_spec order
        flat = np.moveaxis(rhs, (dn[1].index("O"), dn[1].index("I")), (0, 1))
        flat = flat.reshape(4, -1, *(1,) * n)
        positions = tuple(shared.shape[dn[2].index(c)] for c in "HWD"[:n])
        local = _laid_out(np.broadcast_to(flat, flat.shape[:2] + positions), "OIHWD", dn[1])
        window = tuple(rhs.shape[i] for i, c in enumerate(dn[1]) if c not in "OI")
        _close(lax.conv_general_dilated_local(lhs, local, filter_shape=window, **kwargs),
               shared, (1e-5, 1e-5))


def _laid_out(array, default, spec):
    """array, whose dimensions are named by default's letters, transposed to spec's order."""
    return np.transpose(array, [default.index(c) for c in spec]).astype(np.float32)


@both_backends
def test_jit_vmap_and_integer_dtypes():
    case = CASES[1]
    lhs, rhs = _inputs(case)
    f = lambda x, w: lax.conv_general_dilated_local(x, w, **_args(case))  # noqa: E731
    _close(refjax.jit(f)(lhs, rhs), f(lhs, rhs))
    stacked = np.stack([rhs, 2 * rhs, -rhs])
    _close(refjax.vmap(f, in_axes=(None, 0))(lhs, stacked), np.stack([f(lhs, w) for w in stacked]))
    ints = [np.round(3 * a).astype(np.int32) for a in (lhs, rhs)]
    _close(f(*ints), _jax_local(*ints, case), (0, 0))


@both_backends
def test_gradients_match_jax():
    case = CASES[2]
    lhs, rhs = _inputs(case, seed=2)
    ct = np.random.RandomState(3).randn(*_jax_local(lhs, rhs, case).shape).astype(np.float32)

    def loss(conv_local):
        return lambda x, w: (conv_local(x, w, **_args(case)) * ct).sum()

    ours = refjax.grad(loss(lax.conv_general_dilated_local), argnums=(0, 1))(lhs, rhs)
    theirs = jax.jit(jax.grad(loss(jax.lax.conv_general_dilated_local), argnums=(0, 1)))(lhs, rhs)
    for a, b in zip(ours, theirs):
        _close(a, b, (1e-4, 1e-4))


def test_kernels_that_do_not_fit_raise_jaxs_error_class_naming_the_shape_needed():
    """JAX reports a wrong kernel from inside dot_general ("contracting dimensions"); refjax
    raises the same class naming conv_general_dilated_local and the kernel shape it needs."""
    case = CASES[0]
    lhs, rhs = _inputs(case)
    for bad in (rhs[:, :-1], rhs[..., :-1], rhs[..., 0]):
        with pytest.raises(TypeError, match="dot_general"):
            jax.eval_shape(functools.partial(_jax_local, case=case), lhs, bad)
        with pytest.raises(TypeError, match=r"conv_general_dilated_local requires rhs of shape "
                                            r"\('O', 27, 4, 3\).*got rhs of shape"):
            lax.conv_general_dilated_local(lhs, bad, **_args(case))
    wrong_window = dict(_args(case), filter_shape=(3, 3, 3))
    with pytest.raises(TypeError, match="ndim"):
        jax.eval_shape(lambda x, w: jax.lax.conv_general_dilated_local(x, w, **wrong_window),
                       lhs, rhs)
    with pytest.raises(TypeError, match="conv_general_dilated_local: .*ndim"):
        lax.conv_general_dilated_local(lhs, rhs, **wrong_window)
    for conv_local in (jax.lax.conv_general_dilated_local, lax.conv_general_dilated_local):
        with pytest.raises(ValueError, match="Precision"):
            conv_local(lhs, rhs, **_args(case), precision="bad")
