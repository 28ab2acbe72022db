"""shard_map's check of its outputs' varying manual axes against out_specs, with JAX's error
naming each output's spec by its place in out_specs."""
from .. import pytree
from ..sharding import P


def spec_axes(spec):
    """The mesh axes a spec names."""
    return {a for p in spec.partitions if p is not None
            for a in (p if isinstance(p, tuple) else (p,))}


def omitted(spec, manual):
    """The manual axes a spec does not name, in mesh order: the value is replicated over them
    (not partial sums or reduced over them, as its unreduced and reduced axes say)."""
    used = spec_axes(spec) | spec.unreduced | spec.reduced
    return tuple(a for a in manual if a not in used)


def check_out_vmas(f, mesh, manual, outs, first_only=False):
    """ValueError in JAX's words when outputs, given as (the path of their spec in out_specs,
    out spec, the axes their value varies over), vary over mesh axes their out_specs say they
    are replicated over; `first_only`: only the first such output (JAX's eager shard_map)."""
    fails = [(key, spec, vma) for key, spec, vma in outs
             if any(a in vma for a in omitted(spec, manual))]
    if fails:
        lines = [_vma_line(key, spec, vma, manual) for key, spec, vma in fails]
        lines = lines[:1] if first_only else lines
        if len(lines) == 1:
            lines = [lines[0][2:]]  # no bullet for a single output
        raise ValueError(
            f"shard_map applied to the function '{getattr(f, '__name__', str(f))}' was given "
            "out_specs which require replication which can't be statically inferred given the "
            f"mesh:\n\nThe mesh given has shape {tuple(mesh.shape.values())} with "
            f"corresponding axis names {mesh.axis_names}.\n\n" + "\n\n".join(lines) +
            "\n\nCheck if these output values are meant to be replicated over those mesh axes. "
            "If not, consider revising the corresponding out_specs entries. If so, consider "
            "disabling the check by passing the check_vma=False argument to `jax.shard_map`.")


def _vma_line(key, spec, vma, manual):
    """One failing output's line of the error (`key`: its path in out_specs)."""
    unmentioned = omitted(spec, manual)
    head = f"* out_specs{key} is {spec} which implies that the corresponding output value is "
    if len(unmentioned) == 1:
        return head + (f"replicated across mesh axis '{unmentioned[0]}', but could not infer "
                       "replication over any axes")
    need, got = (",".join(a for a in manual if a in axes) for axes in (spec_axes(spec), vma))
    diff = ",".join(a for a in unmentioned if a in vma)
    return head + (f"only varying across mesh axes {{{need}}} and not {{{diff}}}, but it was "
                   f"inferred to be possibly varying over {{{got}}}")


def spec_paths(tree, specs):
    """For each leaf of `tree`, the path in out_specs of the spec standing for it (a prefix
    spec stands for a whole subtree): how JAX's errors name an output's spec."""
    is_spec = lambda x: x is None or isinstance(x, P)  # noqa: E731
    keyed, spec_def = pytree.tree_flatten_with_path(specs, is_leaf=is_spec)
    marks = pytree.tree_unflatten(spec_def, [_At(pytree.keystr(k)) for k, _ in keyed])
    return [m.path for m in pytree.broadcast_prefix(
        "shard_map out_specs", tree, marks, lambda x: x is None or isinstance(x, _At))]


class _At:
    """A spec's place in out_specs, broadcast as the spec is."""
    __slots__ = ("path",)

    def __init__(self, path):
        self.path = path
