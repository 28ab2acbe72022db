"""JAX-compatible public namespaces (numpy, lax, random, nn, tree_util, sharding, ...)."""
