"""JAX's sharding pages, written for JAX 0.10's Explicit default: the shard_map notebook
(docs/notebooks/shard_map.md of JAX's source) and "Distributed arrays and automatic
parallelization" (docs/parallel.md), run cell by cell on refjax (make_mesh giving Explicit
axes, the documented option) and on real JAX; every cell must show the same thing (text,
repr, or error class; numbers within float32 rounding), but for the cells listed here with
the reason they differ. A cell that starts to agree, or a new difference, fails the test."""
import os

import jax
import pytest
from doc_cells import run_page
from test_doc_examples import _same

import refjax

PAGE = "/work/jaxsrc/docs/notebooks/shard_map.md"
PARALLEL = "/work/jaxsrc/docs/parallel.md"

KNOWN = {
    4: "JAX's visualize_array_sharding raises ValueError on this array; refjax draws it",
    6: "JAX's visualize_array_sharding raises ValueError on this array; refjax draws it",
    19: "refjax's vma error names the output and axes (the staged shard_map's message)",
}


def _differing_cells(path):
    """The indices of the cells of a page that show something else on refjax than on JAX."""
    page = open(path).read()
    # The pages set a global mesh (jax.set_mesh as a setter): each run is wrapped in a
    # set_mesh(None) context, whose exit restores the empty mesh for the tests that follow.
    with refjax.config.override(refjax_make_mesh_axis_types="explicit"), refjax.set_mesh(None):
        ours = run_page(page, refjax=True)
    with jax.set_mesh(None):
        theirs = run_page(page, refjax=False)
    assert all(shown != "<syntax>" for _, shown in ours)
    return {i for i, ((_, a), (_, b)) in enumerate(zip(ours, theirs)) if not _same(a, b)}


@pytest.mark.skipif(not os.path.exists(PAGE), reason="JAX's docs are not checked out here")
@pytest.mark.backends("numpy_ref")  # the page compiles many programs in JAX: one backend
def test_shard_map_notebook_shows_what_jax_shows():
    assert _differing_cells(PAGE) == set(KNOWN)


_RICH = "JAX's visualize_array_sharding needs `rich` (not installed: ValueError); refjax draws"
PARALLEL_KNOWN = {
    3: _RICH,
    8: "the set_mesh object's repr names its module (refjax.core.sharding.mesh)",
    10: _RICH,
    12: _RICH,
    13: _RICH,
    15: _RICH,
    16: "device_put to an unreduced spec (P(..., unreduced={'Y'})): NotImplementedError",
    17: "the unreduced array of cell 16",
    18: "the unreduced array of cell 16",
    25: "the numpy_ref backend's compiled text is not XLA's HLO (no all-reduce)",
    32: "a jit output laid out by a constraint: JAX reports the spec without trailing Nones "
        "(P('X',)) unless an input has that sharding; refjax keeps the constraint's",
}


@pytest.mark.skipif(not os.path.exists(PARALLEL), reason="JAX's docs are not checked out here")
@pytest.mark.backends("numpy_ref")  # as above: one backend
def test_parallel_page_shows_what_jax_shows():
    """25 of the page's 36 cells agree (15 before sharding in types on Explicit axes, 14 before
    out_sharding= on jax.random.normal)."""
    assert _differing_cells(PARALLEL) == set(PARALLEL_KNOWN)
