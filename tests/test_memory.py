"""Memory that stays bounded (issue 12, item 3), measured with tracemalloc (NumPy's buffers)
or the process's resident set (XLA's executables), over a bounded number of iterations and
never by timing: the numpy_ref interpreter drops each value after its last use; its rules
keep at most a couple of temporaries; a discarded jitted function takes its compiled programs
with it; a jitted function's memory per distinct argument shape is bounded."""
import gc
import tracemalloc

import numpy as np
import pytest

import refjax as jax
import refjax.numpy as jnp

N = 1 << 22  # float32 elements: 16 MB of data
DATA = N * 4


def _traced_peak(fn, *args):
    """(peak, retained) bytes Python's allocator saw above its level before fn(*args)."""
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        out = fn(*args)
        retained, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    del out
    return peak - base, retained - base


def _chain(x):
    """An elementwise chain of 8 operations."""
    y = x * 2.0
    y = y + 1.0
    y = jnp.sin(y)
    y = y * y
    y = y - 3.0
    y = jnp.exp(y)
    y = y / 2.0
    return jnp.cos(y)


@pytest.fixture(scope="module")
def big():
    with jax.backend("numpy_ref"):
        yield jnp.asarray(np.linspace(0, 1, N, dtype=np.float32))


def test_jitted_chain_peak_is_at_most_three_times_the_data(big):
    """It was 10x: every intermediate stayed alive until the program ended. Now each value
    is dropped after its last use and, when nothing else sees it, its memory takes the next
    result: the input and one live value (and a few float64 blocks for sin, exp, cos)."""
    with jax.backend("numpy_ref"):
        f = jax.jit(_chain)
        f(big)
        peak, _ = _traced_peak(f, big)
    assert DATA + peak <= 3 * DATA, (DATA + peak) / DATA


def test_eager_chain_peak_is_at_most_three_times_the_data(big):
    """Eagerly the caller holds each intermediate until the next one exists: the input, the
    previous and the new value, and float64 blocks of 0.5 MB (it peaked at 5x with cumsum:
    see below)."""
    with jax.backend("numpy_ref"):
        peak, _ = _traced_peak(_chain, big)
    assert DATA + peak <= 3 * DATA + 2 ** 21, (DATA + peak) / DATA


EAGER_OPS = {  # name: (function, peak bound in units of the data, input and result included)
    "cumsum": (jnp.cumsum, 2.3),  # 5x before: widened to float64 whole, then rounded
    "cumprod": (jnp.cumprod, 2.3),
    "cummax": (jax.lax.cummax, 2.8),  # 4.5x before; boolean masks for the signed zeros
    "maximum": (lambda x: jnp.maximum(x, 0.5), 2.3),  # 4.25x before: np.where per zero test
    "relu": (jax.nn.relu, 2.3),
    "clamp": (lambda x: jax.lax.clamp(0.2, x, 0.8), 2.3),
    "square": (jnp.square, 2.3),  # 3x before: ones, then products, then the result
    "power 5": (lambda x: x ** 5, 2.3),
    "sign": (jnp.sign, 2.3),
    "sigmoid": (jax.nn.sigmoid, 2.3),
    "exp": (jnp.exp, 2.3),  # computed in float64 block by block
    "arctan2": (lambda x: jnp.arctan2(x, x), 2.3),
}


@pytest.mark.parametrize("name", EAGER_OPS)
def test_each_eager_op_allocates_little_beyond_its_result(big, name):
    fn, bound = EAGER_OPS[name]
    with jax.backend("numpy_ref"):
        peak, _ = _traced_peak(fn, big)
    assert DATA + peak <= bound * DATA, (DATA + peak) / DATA


def _fresh_closures(count, offset, x):
    """`count` jitted functions that are discarded at once (each a new structure: a
    different literal)."""
    for i in range(count):
        jax.jit(lambda v: v * float(offset + i) + 1.0)(x).block_until_ready()


def test_discarded_jitted_functions_retain_nothing_on_numpy_ref():
    with jax.backend("numpy_ref"):
        x = jnp.ones(10)
        _fresh_closures(20, 0, x)
        _, retained = _traced_peak(lambda: (_fresh_closures(200, 100, x), gc.collect()))
    assert retained / 200 < 1024, retained / 200


def _rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def test_discarded_jitted_functions_free_their_xla_executables():
    """Each fresh closure compiled an executable (~1.5 MB) that the backend kept, up to 4,096
    of them; now a program lives as long as a jaxpr using it, plus the 32 most recently used
    (`jax.jit(lambda ...)` in a loop: JAX's resident set stays flat, and so does refjax's)."""
    with jax.backend("xla"):
        x = jnp.ones(10)
        _fresh_closures(36, 0, x)  # fills the recently-used programs
        gc.collect()
        before = _rss()
        _fresh_closures(24, 1000, x)
        gc.collect()
        grown = _rss() - before
    assert grown < 12 * 2 ** 20, grown / 2 ** 20


SHAPES = 512  # per phase: more than the signatures jit keeps per function (bound: jit.py)


def test_memory_per_distinct_shape_is_bounded():
    """A jitted function called with ever new shapes stops growing once its cache is full
    (numpy_ref kept 3.4 kB per shape for ever): with the allocator traced across both phases
    of new shapes, the second adds far less than the first retained (an unbounded cache would
    add as much again). (The xla backend's programs follow jit's cache: next test.)"""
    with jax.backend("numpy_ref"):
        f = jax.jit(lambda v: v * 2.0 + 1.0)
        f(jnp.ones(1))
        xs = [jnp.ones(n) for n in range(2, 2 * SHAPES + 2)]
        gc.collect()
        tracemalloc.start()
        try:
            base = tracemalloc.get_traced_memory()[0]
            first, second = (_retained_after(f, phase) - base
                             for phase in (xs[:SHAPES], xs[SHAPES:]))
        finally:
            tracemalloc.stop()
    assert second - first < 0.2 * first, (first, second)


def _retained_after(f, inputs):
    for x in inputs:
        f(x)
    gc.collect()
    return tracemalloc.get_traced_memory()[0]


def test_xla_programs_of_every_shape_follow_jits_cache():
    """Each shape a jitted function sees is a jaxpr in jit's cache and a program (an XLA
    executable) in the backend, kept exactly as long as that jaxpr (and 32 recently used
    ones): clearing the cache frees them (they were kept until 4,096 had been compiled)."""
    with jax.backend("xla"):
        _fresh_closures(36, 7000, jnp.ones(10))  # the recently used: all other programs
        f = jax.jit(lambda v: v * 3.0 - 1.0)
        for n in range(1, 25):
            f(jnp.ones(n)).block_until_ready()
        gc.collect()
        before = _rss()
        f.clear_cache()
        _fresh_closures(36, 5000, jnp.ones(10))  # pushes f's out of the recently used
        gc.collect()
        grown = _rss() - before
    assert grown < 12 * 2 ** 20, grown / 2 ** 20
