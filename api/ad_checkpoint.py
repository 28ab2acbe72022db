"""refjax.ad_checkpoint: checkpoint (remat), checkpoint_name, the checkpoint policies and
print_saved_residuals, as jax.ad_checkpoint has them."""
from ..core.transforms.checkpoint import (  # noqa: F401
    Offloadable, Recompute, Saveable, checkpoint, checkpoint_name, checkpoint_policies,
    print_saved_residuals, remat, saved_residuals)

__all__ = ["checkpoint", "checkpoint_name", "checkpoint_policies", "print_saved_residuals",
           "remat", "Offloadable", "Recompute", "Saveable"]
