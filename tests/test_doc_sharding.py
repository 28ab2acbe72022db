"""JAX's shard_map notebook (docs/notebooks/shard_map.md of JAX's source, written for JAX
0.10's Explicit default) run cell by cell on refjax (make_mesh giving Explicit axes, the
documented option) and on real JAX; every cell must show the same thing (text, repr, or
error class; numbers within float32 rounding), but for the cells listed here with the
reason they differ. A cell that starts to agree, or a new difference, fails the test."""
import os

import jax
import pytest
from doc_cells import run_page
from test_doc_examples import _same

import refjax

PAGE = "/work/jaxsrc/docs/notebooks/shard_map.md"

KNOWN = {
    4: "JAX's visualize_array_sharding raises ValueError on this array; refjax draws it",
    6: "JAX's visualize_array_sharding raises ValueError on this array; refjax draws it",
    18: "jax.typeof(y).manual_axis_type: refjax's types have no ManualAxisType",
    19: "refjax's vma error names the output and axes (the staged shard_map's message)",
    21: "make_jaxpr on Explicit axes: JAX's traced types carry @i and insert pvary",
    56: "shard_map without in_specs inside jit: refjax's traced types carry no sharding",
    57: "shard_map without in_specs inside jit: refjax's traced types carry no sharding",
    59: "shard_map without in_specs inside jit: refjax's traced types carry no sharding",
}


@pytest.mark.skipif(not os.path.exists(PAGE), reason="JAX's docs are not checked out here")
@pytest.mark.backends("numpy_ref")  # the page compiles many programs in JAX: one backend
def test_shard_map_notebook_shows_what_jax_shows():
    page = open(PAGE).read()
    # The page sets a global mesh (jax.set_mesh as a setter): each run is wrapped in a
    # set_mesh(None) context, whose exit restores the empty mesh for the tests that follow.
    with refjax.config.override(refjax_make_mesh_axis_types="explicit"), refjax.set_mesh(None):
        ours = run_page(page, refjax=True)
    with jax.set_mesh(None):
        theirs = run_page(page, refjax=False)
    differ = {i for i, ((_, a), (_, b)) in enumerate(zip(ours, theirs)) if not _same(a, b)}
    assert differ == set(KNOWN)
    assert all(shown != "<syntax>" for _, shown in ours)
