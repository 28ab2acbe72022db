"""The implementation of refjax.scipy.signal's spectral analysis: stft, istft, csd and welch,
on windowed segments and refjax's jnp.fft."""
import warnings

import numpy as np
import scipy.signal

from .. import numpy as jnp
from ..numpy.promotion import _arrays, _axis
from ..nn.functions import _inexact
from .signal_functions import detrend


def _hann(n):
    """The periodic Hann window of length n (scipy's get_window('hann', n))."""
    if n == 1:
        return jnp.array([1.0])
    return jnp.sin(jnp.linspace(0, np.pi, n, endpoint=False)) ** 2


def _window(window, nperseg, dtype):
    """window as an array of length nperseg: named windows from scipy.signal.get_window (a
    static table of numbers), arrays as given."""
    if isinstance(window, str) and window == "hann":
        return _hann(nperseg).astype(dtype)
    if isinstance(window, (str, tuple)):
        return jnp.asarray(scipy.signal.get_window(window, nperseg), dtype)
    win = jnp.asarray(window)
    if win.ndim != 1:
        raise ValueError("window must be 1-D")
    if win.shape[0] != nperseg:
        raise ValueError(f"window must have length of {nperseg}")
    return win


def _segment_window(window, nperseg, length, dtype):
    """(window array, nperseg) from the window and nperseg arguments, as scipy: a named window
    with no nperseg spans the signal; an array window sets nperseg to its length."""
    if isinstance(window, (str, tuple)):
        n = length if nperseg is None else nperseg
        if n > length:
            warnings.warn(f"nperseg={n} is greater than input_length={length}, using "
                          f"nperseg={length}")
            n = length
        return _window(window, n, dtype), n
    win = jnp.asarray(window)
    if win.ndim != 1:
        raise ValueError("window must be 1-D")
    if length < win.shape[-1]:
        raise ValueError("window is longer than input signal")
    if nperseg is not None and nperseg != win.shape[0]:
        raise ValueError("value specified for nperseg is different from length of window")
    return win.astype(dtype), win.shape[0]


def _odd_extension(x, n):
    """x extended by n points at each end of its last axis by odd symmetry about the ends."""
    if n < 1:
        return x
    if n > x.shape[-1] - 1:
        raise ValueError(f"The extension length n ({n}) is too big. It must not exceed "
                         f"x.shape[axis]-1, which is {x.shape[-1] - 1}.")
    left = 2 * x[..., :1] - jnp.flip(x[..., 1:n + 1], -1)
    right = 2 * x[..., -1:] - jnp.flip(x[..., -(n + 1):-1], -1)
    return jnp.concatenate([left, x, right], axis=-1)


def _pad_last(mode, **kwargs):
    return lambda x, n: jnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(n, n)], mode, **kwargs)


_BOUNDARIES = {"even": _pad_last("reflect"), "odd": _odd_extension, "constant": _pad_last("edge"),
               "zeros": _pad_last("constant", constant_values=0.0), None: lambda x, n: x}


def _detrender(detrend_type, axis):
    """The function detrending each segment (segments run along the last axis)."""
    if isinstance(detrend_type, str):
        return lambda d: detrend(d, type=detrend_type, axis=-1)
    if callable(detrend_type):
        if axis == -1:
            return detrend_type
        # as scipy: the user's function sees the segments with time where the data had it
        return lambda d: jnp.moveaxis(detrend_type(jnp.moveaxis(d, axis, -1)), -1, axis)
    if not detrend_type:
        return lambda d: d
    raise ValueError(f"Unsupported detrend type: {detrend_type}")


def _windowed_ffts(x, win, detrend_func, nperseg, noverlap, nfft, twosided):
    """[..., segments, frequencies]: the FFTs of x's detrended, windowed segments."""
    if x.dtype.kind == "i":
        x = x.astype(win.dtype)
    starts = np.arange(0, x.shape[-1] - nperseg + 1, nperseg - noverlap)
    segments = detrend_func(x[..., starts[:, None] + np.arange(nperseg)])
    if jnp.iscomplexobj(win):
        segments = segments.astype(jnp.result_type(segments.dtype, np.complex64))
    segments = win * segments
    return jnp.fft.fft(segments, n=nfft) if twosided else jnp.fft.rfft(segments.real, n=nfft)


