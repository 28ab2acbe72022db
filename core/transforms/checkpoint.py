"""jax.checkpoint (remat) and its residual-saving policies (checkpoint_policies)."""
import types

from .jit import JitWrapped

__all__ = ["checkpoint", "remat", "checkpoint_policies"]


class _Checkpointed(JitWrapped):
    """checkpoint(fun): fun staged to a jaxpr per argument signature (so, as in JAX, Python
    control flow on traced arguments fails unless they are static) and run as the `jit`
    call primitive named "checkpoint"; the call primitive's rules give jit, grad, vmap and
    higher-order derivatives."""

    def __init__(self, fun, prevent_cse, policy, static_argnums, static_argnames):
        super().__init__(fun, static_argnums, static_argnames, None, None, None)
        self._name = "checkpoint"  # the name the staged call carries in jaxprs
        self.prevent_cse, self.policy = prevent_cse, policy

    def __call__(self, *args, **kwargs):
        # unlike jit, checkpoint stages its function even under jax.disable_jit, as in JAX
        _check_static_argnums(self._static_argnums, len(args))
        return self._call_staged(args, kwargs)


def _check_static_argnums(nums, nargs):
    """As JAX: every static_argnums entry must name a passed positional argument (refjax
    used to ignore those beyond the arguments)."""
    if any(not -nargs <= i < nargs for i in nums):
        raise ValueError(
            "the `static_argnums` argument to `jax.checkpoint` / `jax.remat` can only take "
            f"integer values greater than or equal to `-len(args)` and less than `len(args)`, "
            f"but got {nums}, while `len(args)` = {nargs}")


def checkpoint(fun, *, prevent_cse=True, policy=None, static_argnums=(), static_argnames=()):
    """jax.checkpoint (alias remat): fun with the same values and derivatives.

    In JAX, checkpointing changes only what the backward pass stores: residuals of `fun` are
    recomputed rather than saved, except those `policy` (see `checkpoint_policies`) allows
    saving. refjax has no memory model, so `policy` and `prevent_cse` are accepted and
    recorded (as `.policy`, `.prevent_cse`) but change nothing: the computed values are
    those of fun. Like JAX, fun is traced to a jaxpr (make_jaxpr shows a call named
    `checkpoint`), so arguments that steer Python control flow must be in `static_argnums`
    (or `static_argnames`), and must be hashable."""
    return _Checkpointed(fun, prevent_cse, policy, static_argnums, static_argnames)


remat = checkpoint


def _everything_saveable(*_, **__):
    return True


def _nothing_saveable(*_, **__):
    return False


class _DotsSaveable:
    """Saves the outputs of dot_general (without batch dimensions when only_if_no_batch_dims)."""

    def __init__(self, only_if_no_batch_dims):
        self.only_if_no_batch_dims = only_if_no_batch_dims

    def __call__(self, prim, *_, **params):
        if getattr(prim, "name", None) != "dot_general":
            return False
        if not self.only_if_no_batch_dims:
            return True
        (_, _), (lhs_batch, rhs_batch) = params["dimension_numbers"]
        return not lhs_batch and not rhs_batch

    def __repr__(self):
        return f"DotsSaveable(only_if_no_batch_dims={self.only_if_no_batch_dims})"


def _save_only_these_names(*names):
    # refjax has no checkpoint_name primitive, so no value carries a name.
    return lambda prim, *_, **params: getattr(prim, "name", None) == "name" and \
        params.get("name") in names


def _save_anything_except_these_names(*names):
    return lambda prim, *_, **params: not (getattr(prim, "name", None) == "name" and
                                           params.get("name") in names)


def _save_from_both_policies(policy_1, policy_2):
    return lambda *args, **params: policy_1(*args, **params) or policy_2(*args, **params)


checkpoint_policies = types.SimpleNamespace(
    everything_saveable=_everything_saveable, nothing_saveable=_nothing_saveable,
    dots_saveable=_DotsSaveable(False), checkpoint_dots=_DotsSaveable(False),
    dots_with_no_batch_dims_saveable=_DotsSaveable(True),
    checkpoint_dots_with_no_batch_dims=_DotsSaveable(True),
    save_only_these_names=_save_only_these_names,
    save_anything_except_these_names=_save_anything_except_these_names,
    save_any_names_but_these=_save_anything_except_these_names,
    save_from_both_policies=_save_from_both_policies)
checkpoint_policies.__doc__ = ("Residual-saving policies for checkpoint, with JAX's names and "
                               "signature policy(prim, *avals, **params) -> bool. refjax has no "
                               "memory model: they are accepted and change no value.")
