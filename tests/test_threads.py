"""Caches under threads (issue 12, item 4): 8 threads switching every microsecond run jitted,
differentiated, vmapped and eager programs on both backends while another thread clears
every cache; the results equal a sequential run's bit for bit, and every program still runs
afterwards. (An LRU of OrderedDict.move_to_end raced with clear_caches(): the program raised
KeyError from then on.) The default run does a few rounds; the thorough profile does 100."""
import sys
import threading

import numpy as np
from hypothesis import settings

import refjax as jax
import refjax.numpy as jnp

THREADS = 8
ROUNDS = 100 if settings.default.max_examples >= 100 else 3
CLEAR_EVERY = 0.05  # seconds between two clear_caches(): each makes every program recompile


@jax.jit
def _shared(x, y):
    return jnp.tanh(x @ y) * 2.0 + x.sum()


def _loss(w, x):
    return jnp.sum(_shared(x, w) ** 2)


def _work(thread, round_):
    """One thread's programs in one round: a shared jitted function at a few shapes, a fresh
    closure per call (a new jaxpr, a structure shared by a few threads), the gradient and
    vmap of a jitted function (new jaxprs on every call), eager operations."""
    n = 3 + (thread + round_) % 3
    x = jnp.asarray(np.linspace(-1.0, 1.0, n * n, dtype=np.float32).reshape(n, n) + thread)
    scale = float(thread % 4)
    return [_shared(x, x.T),
            jax.jit(lambda v: v * scale + 1.0)(x),
            jax.grad(_loss)(x, x),
            jax.vmap(lambda row: _shared(row[None], x.T)[0])(x),
            jnp.sin(x) * 3.0 - jnp.cos(x)]


def _all_work(backend, thread, rounds):
    with jax.backend(backend):
        return [[np.asarray(o) for o in _work(thread, r)] for r in range(rounds)]


def _race(workers, clear, pause):
    """Run workers (callables) in threads switching every microsecond while `clear` runs in
    a loop (every `pause` seconds); returns the exceptions any of them raised."""
    errors, done = [], threading.Event()

    def guarded(fn):
        try:
            fn()
        except BaseException as e:  # noqa: BLE001 - the test reports them
            errors.append(e)

    def clearer():
        while not done.wait(pause):
            clear()

    threads = [threading.Thread(target=guarded, args=(w,)) for w in workers]
    cleaning = threading.Thread(target=guarded, args=(clearer,))
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        cleaning.start()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        done.set()
        cleaning.join()
        sys.setswitchinterval(previous)
    return errors


def _run_threads(backend, rounds):
    results = [None] * THREADS

    def worker(i):
        results[i] = _all_work(backend, i, rounds)

    errors = _race([lambda i=i: worker(i) for i in range(THREADS)], jax.clear_caches,
                   CLEAR_EVERY)
    return results, errors


def _assert_bitwise_equal(got, want):
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(np.ascontiguousarray(g).view(np.uint8),
                                      np.ascontiguousarray(w).view(np.uint8))


def _check_backend(backend):
    sequential = [_all_work(backend, i, ROUNDS) for i in range(THREADS)]
    results, errors = _run_threads(backend, ROUNDS)
    assert not errors, errors
    for got, want in zip(results, sequential):
        for g, w in zip(got, want):
            _assert_bitwise_equal(g, w)
    for i in range(THREADS):  # nothing left broken: the programs run again, still right
        _assert_bitwise_equal(_all_work(backend, i, 1)[0], sequential[i][0])


def test_xla_caches_survive_threads_and_clear_caches():
    _check_backend("xla")


def test_xla_compile_cache_hammered_while_cleared():
    """The race itself, many times: 8 threads look up 16 compiled programs 20,000 times each
    while another thread clears the caches without pause (the old LRU raised KeyError here
    when a clear fell between a lookup and its move_to_end). Then every program runs."""
    from refjax.backends.base import get_backend
    backend = get_backend("xla")
    with jax.backend("xla"):
        closed = [jax.make_jaxpr(lambda v, i=i: v * float(i) + 1.0)(jnp.ones(3))
                  for i in range(16)]
    def lookups(k):
        for it in range(20000):
            backend.compile(closed[(k + it) % 16])

    errors = _race([lambda k=k: lookups(k) for k in range(THREADS)], backend.clear_caches, 0)
    assert not errors, errors[:3]
    x = get_backend("xla").put(np.ones(3, np.float32), closed[0].in_avals[0])
    for i, c in enumerate(closed):
        np.testing.assert_array_equal(np.asarray(backend.compile(c)([x])[0]), i + 1.0)


def test_numpy_ref_caches_survive_threads_and_clear_caches():
    _check_backend("numpy_ref")
