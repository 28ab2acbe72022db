"""lax.conv_general_dilated_local: the unshared ("locally connected") convolution, as patches and a dot."""
from ..core.primitives.convolution import (_moved_to, conv_dimension_numbers,
                                           conv_general_dilated_patches)
from ..core.primitives.linalg import canonicalize_precision, dot_general
from ..core.trace import as_value, get_aval


def conv_general_dilated_local(lhs, rhs, window_strides, padding, filter_shape, lhs_dilation=None,
                               rhs_dilation=None, dimension_numbers=None, precision=None):
    """A convolution whose kernel differs at each output position: rhs has the output's spatial
    sizes in its spatial dimensions and, in its 'I' dimension, the input features times the
    window (features major, then the window in rhs_spec order, as conv_general_dilated_patches
    lays a patch out). filter_shape is the window, in rhs_spec order; the rest is
    conv_general_dilated's. Built as JAX builds it: the patches, then one dot_general batched
    over the output's spatial dimensions, so every transformation comes from those two."""
    lhs = as_value(lhs)
    pair = canonicalize_precision(precision)
    patches = conv_general_dilated_patches(
        lhs, filter_shape, window_strides, padding, lhs_dilation, rhs_dilation,
        dimension_numbers, precision=None if pair is None else pair[0])
    _, rhs_spec, out_spec = conv_dimension_numbers(get_aval(lhs).shape,
                                                   (1, 1) + tuple(filter_shape),
                                                   dimension_numbers)
    _check_rhs(get_aval(rhs).shape, get_aval(patches).shape, rhs_spec, out_spec)
    # the dot's batch dimensions in the patches' order, rhs's matched to them
    batch = sorted(zip(out_spec[2:], rhs_spec[2:]))
    dims = (((out_spec[1],), (rhs_spec[1],)),
            (tuple(b for b, _ in batch), tuple(r for _, r in batch)))
    out = dot_general(patches, rhs, dims, precision=precision)
    ndim = get_aval(out).ndim
    return _moved_to(out, (ndim - 2, ndim - 1), (out_spec[0], out_spec[1]))


def _check_rhs(rhs_shape, patches_shape, rhs_spec, out_spec):
    """JAX lets dot_general report a wrong kernel; this names the kernel shape it needs."""
    want = {rhs_spec[1]: patches_shape[out_spec[1]]}
    want.update(zip(rhs_spec[2:], (patches_shape[d] for d in out_spec[2:])))
    if len(rhs_shape) != len(patches_shape) or any(rhs_shape[d] != n for d, n in want.items()):
        need = tuple(want.get(d, "O") for d in range(len(patches_shape)))
        raise TypeError(f"conv_general_dilated_local requires rhs of shape {need} (O: any number "
                        f"of output features) for these patches of shape {patches_shape}, got "
                        f"rhs of shape {tuple(rhs_shape)}")
