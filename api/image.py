"""refjax.image: jax.image's resize and scale_and_translate (separable resampling: one weight
matrix per resized dimension, contracted with the image) and ResizeMethod."""
import enum
import functools
import math

import numpy as np

from ..core.primitives.linalg import Precision
from ..core.transforms.jit import jit
from . import numpy as jnp

_EPS32 = float(np.finfo(np.float32).eps)


class ResizeMethod(enum.Enum):
    """Image resize method: NEAREST, LINEAR, LANCZOS3, LANCZOS5, CUBIC (Keys), CUBIC_PYTORCH
    (OpenCV/PyTorch's cubic with edge padding when not antialiasing) and AREA (box
    averaging)."""
    NEAREST = 0
    LINEAR = 1
    LANCZOS3 = 2
    LANCZOS5 = 3
    CUBIC = 4
    CUBIC_PYTORCH = 5
    AREA = 6

    @staticmethod
    def from_string(s: str):
        """The method a string names ('bilinear', 'bicubic', 'lanczos3', ... as JAX's)."""
        for method, names in _NAMES.items():
            if s in names:
                return method
        raise ValueError(f'Unknown resize method "{s}"')


_NAMES = {
    ResizeMethod.NEAREST: ("nearest",),
    ResizeMethod.LINEAR: ("linear", "bilinear", "trilinear", "triangle"),
    ResizeMethod.LANCZOS3: ("lanczos3",),
    ResizeMethod.LANCZOS5: ("lanczos5",),
    ResizeMethod.CUBIC: ("cubic", "bicubic", "tricubic"),
    ResizeMethod.CUBIC_PYTORCH: ("cubic-pytorch", "bicubic-pytorch"),
    ResizeMethod.AREA: ("area",),
}


# ---------------------------------------------------------------- kernels of |distance|

def _lanczos(radius):
    def kernel(x):
        y = radius * jnp.sin(np.pi * x) * jnp.sin(np.pi * x / radius)
        # the limit at 0 is 1; below 1e-3 the quotient loses its accuracy
        out = jnp.where(x > 1e-3, y / jnp.where(x != 0, np.pi ** 2 * x ** 2, 1), 1)
        return jnp.where(x > radius, 0.0, out)
    return kernel


def _cubic(a):
    """The cubic convolution kernel with parameter a (Keys: -0.5; OpenCV/PyTorch: -0.75)."""
    def kernel(x):
        near = ((a + 2) * x - (a + 3)) * x * x + 1
        far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
        return jnp.where(x >= 2, 0.0, jnp.where(x >= 1, far, near))
    return kernel


def _triangle(x):
    return jnp.maximum(0, 1 - jnp.abs(x))


_AREA = "area"
_KERNELS = {  # method -> (radius, kernel)
    ResizeMethod.LINEAR: (1, _triangle),
    ResizeMethod.LANCZOS3: (3, _lanczos(3.0)),
    ResizeMethod.LANCZOS5: (5, _lanczos(5.0)),
    ResizeMethod.CUBIC: (2, _cubic(-0.5)),
    ResizeMethod.CUBIC_PYTORCH: (2, _cubic(-0.75)),
    ResizeMethod.AREA: (1, _AREA),
}


# ---------------------------------------------------------------- weights

def _padding(radius, scale, antialias, edge_padding):
    """How many input positions past each edge the kernel reaches (repeated edge pixels)."""
    if not edge_padding:
        return 0
    if not antialias:
        return radius
    return math.ceil(radius * max(1.0 / float(scale), 1.0))


def _area_weights(in_size, out_size, inv_scale, translation, dtype):
    """The overlap of each output pixel's footprint [L_i, L_i + 1/scale) with each input
    pixel [j, j + 1)."""
    left = jnp.arange(out_size, dtype=dtype) * inv_scale - translation * inv_scale
    right = left + inv_scale
    j = jnp.arange(in_size, dtype=dtype)
    return jnp.maximum(0.0, jnp.minimum(right[None, :], j[:, None] + 1)
                       - jnp.maximum(left[None, :], j[:, None]))


def _normalized(weights):
    """Columns scaled to sum to one; columns summing to (almost) zero become zero."""
    total = jnp.sum(weights, axis=0, keepdims=True)
    return jnp.where(jnp.abs(total) > 1000.0 * _EPS32,
                     weights / jnp.where(total != 0, total, 1), 0)


