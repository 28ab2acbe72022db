"""refjax.nn: jax.nn's activation functions, softmax family, one_hot, attention, block-scaled
matmuls, initializers."""
from .functions import (
    celu, elu, gelu, glu, hard_sigmoid, hard_silu, hard_swish, hard_tanh, identity, leaky_relu,
    log1mexp, log_sigmoid, log_softmax, logmeanexp, logsumexp, mish, one_hot, relu, relu6,
    selu, sigmoid, silu, soft_sign, softmax, softplus, sparse_plus, sparse_sigmoid, squareplus,
    standardize, swish, tanh)
from .attention import dot_product_attention
from .block_scaled import get_scaled_dot_general_config, scaled_dot_general, scaled_matmul
from . import initializers

# The implementation modules are not part of jax.nn.
del functions, attention, initializer_functions, orthogonal, block_scaled  # noqa: F821

from ...core.errors import name_errors_in  # noqa: E402

name_errors_in(globals(), "nn")  # errors raised below a public function name it
del name_errors_in