def _pad_to_length(x, n):
    return jnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, n - x.shape[-1])])


def _promoted(x, y, axis):
    """(x, y, the broadcast shape of the axes other than axis); y None for an auto-spectrum."""
    if y is None:
        x = _inexact("spectral_helper", x)[0]
        return x, None, tuple(np.delete(x.shape, _axis(axis, x.ndim)))
    x, y = _inexact("spectral_helper", x, y)
    if x.ndim != y.ndim:
        raise ValueError(f"two-arguments must have the same rank ({x.ndim} vs {y.ndim}).")
    axis = _axis(axis, x.ndim)
    try:
        outer = np.broadcast_shapes(tuple(np.delete(x.shape, axis)), tuple(np.delete(y.shape, axis)))
    except ValueError as err:
        raise ValueError("x and y cannot be broadcast together.") from err
    return x, y, outer


def _sizes(x, window, nperseg, noverlap, nfft, axis):
    """(window array, nperseg, noverlap, nfft) as Python ints, checked as scipy does."""
    if nperseg is not None:
        nperseg = int(nperseg)
        if nperseg < 1:
            raise ValueError("nperseg must be a positive integer")
    win, nperseg = _segment_window(window, nperseg, x.shape[axis], x.dtype)
    noverlap = nperseg // 2 if noverlap is None else int(noverlap)
    return win, nperseg, noverlap, nperseg if nfft is None else int(nfft)


def _scale(scaling, fs, win, mode):
    """The factor scaling |FFT|^2 to a density (per Hz) or a power spectrum; its square root
    for an STFT."""
    if scaling == "density":
        scale = 1.0 / (fs * (win * win).sum())
    elif scaling == "spectrum":
        scale = 1.0 / win.sum() ** 2
    else:
        raise ValueError(f"Unknown scaling: {scaling}")
    scale = jnp.sqrt(scale) if mode == "stft" else scale
    return scale.astype(jnp.result_type(scale.dtype, np.complex64))


def _spectral(x, y, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
              detrend_type="constant", return_onesided=True, scaling="density", axis=-1,
              mode="psd", boundary=None, padded=False):
    """scipy's _spectral_helper: (frequencies, segment times, the windowed FFTs of x (mode
    'stft'), or the cross spectral densities of x and y per segment (mode 'psd'; y None
    for x with itself)), the frequencies along axis and the segments last."""
    if mode not in ("psd", "stft"):
        raise ValueError(f"Unknown value for mode {mode}, must be one of: ('psd', 'stft')")
    if boundary not in _BOUNDARIES:
        raise ValueError(f"Unknown boundary option '{boundary}', must be one of: "
                         f"{list(_BOUNDARIES)}")
    if y is not None and mode != "psd":
        raise ValueError("two-argument mode is available only when mode=='psd'")
    x, y, outer = _promoted(x, y, int(axis))
    axis = _axis(int(axis), x.ndim)
    result_dtype = jnp.result_type(x.dtype, np.complex64)
    freq_dtype = np.finfo(result_dtype).dtype
    win, nperseg, noverlap, nfft = _sizes(x, window, nperseg, noverlap, nfft, axis)
    if x.size == 0 or (y is not None and y.size == 0):
        length = x.shape[axis] if y is None else min(x.shape[axis], y.shape[axis])
        shape = x.shape if y is None else outer[:axis] + (length,) + outer[axis:]
        return (jnp.zeros(shape, freq_dtype), jnp.zeros(shape, freq_dtype),
                jnp.zeros(shape, result_dtype))
    x = jnp.moveaxis(x, axis, -1)
    if y is not None:
        y = jnp.moveaxis(y, axis, -1)
        n = max(x.shape[-1], y.shape[-1])
        x, y = _pad_to_length(x, n), _pad_to_length(y, n)
    if nfft < nperseg:
        raise ValueError("nfft must be greater than or equal to nperseg.")
    if noverlap >= nperseg:
        raise ValueError("noverlap must be less than nperseg.")
    x, y = _extend(x, y, boundary, padded, nperseg, nperseg - noverlap)
    twosided = not return_onesided or jnp.iscomplexobj(x) or \
        (y is not None and jnp.iscomplexobj(y))
    if return_onesided and twosided:
        warnings.warn("Input data is complex, switching to return_onesided=False")
    ffts = lambda v: _windowed_ffts(v, win, _detrender(detrend_type, axis), nperseg, noverlap,
                                    nfft, twosided)
    result = ffts(x)
    if y is not None or mode == "psd":
        result = jnp.conj(result) * (result if y is None else ffts(y))
    result = result * _scale(scaling, fs, win, mode)
    if not twosided and mode == "psd":   # the negative frequencies folded onto the positive
        result = result.at[..., 1:None if nfft % 2 else -1].multiply(2)
    result = result.astype(result_dtype)
    if y is None and mode != "stft":
        result = result.real
    return (_frequencies(nfft, fs, twosided, freq_dtype),
            _times(x.shape[-1], nperseg, noverlap, fs, boundary, freq_dtype),
            jnp.moveaxis(result, -1, axis))