def _weights(in_size, out_size, scale, translation, kernel, antialias, edge_padding, radius):
    """The (in_size, out_size) matrix whose column i weighs the input positions that output
    position i samples (half-centred pixels, the inverse warp of x * scale + translation)."""
    dtype = jnp.result_type(scale, translation)
    inv_scale = 1.0 / scale
    sample = (jnp.arange(out_size, dtype=dtype) + 0.5) * inv_scale \
        - translation * inv_scale - 0.5
    k = _padding(radius, scale, antialias, edge_padding)
    positions = jnp.arange(-k, in_size + k, dtype=dtype)
    if kernel is _AREA:
        weights = _area_weights(in_size, out_size, inv_scale, translation, dtype)
    else:
        width = jnp.maximum(inv_scale, 1.0) if antialias else 1.0
        weights = kernel(jnp.abs(sample[None, :] - positions[:, None]) / width)
    if edge_padding:  # positions past an edge weigh on the edge pixel
        rows = jnp.clip(positions.astype(jnp.int32), 0, in_size - 1)
        return _normalized(jnp.zeros((in_size, out_size), dtype).at[rows].add(weights))
    inside = (sample >= -0.5) & (sample <= in_size - 0.5)
    return jnp.where(inside[None, :], _normalized(weights), 0)


def _apply(image, shape, spatial_dims, scales, translations, method, antialias, precision):
    if method == ResizeMethod.CUBIC_PYTORCH and antialias:
        method = ResizeMethod.CUBIC
    radius, kernel = _KERNELS[method]
    edge_padding = method == ResizeMethod.CUBIC_PYTORCH
    for d, scale, translation in zip(spatial_dims, scales, translations):
        d = d % image.ndim
        w = _weights(image.shape[d], shape[d], scale, translation, kernel, antialias,
                     edge_padding, radius).astype(image.dtype)
        image = jnp.moveaxis(jnp.tensordot(image, w, axes=([d], [0]), precision=precision),
                             -1, d)
    return image


# ---------------------------------------------------------------- the API

def _method(method):
    return ResizeMethod.from_string(method) if isinstance(method, str) else method


def _check_shape(shape, image):
    shape = tuple(int(s) for s in shape)
    if len(shape) != image.ndim:
        raise ValueError("shape must have length equal to the number of dimensions of x; "
                         f" {shape} vs {image.shape}")
    return shape


def _inexact(x):
    x = jnp.asarray(x)
    return x if jnp.issubdtype(x.dtype, jnp.inexact) else x.astype(jnp.result_type(float))


def scale_and_translate(image, shape, spatial_dims, scale, translation, method,
                        antialias=True, precision=Precision.HIGHEST):
    """Resample `image` to `shape` so that input location x in dimension spatial_dims[k]
    lands at x * scale[k] + translation[k] (half-centred pixels; output pixels sampling
    outside the input are zero). Methods: any ResizeMethod but NEAREST; `antialias` widens
    the kernel when downsampling."""
    image = jnp.asarray(image)
    shape = _check_shape(shape, image)
    method = _method(method)
    if method == ResizeMethod.NEAREST:
        raise ValueError("Nearest neighbor resampling is not currently supported for "
                         "scale_and_translate.")
    scale, translation = _inexact(scale), _inexact(translation)
    dtype = jnp.result_type(scale, translation)
    spatial_dims = tuple(spatial_dims)
    if not spatial_dims:
        return _inexact(image)
    return _apply(_inexact(image), shape, spatial_dims, scale.astype(dtype),
                  translation.astype(dtype), method, antialias, precision)


def _resize_nearest(image, shape):
    """Each output pixel takes the input pixel under its centre."""
    for d, (m, n) in enumerate(zip(image.shape, shape)):
        if m != n:
            centres = (jnp.arange(n, dtype=np.float32) + 0.5) * m / n
            index = [slice(None)] * image.ndim
            index[d] = jnp.floor(centres.astype(np.float32)).astype(np.int32)
            image = image[tuple(index)]
    return image


def resize(image, shape, method, antialias=True, precision=Precision.HIGHEST):
    """Resize `image` to `shape` (every dimension; keep a batch or channel dimension by
    giving its size unchanged). NEAREST keeps the dtype; the other methods resample with
    their kernel (antialiased when downsampling unless antialias=False) and give a floating
    result."""
    return _resize(image, tuple(int(s) for s in shape), method, antialias, precision)


@functools.partial(jit, static_argnums=(1, 2, 3, 4))
def _resize(image, shape, method, antialias, precision):
    """resize staged as one jitted call, as JAX stages it (`pjit[name=_resize]`)."""
    shape = _check_shape(shape, image)
    method = _method(method)
    if method == ResizeMethod.NEAREST:
        return _resize_nearest(image, shape)
    image = _inexact(image)
    dims = tuple(d for d in range(image.ndim) if image.shape[d] != shape[d])
    scales = [1.0 if shape[d] == 0 else shape[d] / image.shape[d] for d in dims]
    return _apply(image, shape, dims, scales, [0.0] * len(dims), method, antialias, precision)


__all__ = ["ResizeMethod", "resize", "scale_and_translate"]
