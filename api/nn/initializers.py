"""jax.nn.initializers: the Keras/Sonnet weight initializers, as functions of (key, shape, dtype)."""
from .initializer_functions import (  # noqa: F401
    Initializer, constant, glorot_normal, glorot_uniform, he_normal, he_uniform,
    kaiming_normal, kaiming_uniform, lecun_normal, lecun_uniform, normal, ones,
    truncated_normal, uniform, variance_scaling, xavier_normal, xavier_uniform, zeros)
from .orthogonal import delta_orthogonal, orthogonal  # noqa: F401
