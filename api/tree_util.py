"""refjax.tree_util: JAX's pytree functions (from core/pytree)."""
from ..core.pytree import *  # noqa: F401,F403
from ..core.pytree import (  # noqa: F401
    tree_flatten, tree_unflatten, tree_map, tree_leaves, tree_structure, register_pytree_node,
    register_pytree_node_class, register_dataclass, register_pytree_with_keys,
    register_pytree_with_keys_class, tree_flatten_with_path, tree_map_with_path,
    tree_leaves_with_path, keystr, DictKey, SequenceKey, GetAttrKey, FlattenedIndexKey,
    Partial, PyTreeDef, tree_reduce, tree_all, tree_transpose, treedef_is_leaf, all_leaves)
from ..core.pytree import treedef_children, treedef_tuple, register_static  # noqa: F401
from ..core.pytree_prefix import (  # noqa: F401
    KeyEntry, KeyPath, default_registry, is_tree_node, flatten_one_level,
    flatten_one_level_with_keys, tree_broadcast, tree_reduce_associative)
