"""The implementation of refjax.scipy.signal's convolutions and detrend (that module re-exports
its public names)."""
import numpy as np

from .. import lax
from .. import numpy as jnp
from ..nn.functions import _inexact
from ..numpy.promotion import _axis

_MODES = ("full", "same", "valid")


def _convolve_nd(in1, in2, mode, precision):
    """scipy's convolution of two arrays of one rank, as one conv_general_dilated (the larger
    operand is the image; scipy requires one to be at least the other's size everywhere)."""
    if mode not in _MODES:
        raise ValueError(f"mode must be one of {list(_MODES)}")
    if in1.ndim != in2.ndim:
        raise ValueError("in1 and in2 must have the same number of dimensions")
    if in1.size == 0 or in2.size == 0:
        raise ValueError("zero-size arrays not supported in convolutions, got shapes "
                         f"{in1.shape} and {in2.shape}.")
    in1, in2 = _inexact("convolve", in1, in2)
    bigger = all(a >= b for a, b in zip(in1.shape, in2.shape))
    smaller = all(a <= b for a, b in zip(in1.shape, in2.shape))
    if not (bigger or smaller):
        raise ValueError("One input must be smaller than the other in every dimension.")
    kernel_shape_in2 = in2.shape   # 'same' is centred on in1, whichever is the image
    image, kernel = (in2, in1) if smaller and not bigger else (in1, in2)
    padding = [_padding(mode, k, k_in2) for k, k_in2 in zip(kernel.shape, kernel_shape_in2)]
    out = lax.conv_general_dilated(image[None, None], jnp.flip(kernel)[None, None],
                                   (1,) * image.ndim, padding, precision=precision)
    return out[0, 0]


