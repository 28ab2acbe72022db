"""What the distribution modules share: argument promotion, standardisation, module objects."""
import sys
import types

import numpy as np

from ... import numpy as jnp
from ...nn.functions import _inexact


def promote(name, *args):
    """args as arrays of one inexact dtype (JAX's promote_args_inexact), naming `name`."""
    return _inexact(name, *args)


def standardize(name, x, loc, scale):
    """((x - loc) / scale, log(scale), x's dtype), the arguments promoted together."""
    x, loc, scale = promote(name, x, loc, scale)
    return (x - loc) / scale, jnp.log(scale)


def neg_inf_unless(cond, value):
    """value where cond holds, -inf elsewhere."""
    return jnp.where(cond, value, -np.inf)


def nan_unless(cond, value):
    """value where cond holds, nan elsewhere."""
    return jnp.where(cond, value, np.nan)


def distribution(qualname, doc, **functions):
    """A module object `refjax.scipy.stats.<name>` holding `functions` (JAX's distributions are
    modules), registered in sys.modules so that `import refjax.scipy.stats.norm` works."""
    module = types.ModuleType(f"refjax.scipy.stats.{qualname}", doc)
    for fname, fn in functions.items():
        fn.__name__ = fname
        fn.__qualname__ = f"{qualname}.{fname}"
        setattr(module, fname, fn)
    sys.modules[module.__name__] = module
    return module
