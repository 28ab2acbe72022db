"""LRU: a bounded map of the most recently used entries, safe under threads (jit's trace
caches and the backends' caches share it)."""
import collections
import threading


class LRU:
    """The `size` most recently used entries of a map. Every operation holds one lock, so
    threads (and clear() from any of them) never see it half-updated."""

    def __init__(self, size):
        self._entries = collections.OrderedDict()
        self._lock = threading.Lock()
        self._size = size

    def get(self, key):
        """The value under key (now the most recent), or None."""
        with self._lock:
            value = self._entries.get(key)
            if value is not None:
                self._entries.move_to_end(key)
            return value

    def put(self, key, value):
        """Store value under key as the most recent entry, evicting the least recent."""
        with self._lock:
            self._entries[key] = value
            self._entries.move_to_end(key)
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)

    def clear(self):
        with self._lock:
            self._entries.clear()

    def keys(self):
        """The keys, least recently used first (a copy)."""
        with self._lock:
            return list(self._entries)

    def __len__(self):
        return len(self._entries)
