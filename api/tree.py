"""refjax.tree: the short names of jax.tree (map, leaves, structure, ...)."""
from ..core.pytree import (  # noqa: F401
    tree_flatten as flatten, tree_unflatten as unflatten, tree_map as map,
    tree_leaves as leaves, tree_structure as structure, tree_reduce as reduce,
    tree_all as all, tree_transpose as transpose, tree_flatten_with_path as flatten_with_path,
    tree_map_with_path as map_with_path, tree_leaves_with_path as leaves_with_path)
from ..core.pytree_prefix import (  # noqa: F401
    tree_broadcast as broadcast, tree_reduce_associative as reduce_associative, static)