def _extend(x, y, boundary, padded, nperseg, nstep):
    """x and y with the boundary extension, then zero padding to whole segments."""
    extend = lambda v: None if v is None else _BOUNDARIES[boundary](v, nperseg // 2)
    x, y = extend(x), extend(y)
    if padded:
        n = x.shape[-1] + (-(x.shape[-1] - nperseg) % nstep) % nperseg
        x, y = _pad_to_length(x, n), None if y is None else _pad_to_length(y, n)
    return x, y


def _frequencies(nfft, fs, twosided, dtype):
    fftfreq = jnp.fft.fftfreq if twosided else jnp.fft.rfftfreq
    return fftfreq(nfft, 1 / fs).astype(dtype)


def _times(length, nperseg, noverlap, fs, boundary, dtype):
    """The centres of the segments, in seconds (from the signal's start: the boundary
    extension's half segment taken off)."""
    time = jnp.arange(nperseg / 2, length - nperseg / 2 + 1, nperseg - noverlap, dtype=dtype) / fs
    return time if boundary is None else time - (nperseg / 2) / fs


def stft(x, fs=1.0, window="hann", nperseg=256, noverlap=None, nfft=None, detrend=False,
         return_onesided=True, boundary="zeros", padded=True, axis=-1):
    """The short-time Fourier transform of x along axis, as scipy.signal.stft: (frequencies,
    segment times, Zxx), Zxx with the frequencies at axis and the segment times last."""
    return _spectral(x, None, fs, window, nperseg, noverlap, nfft, detrend, return_onesided,
                     scaling="spectrum", axis=axis, mode="stft", boundary=boundary,
                     padded=padded)


def _median_bias(n):
    """The ratio of the median to the mean of n chi-squared(2) variables (scipy's), by which
    the median of n periodograms is divided."""
    ii_2 = 2 * np.arange(1.0, (n - 1) // 2 + 1)
    return 1 + np.sum(1.0 / (ii_2 + 1) - 1.0 / ii_2)


def _average(pxy, average):
    if average == "median":
        bias = _median_bias(pxy.shape[-1])
        if jnp.iscomplexobj(pxy):
            return (jnp.median(pxy.real, axis=-1) + 1j * jnp.median(pxy.imag, axis=-1)) / bias
        return jnp.median(pxy, axis=-1) / bias
    if average == "mean":
        return pxy.mean(axis=-1)
    raise ValueError(f'average must be "median" or "mean", got {average}')


def csd(x, y, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
        detrend="constant", return_onesided=True, scaling="density", axis=-1, average="mean"):
    """The cross power spectral density of x and y by Welch's method, as scipy.signal.csd:
    (frequencies, Pxy), the segments' densities averaged by their mean or median."""
    freqs, _, pxy = _spectral(x, y, fs, window, nperseg, noverlap, nfft, detrend,
                              return_onesided, scaling, axis, mode="psd")
    if y is not None:
        pxy = pxy + 0j
    if pxy.ndim >= 2 and pxy.size > 0:
        pxy = _average(pxy, average) if pxy.shape[-1] > 1 else pxy.reshape(pxy.shape[:-1])
    return freqs, pxy


def welch(x, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
          detrend="constant", return_onesided=True, scaling="density", axis=-1,
          average="mean"):
    """The power spectral density of x by Welch's method, as scipy.signal.welch:
    (frequencies, Pxx)."""
    freqs, pxx = csd(x, None, fs, window, nperseg, noverlap, nfft, detrend, return_onesided,
                     scaling, axis, average)
    return freqs, pxx.real


def _overlap_add(frames, step):
    """[..., length]: frames [..., n, size] added at offsets 0, step, 2 step, ..."""
    n, size = frames.shape[-2:]
    index = np.arange(n)[:, None] * step + np.arange(size)
    out = jnp.zeros(frames.shape[:-2] + (step * (n - 1) + size,), frames.dtype)
    return out.at[..., index].add(frames)


def _istft_sizes(n_freq, nperseg, noverlap, nfft, input_onesided):
    """(nperseg, noverlap, nfft) as Python ints, defaulted and checked as scipy does."""
    n_default = 2 * (n_freq - 1) if input_onesided else n_freq
    nperseg = int(nperseg or n_default)
    if nperseg < 1:
        raise ValueError("nperseg must be a positive integer")
    if nfft is None:   # an odd segment length whose one-sided spectrum had n_default + 1
        nfft = n_default + 1 if input_onesided and nperseg == n_default + 1 else n_default
    nfft = int(nfft)
    if nfft < nperseg:
        raise ValueError(f"FFT length ({nfft}) must be longer than nperseg ({nperseg}).")
    noverlap = nperseg // 2 if noverlap is None else int(noverlap)
    if noverlap >= nperseg:
        raise ValueError("noverlap must be less than nperseg.")
    return nperseg, noverlap, nfft


def istft(Zxx, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
          input_onesided=True, boundary=True, time_axis=-1, freq_axis=-2):
    """The inverse short-time Fourier transform, as scipy.signal.istft: (times, x), the
    segments' inverse FFTs windowed, overlapped, added and normalised by the summed squared
    window."""
    Zxx = _arrays("istft", Zxx)[0]
    if Zxx.ndim < 2:
        raise ValueError("Input stft must be at least 2d!")
    freq_axis, time_axis = _axis(freq_axis, Zxx.ndim), _axis(time_axis, Zxx.ndim)
    if freq_axis == time_axis:
        raise ValueError("Must specify differing time and frequency axes!")
    Zxx = Zxx.astype(jnp.result_type(Zxx.dtype, np.complex64))
    nperseg, noverlap, nfft = _istft_sizes(Zxx.shape[freq_axis], nperseg, noverlap, nfft,
                                           input_onesided)
    outer = [i for i in range(Zxx.ndim) if i not in (time_axis, freq_axis)]
    Zxx = jnp.transpose(Zxx, outer + [freq_axis, time_axis])
    inverse = jnp.fft.irfft if input_onesided else jnp.fft.ifft
    segments = inverse(Zxx, axis=-2, n=nfft)[..., :nperseg, :]
    win = _window(window, nperseg, segments.dtype)
    frames = jnp.swapaxes(segments * win.sum() * win[:, None], -2, -1)
    x = _overlap_add(frames, nperseg - noverlap)
    norm = _overlap_add(jnp.broadcast_to(win * win, (frames.shape[-2], nperseg)),
                        nperseg - noverlap)
    if boundary:   # the half segments stft's boundary extension added
        x, norm = x[..., nperseg // 2:-(nperseg // 2)], norm[..., nperseg // 2:-(nperseg // 2)]
    x = x / jnp.where(norm > 1e-10, norm, 1.0)
    if x.ndim > 1 and time_axis != Zxx.ndim - 1:
        x = jnp.moveaxis(x, -1, time_axis - 1 if freq_axis < time_axis else time_axis)
    return jnp.arange(x.shape[0], dtype=np.finfo(x.dtype).dtype) / fs, x
