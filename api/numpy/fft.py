"""jnp.fft: NumPy's discrete Fourier transforms, frequencies and shifts, built on lax.fft."""
import operator

import numpy as np

from ...core import dtypes as _dt
from ...core.primitives.fft import FftType, fft as _lax_fft
from .promotion import asarray, astype, moveaxis, _arrays, _promote_to_inexact
from .ufuncs import conj, divide, multiply, sqrt
from .creation import arange
from ..out_sharding import takes_placement
from .reductions import prod
from .manipulation import pad, roll

__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2",
           "fftn", "ifftn", "rfftn", "irfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]


# ---------------------------------------------------------------- the core every transform uses

def _norm_factor(lengths, name, norm):
    """The factor `norm` scales a transform by (from the transformed lengths)."""
    if norm == "backward":
        return asarray(1)
    n, = _promote_to_inexact(prod(lengths))
    if norm not in ("ortho", "forward"):
        raise ValueError(f'Invalid norm value {norm}; should be "backward","ortho" or '
                         '"forward".')
    scale = sqrt(n) if norm == "ortho" else n
    return scale if name.startswith("i") else divide(1, scale)


def _check_lengths(s, axes):
    """s as a tuple of ints (each positive), agreeing in length with axes."""
    if s is None:
        return None
    s = tuple(map(operator.index, s))
    if np.any(np.less_equal(s, 0)):
        raise ValueError("Shape should be positive.")
    if axes is not None and len(s) != len(axes):
        raise ValueError("Shape and axes have different lengths.")
    return s


def _core(name, fft_type, a, s, axes, norm):
    """The transform over `axes` (moved last) with output lengths `s`, cropped or zero-padded
    first, then normalised."""
    arr, = _arrays(f"jax.numpy.fft.{name}", a)
    s = _check_lengths(s, axes)
    orig_axes = axes
    if axes is None:
        axes = range(arr.ndim) if s is None else range(arr.ndim - len(s), arr.ndim)
    axes = tuple(axes)
    if len(axes) != len(set(axes)):
        raise ValueError(f"jax.numpy.fft.{name} does not support repeated axes. Got axes "
                         f"{orig_axes}.")
    if orig_axes is not None:
        axes = tuple(range(arr.ndim - len(axes), arr.ndim))
        arr = moveaxis(arr, orig_axes, axes)
    arr, s = _resize(arr, fft_type, s, axes)
    out = _core_nd(arr, fft_type, s)
    if norm is not None:
        out = multiply(out, _norm_factor(asarray(np.asarray(s), dtype=out.dtype), name, norm))
    return out if orig_axes is None else moveaxis(out, axes, orig_axes)


def _resize(arr, fft_type, s, axes):
    """arr cropped or zero-padded to the input lengths `s` implies, and the lengths."""
    if s is None:
        if fft_type != FftType.IRFFT:
            return arr, [arr.shape[ax] for ax in axes]
        s = [arr.shape[ax] for ax in axes[:-1]]
        return arr, s + ([max(0, 2 * (arr.shape[axes[-1]] - 1))] if axes else [])
    in_s = list(arr.shape)
    for ax, n in zip(axes, s):
        in_s[ax] = n
    if fft_type == FftType.IRFFT:
        in_s[-1] = in_s[-1] // 2 + 1
    arr = arr[tuple(slice(n) for n in in_s)]
    return pad(arr, [(0, n - m) for n, m in zip(in_s, arr.shape)]), s


def _core_nd(arr, fft_type, s):
    """lax.fft over the trailing len(s) axes; XLA takes at most 3, so more are done in two
    passes (the inner 2 or 3 axes, then the rest moved innermost)."""
    if len(s) <= 3:
        return _lax_fft(arr, fft_type, tuple(s))
    n = 2 if len(s) == 4 else 3
    src = tuple(range(arr.ndim - len(s), arr.ndim - n))
    dst = tuple(range(arr.ndim - len(s) + n, arr.ndim))
    forward = fft_type in (FftType.RFFT, FftType.FFT)
    if forward:
        arr = _lax_fft(arr, fft_type, tuple(s)[-n:])
    arr = moveaxis(_core_nd(moveaxis(arr, src, dst), FftType.FFT if forward else FftType.IFFT,
                            s[:-n]), dst, src)
    return arr if forward else _lax_fft(arr, fft_type, tuple(s)[-n:])


def _core_1d(name, fft_type, a, n, axis, norm):
    if isinstance(axis, (list, tuple)):
        full = f"jax.numpy.fft.{name}"
        raise ValueError(f"{full} does not support multiple axes. Please use {full}n. Got "
                         f"axis = {axis!r}.")
    return _core(name, fft_type, a, None if n is None else [n],
                 None if axis is None else [axis], norm)


def _core_2d(name, fft_type, a, s, axes, norm):
    if len(axes) != 2:
        raise ValueError(f"jax.numpy.fft.{name} only supports 2 axes. Got axes = {axes!r}.")
    return _core(name, fft_type, a, s, axes, norm)


# ---------------------------------------------------------------- the transforms

def fft(a, n=None, axis=-1, norm=None):
    """The one-dimensional discrete Fourier transform along axis (numpy.fft.fft)."""
    return _core_1d("fft", FftType.FFT, a, n, axis, norm)


