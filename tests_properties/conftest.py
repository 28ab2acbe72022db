"""Hypothesis profiles: `ci` (the default: small, reproducible) and `thorough` (large).

Select one with `--hypothesis-profile=thorough` or the HYPOTHESIS_PROFILE environment variable;
the command-line flag wins because hypothesis' plugin loads it after this file."""
import os

from hypothesis import HealthCheck, settings

_QUIET = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]

# database=None: no .hypothesis directory in the repository (ci is derandomized anyway).
settings.register_profile("ci", max_examples=8, deadline=None, derandomize=True, database=None,
                          suppress_health_check=_QUIET, print_blob=False)
settings.register_profile("thorough", max_examples=300, deadline=None, database=None,
                          suppress_health_check=_QUIET)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# Real JAX (the reference several tests compare against) and refjax's xla backend both need
# 8 CPU devices; JAX fixes its device count when its backend first starts, so set it first.
import jax  # noqa: E402

jax.config.update("jax_num_cpu_devices", 8)
