"""Shard (jax.Shard): one device's piece of an Array, as `Array.addressable_shards` lists them."""
import numpy as np

from . import runtime
from .avals import ShapedArray
from .sharding import SingleDeviceSharding


class Shard:
    """One device's piece of an Array, as in JAX: `device`, `index` (the tuple of slices of
    the global array this shard holds), `replica_id` (0 for the first copy of a replicated
    piece) and `data` (the piece as an Array on `device`)::

        >>> x = refjax.numpy.arange(4.0)
        >>> x.addressable_shards[0]
        Shard(device=CpuDevice(id=0), index=(slice(None, None, None),), replica_id=0, data=[0. 1. 2. 3.])

    Backends describe their buffers' pieces with `(device, index, data[, replica_id])`
    (NumPy data); `Array.addressable_shards` wraps them in Shards."""

    __slots__ = ("device", "index", "replica_id", "_host", "_aval", "_data")

    def __init__(self, device, index, host_data, aval, replica_id=0):
        self.device, self.index, self.replica_id = device, index, replica_id
        self._host, self._aval, self._data = host_data, aval, None

    @classmethod
    def of(cls, piece, aval):
        """The Shard of a backend's piece (an object with device/index/data/replica_id, or a
        `(device, index, data[, replica_id])` tuple) of an array of type `aval`."""
        if hasattr(piece, "device"):
            return cls(piece.device, piece.index, piece.data, aval,
                       getattr(piece, "replica_id", 0))
        return cls(*piece[:3], aval, *piece[3:4])

    @property
    def data(self):
        """This piece as an Array on `device` (made on first use)."""
        if self._data is None:
            host = np.asarray(self._host)
            aval = ShapedArray(host.shape, self._aval.dtype, self._aval.weak_type)
            self._data = runtime.make_array(host, aval,
                                            sharding=SingleDeviceSharding(self.device))
        return self._data

    def __repr__(self):
        return (f"Shard(device={self.device!r}, index={self.index}, "
                f"replica_id={self.replica_id}, data={self.data})")