def ifft(a, n=None, axis=-1, norm=None):
    """The one-dimensional inverse discrete Fourier transform (numpy.fft.ifft)."""
    return _core_1d("ifft", FftType.IFFT, a, n, axis, norm)


def rfft(a, n=None, axis=-1, norm=None):
    """The one-dimensional transform of a real array: n // 2 + 1 frequencies."""
    return _core_1d("rfft", FftType.RFFT, a, n, axis, norm)


def irfft(a, n=None, axis=-1, norm=None):
    """The inverse of rfft: a real array of length n (default 2 * (m - 1))."""
    return _core_1d("irfft", FftType.IRFFT, a, n, axis, norm)


def hfft(a, n=None, axis=-1, norm=None):
    """The transform of a signal with Hermitian symmetry (a real spectrum), as numpy.fft.hfft."""
    conj_a = conj(a)
    out = _core_1d("hfft", FftType.IRFFT, conj_a, n, axis, norm)
    return multiply(out, (conj_a.shape[axis] - 1) * 2 if n is None else n)


def ihfft(a, n=None, axis=-1, norm=None):
    """The inverse of hfft: the conjugated rfft of a real signal, divided by n."""
    arr, = _arrays("jax.numpy.fft.ihfft", a)
    out = _core_1d("ihfft", FftType.RFFT, arr, n, axis, norm)
    return multiply(conj(out), 1 / (arr.shape[axis] if n is None else n))


def fft2(a, s=None, axes=(-2, -1), norm=None):
    """The two-dimensional discrete Fourier transform over axes."""
    return _core_2d("fft2", FftType.FFT, a, s, axes, norm)


def ifft2(a, s=None, axes=(-2, -1), norm=None):
    """The two-dimensional inverse discrete Fourier transform over axes."""
    return _core_2d("ifft2", FftType.IFFT, a, s, axes, norm)


def rfft2(a, s=None, axes=(-2, -1), norm=None):
    """The two-dimensional transform of a real array over axes."""
    return _core_2d("rfft2", FftType.RFFT, a, s, axes, norm)


def irfft2(a, s=None, axes=(-2, -1), norm=None):
    """The inverse of rfft2: a real array."""
    return _core_2d("irfft2", FftType.IRFFT, a, s, axes, norm)


def fftn(a, s=None, axes=None, norm=None):
    """The n-dimensional discrete Fourier transform over axes (all when None)."""
    return _core("fftn", FftType.FFT, a, s, axes, norm)


def ifftn(a, s=None, axes=None, norm=None):
    """The n-dimensional inverse discrete Fourier transform over axes (all when None)."""
    return _core("ifftn", FftType.IFFT, a, s, axes, norm)


def rfftn(a, s=None, axes=None, norm=None):
    """The n-dimensional transform of a real array (the last axis halved)."""
    return _core("rfftn", FftType.RFFT, a, s, axes, norm)


def irfftn(a, s=None, axes=None, norm=None):
    """The inverse of rfftn: a real array."""
    return _core("irfftn", FftType.IRFFT, a, s, axes, norm)


# ---------------------------------------------------------------- frequencies and shifts

def _check_freq_args(name, n, d):
    if isinstance(n, (list, tuple)):
        raise ValueError(f"The n argument of jax.numpy.fft.{name} only takes an int. Got n = "
                         f"{list(n)}.")
    if isinstance(d, (list, tuple)):
        raise ValueError(f"The d argument of jax.numpy.fft.{name} only takes a single value. "
                         f"Got d = {list(d)}.")


@takes_placement("fftfreq", out_sharding=False, under_jit=True)
def fftfreq(n, d=1.0, *, dtype=None, device=None):
    """The sample frequencies of fft's outputs: [0, 1, ..., -(n//2), ..., -1] / (d * n)."""
    _check_freq_args("fftfreq", n, d)
    out_dtype = dtype or _dt.default_float()
    work = _dt.finfo(_dt.to_inexact_dtype(out_dtype)).dtype
    i = arange(n, dtype=work)
    k = (i + n // 2) % n - n // 2
    return astype(divide(astype(k, work), asarray(d * n, dtype=work)), out_dtype)


@takes_placement("rfftfreq", out_sharding=False, under_jit=True)
def rfftfreq(n, d=1.0, *, dtype=None, device=None):
    """The sample frequencies of rfft's outputs: [0, 1, ..., n // 2] / (d * n)."""
    _check_freq_args("rfftfreq", n, d)
    dtype = dtype or _dt.default_float()
    k = arange(0, n // 2 + 1, dtype=dtype)
    return divide(k, asarray(d * n, dtype=dtype))


def _shift(name, x, axes, sign):
    x, = _arrays(name, x)
    if axes is None:
        axes = tuple(range(x.ndim))
        shift = [sign * (dim // 2) for dim in x.shape]
    elif isinstance(axes, int):
        shift = sign * (x.shape[axes] // 2)
    else:
        shift = [sign * (x.shape[ax] // 2) for ax in axes]
    return roll(x, shift, axes)


def fftshift(x, axes=None):
    """x rolled so that the zero frequency is in the middle (along axes, all when None)."""
    return _shift("fftshift", x, axes, 1)


def ifftshift(x, axes=None):
    """The inverse of fftshift."""
    return _shift("ifftshift", x, axes, -1)


from ...core.errors import name_errors_in  # noqa: E402

name_errors_in(globals(), "jnp.fft")  # errors raised below a public function name it
