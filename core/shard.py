"""Shard (jax.Shard): one device's piece of an Array, as `Array.addressable_shards` lists them."""
import numpy as np

from . import runtime
from .avals import ShapedArray
from .config import default_device_id
from .sharding import SingleDeviceSharding
from .sharding.shardings import UNREDUCED_INDICES


class Shard:
    """One device's piece of an Array, as in JAX: `device`, `index` (the tuple of slices of
    the global array this shard holds), `replica_id` (0 for the first copy of a replicated
    piece) and `data` (the piece as an Array on `device`)::

        >>> x = refjax.numpy.arange(4.0)
        >>> x.addressable_shards[0]
        Shard(device=CpuDevice(id=0), index=(slice(None, None, None),), replica_id=0, data=[0. 1. 2. 3.])

    Backends describe their buffers' pieces with `(device, index, data[, replica_id])`
    (NumPy data); `Array.addressable_shards` wraps them in Shards."""

    __slots__ = ("device", "_index", "_replica_id", "_host", "_aval", "_data", "_committed")

    def __init__(self, device, index, host_data, aval, replica_id=0, committed=True):
        self.device, self._index, self._replica_id = device, index, replica_id
        self._host, self._aval, self._data = host_data, aval, None
        self._committed = committed

    @property
    def index(self):
        """The slices of the global array this piece is (None from a backend: a piece of an
        unreduced array, which is no slice of its value: JAX's error)."""
        return self._checked(self._index)

    @property
    def replica_id(self):
        """0 for the first copy of a replicated piece, 1 for the next, ..."""
        return self._checked(self._replica_id)

    @staticmethod
    def _checked(v):
        if v is None:
            raise NotImplementedError(UNREDUCED_INDICES)
        return v

    @classmethod
    def of(cls, piece, aval, committed=True):
        """The Shard of a backend's piece (an object with device/index/data/replica_id, or a
        `(device, index, data[, replica_id])` tuple) of an array of type `aval`; its data is
        committed as the array is (JAX's)."""
        if hasattr(piece, "device"):
            return cls(piece.device, piece.index, piece.data, aval,
                       getattr(piece, "replica_id", 0), committed)
        return cls(*piece[:3], aval, *(piece[3:4] or (0,)), committed)

    @property
    def data(self):
        """This piece as an Array on `device` (made on first use)."""
        if self._data is None:
            host = np.asarray(self._host)
            aval = ShapedArray(host.shape, self._aval.dtype, self._aval.weak_type)
            # (an uncommitted piece on the default device stays uncommitted there)
            uncommitted = not self._committed and self.device.id == default_device_id()
            self._data = runtime.make_array(
                host, aval, sharding=None if uncommitted else SingleDeviceSharding(self.device))
        return self._data

    def __repr__(self):
        return (f"Shard(device={self.device!r}, index={self.index}, "
                f"replica_id={self.replica_id}, data={self.data})")