def _padding(mode, k, k_in2):
    """The (low, high) padding of one dimension for a kernel of size k."""
    if mode == "valid":
        return (0, 0)
    if mode == "full":
        return (k - 1, k - 1)
    return (k - 1 - (k_in2 - 1) // 2, k - k_in2 + (k_in2 - 1) // 2)


def convolve(in1, in2, mode="full", method="auto", precision=None):
    """The n-dimensional convolution of in1 and in2 (mode 'full', 'same' or 'valid'); method
    'auto' and 'direct' convolve directly, 'fft' by fftconvolve."""
    if method == "fft":
        return fftconvolve(in1, in2, mode=mode)
    if method not in ("auto", "direct"):
        raise ValueError(f"Got method={method!r}; expected 'auto', 'fft', or 'direct'.")
    return _convolve_nd(jnp.asarray(in1), jnp.asarray(in2), mode, precision)


def fftconvolve(in1, in2, mode="full", axes=None):
    """The n-dimensional convolution of in1 and in2 by FFTs (mode 'full', 'same' or 'valid'),
    over `axes` only when given (the other axes must agree and are mapped over)."""
    in1, in2 = _inexact("fftconvolve", in1, in2)
    if in1.ndim != in2.ndim:
        raise ValueError("in1 and in2 should have the same dimensionality")
    if mode not in ("same", "full", "valid"):
        raise ValueError("mode must be one of ['same', 'full', 'valid']")
    axes = tuple(range(in1.ndim)) if axes is None else tuple(
        _axis(a, in1.ndim, "fftconvolve") for a in np.atleast_1d(axes))
    mapped = [i for i in range(in1.ndim) if i not in axes]
    if any(in1.shape[i] != in2.shape[i] for i in mapped):
        raise ValueError(f"mapped axes must have same shape; got in1.shape={in1.shape} "
                         f"in2.shape={in2.shape} axes={axes}")
    return _fft_convolve_axes(in1, in2, mode, axes)


def _fft_convolve_axes(in1, in2, mode, axes):
    """The convolution over axes (the others matching), cut to mode's size, centred."""
    if mode == "valid":
        in1, in2 = _valid_order(in1, in2, axes)
    full = [in1.shape[a] + in2.shape[a] - 1 if a in axes else in1.shape[a]
            for a in range(in1.ndim)]
    if all(in1.shape[a] == 1 or in2.shape[a] == 1 for a in axes):
        conv = in1 * in2   # nothing to overlap: the full convolution is the outer product
    else:
        complex_ = jnp.iscomplexobj(in1) or jnp.iscomplexobj(in2)
        forward, inverse = ((jnp.fft.fftn, jnp.fft.ifftn) if complex_
                            else (jnp.fft.rfftn, jnp.fft.irfftn))
        sizes = [full[a] for a in axes]
        conv = inverse(forward(in1, sizes, axes) * forward(in2, sizes, axes), sizes, axes)
    out = {"full": full, "same": in1.shape,
           "valid": [in1.shape[a] - in2.shape[a] + 1 if a in axes else in1.shape[a]
                     for a in range(in1.ndim)]}[mode]
    return lax.slice(conv, [(f - o) // 2 for f, o in zip(full, out)],
                     [(f - o) // 2 + o for f, o in zip(full, out)])


def _valid_order(in1, in2, axes):
    """(larger, smaller) over axes, or scipy's error when neither is."""
    if all(in1.shape[a] >= in2.shape[a] for a in axes):
        return in1, in2
    if all(in1.shape[a] <= in2.shape[a] for a in axes):
        return in2, in1
    raise ValueError("For 'valid' mode, One input must be at least as large as the other in "
                     "every dimension.")


def correlate(in1, in2, mode="full", method="auto", precision=None):
    """The n-dimensional cross-correlation: the convolution with in2 flipped and conjugated."""
    in2 = jnp.asarray(in2)
    return convolve(in1, jnp.flip(jnp.conj(in2)), mode, method=method, precision=precision)


def _check_2d(name, in1, in2, boundary, fillvalue):
    if boundary != "fill" or fillvalue != 0:
        raise NotImplementedError(f"{name}() only supports boundary='fill', fillvalue=0")
    if np.ndim(in1) != 2 or np.ndim(in2) != 2:
        raise ValueError(f"{name}() only supports 2-dimensional inputs.")


def convolve2d(in1, in2, mode="full", boundary="fill", fillvalue=0, precision=None):
    """The 2-d convolution (only boundary='fill' with fillvalue 0, as in JAX)."""
    _check_2d("convolve2d", in1, in2, boundary, fillvalue)
    return _convolve_nd(jnp.asarray(in1), jnp.asarray(in2), mode, precision)


def correlate2d(in1, in2, mode="full", boundary="fill", fillvalue=0, precision=None):
    """The 2-d cross-correlation (scipy's: when in2 is the larger, 'full' and 'valid' results
    are those of correlating in2 with in1, flipped and conjugated)."""
    _check_2d("correlate2d", in1, in2, boundary, fillvalue)
    in1, in2 = jnp.asarray(in1), jnp.asarray(in2)
    if mode == "same":   # scipy centres it as the convolution of flip(in1) with conj(in2)
        return jnp.flip(_convolve_nd(jnp.flip(in1), jnp.conj(in2), mode, precision))
    swap = all(a <= b for a, b in zip(in1.shape, in2.shape)) and in1.shape != in2.shape
    if swap:
        return jnp.conj(jnp.flip(correlate(in2, in1, mode, precision=precision)))
    return correlate(in1, in2, mode, precision=precision)


def _remove_line(segment):
    """segment [n, m] minus its least-squares line a + b t (t = 1..n) per column."""
    n = segment.shape[0]
    t = jnp.arange(1, n + 1, dtype=segment.dtype)[:, None]
    t_mean = jnp.mean(t, axis=0)
    y_mean = jnp.mean(segment, axis=0)
    dt = t - t_mean
    slope = jnp.sum(dt * (segment - y_mean), axis=0) / jnp.maximum(jnp.sum(dt * dt), 1)
    return segment - (y_mean + slope * dt)


def detrend(data, axis=-1, type="linear", bp=0, overwrite_data=None):
    """data minus its mean ('constant') or its least-squares line on each segment between the
    breakpoints `bp` ('linear') along axis."""
    if overwrite_data is not None:
        raise NotImplementedError("overwrite_data argument not implemented.")
    if type not in ("constant", "linear"):
        raise ValueError("Trend type must be 'linear' or 'constant'.")
    data = _inexact("detrend", data)[0]
    if type == "constant":
        return data - data.mean(axis, keepdims=True)
    n = data.shape[axis]
    bps = np.sort(np.unique(np.r_[0, bp, n]))
    if bps[0] < 0 or bps[-1] > n:
        raise ValueError("Breakpoints must be non-negative and less than length of data along "
                         "given axis.")
    moved = jnp.moveaxis(data, axis, 0)
    flat = moved.reshape(n, -1)
    pieces = [_remove_line(flat[lo:hi]) for lo, hi in zip(bps[:-1], bps[1:])]
    return jnp.moveaxis(jnp.concatenate(pieces, axis=0).reshape(moved.shape), 0, axis)
