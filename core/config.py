"""refjax.config: JAX's configuration options by JAX's names, with scoped overrides."""
import contextlib
import contextvars
import logging
import os


def _env_flag(name):
    """A boolean environment variable as JAX reads its JAX_* flags (1/true/yes/on)."""
    return os.environ.get(name, "").strip().lower() in ("1", "true", "t", "yes", "y", "on")


_DEFAULTS = {
    "jax_enable_x64": _env_flag("JAX_ENABLE_X64"),
    "jax_num_cpu_devices": 8,
    "jax_numpy_dtype_promotion": "standard",
    "jax_platform_name": "",
    "jax_disable_jit": False,
    "jax_default_matmul_precision": None,
    "jax_debug_nans": False,
    "jax_debug_infs": False,
    "jax_numpy_rank_promotion": "allow",
    "jax_check_tracer_leaks": False,
    "jax_debug_key_reuse": False,
    "jax_traceback_filtering": "auto",
    "jax_pprint_use_color": True,
    "jax_enable_checks": False,
    "jax_log_compiles": False,
    "jax_explain_cache_misses": False,
    "jax_no_tracing": False,
    "jax_no_execution": False,
    "jax_thread_guard": False,
    "jax_default_prng_impl": "threefry2x32",
    "jax_threefry_partitionable": True,
    "jax_auto_pcast": True,
    "jax_remove_size_one_mesh_axis_from_type": False,
    "jax_legacy_prng_key": "allow",
    "jax_enable_custom_prng": False,
    # JAX's new remat implementation (jax.checkpoint as a hijax primitive); refjax's one
    # implementation saves what JAX's does with it on or off (tests/test_new_docs.py)
    "jax_remat3": False,
    "jax_transfer_guard": None,
    "jax_default_device": None,
    "jax_transfer_guard_host_to_device": None,
    "jax_transfer_guard_device_to_host": None,
    "jax_transfer_guard_device_to_device": None,
    # make_mesh's default axis types: "auto" (the seed notebook's) or "explicit" (JAX 0.10's)
    "refjax_make_mesh_axis_types": "auto",
}
TRANSFER_GUARD_LEVELS = (None, "allow", "log", "disallow", "log_explicit", "disallow_explicit")
_CHOICES = {**{name: TRANSFER_GUARD_LEVELS for name in (
                "jax_transfer_guard", "jax_transfer_guard_host_to_device",
                "jax_transfer_guard_device_to_host", "jax_transfer_guard_device_to_device")},
            "jax_numpy_dtype_promotion": ("standard", "strict"),
            "jax_numpy_rank_promotion": ("allow", "warn", "raise"),
            "refjax_make_mesh_axis_types": ("auto", "explicit"),
            "jax_default_prng_impl": ("threefry2x32", "threefry4x32", "rbg", "unsafe_rbg",
                                      "philox2x32", "philox4x32"),
            "jax_legacy_prng_key": ("allow", "warn", "error"),
            "jax_default_matmul_precision": (
                None, "default", "high", "highest", "bfloat16", "tensorfloat32", "float32",
                "ANY_F8_ANY_F8_F32", "ANY_F8_ANY_F8_F32_FAST_ACCUM",
                "ANY_F8_ANY_F8_ANY", "ANY_F8_ANY_F8_ANY_FAST_ACCUM", "F16_F16_F16",
                "F16_F16_F32", "BF16_BF16_BF16", "BF16_BF16_F32", "BF16_BF16_F32_X3",
                "BF16_BF16_F32_X6", "BF16_BF16_F32_X9", "TF32_TF32_F32", "TF32_TF32_F32_X3",
                "F32_F32_F32", "F64_F64_F64")}
_overrides = contextvars.ContextVar("refjax_config_overrides", default={})
OVERRIDES = _overrides  # a non-empty dict while `config.override` is active


class Config:
    """Holds option values; `update(name, value)` sets one, reading `config.name` gets one."""

    def __init__(self):
        self._values = dict(_DEFAULTS)
        self._listeners = []
        self._validators = []
        self.version = 0  # changes with every update (part of jit's fast-path key)

    def _check(self, name, value):
        if name not in self._values:
            raise AttributeError(f"Unrecognized config option: {name}")
        choices = _CHOICES.get(name)
        if choices is not None and value not in choices:
            named = [c for c in choices if c is not None]
            none = "None or " if None in choices else ""
            raise ValueError(f"new enum value must be {none}in {named}, got {value} of type "
                             f"{type(value)}.")
        if name == "jax_num_cpu_devices" and (not isinstance(value, int) or value < 1):
            raise ValueError(f"jax_num_cpu_devices must be a positive int, got {value!r}")
        if name == "jax_default_device":
            _check_default_device(value)

    def update(self, name, value):
        """Set option `name` (a JAX option name such as 'jax_enable_x64') to `value`. Setting
        an option to the value it has changes nothing (listeners are not told)."""
        self._check(name, value)
        for validator in self._validators:
            validator(name, value)
        if self._values[name] == value and type(self._values[name]) is type(value):
            return
        self._values[name] = value
        self.version += 1
        for listener in self._listeners:
            listener(name, value)

    def read(self, name):
        overrides = _overrides.get()
        if name in overrides:
            return overrides[name]
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(f"Unrecognized config option: {name}") from None

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return self.read(name)

    @contextlib.contextmanager
    def override(self, **options):
        """Temporarily set options in this context (restored on exit, even on error)."""
        for name, value in options.items():
            self._check(name, value)
        token = _overrides.set({**_overrides.get(), **options})
        try:
            yield
        finally:
            _overrides.reset(token)

    def on_update(self, listener):
        """Register `listener(name, value)` called after each update (backends reset devices)."""
        self._listeners.append(listener)

    def on_validate(self, validator):
        """Register `validator(name, value)`, called before an update; it raises to refuse
        it (backends refuse a new device count once they hold arrays)."""
        self._validators.append(validator)

    def values(self):
        """A snapshot of the effective options (part of jit cache keys)."""
        return {**self._values, **_overrides.get()}


config = Config()


def x64_enabled():
    return config.read("jax_enable_x64")


@contextlib.contextmanager
def enable_x64(enabled=True):
    """Context manager enabling (or disabling) 64-bit types, like jax.enable_x64(True)."""
    with config.override(jax_enable_x64=bool(enabled)):
        yield


@contextlib.contextmanager
def disable_jit(disable=True):
    """Context manager running jitted functions op by op (jax.disable_jit)."""
    with config.override(jax_disable_jit=bool(disable)):
        yield


@contextlib.contextmanager
def numpy_dtype_promotion(mode):
    """Context manager setting the promotion mode, 'standard' or 'strict'
    (jax.numpy_dtype_promotion)."""
    with config.override(jax_numpy_dtype_promotion=mode):
        yield


def checking_numerics():
    """Whether jax_debug_nans or jax_debug_infs (or jax_no_execution or jax_debug_key_reuse,
    checked on the same path) is on (read on every eager dispatch: one context-variable read,
    four look-ups)."""
    overrides, values = _overrides.get(), config._values
    return overrides.get("jax_debug_nans", values["jax_debug_nans"]) or \
        overrides.get("jax_debug_infs", values["jax_debug_infs"]) or \
        overrides.get("jax_no_execution", values["jax_no_execution"]) or \
        overrides.get("jax_debug_key_reuse", values["jax_debug_key_reuse"])


def check_execution_allowed(name):
    """jax_no_execution: running a computation is a RuntimeError, with JAX's message (an eager
    operation is named as JAX names its one-primitive jit: jit(sin))."""
    if config.read("jax_no_execution"):
        raise RuntimeError(f"JAX tried to execute function jit({name}), but the no_execution "
                           "config option is set")


_REQUIRED = object()  # a State whose context manager has no default value


class State:
    """A JAX option as jax exposes it (jax.debug_nans, jax.numpy_rank_promotion, ...): its
    current `.value`, and called with a value, a context manager setting it in a block."""

    def __init__(self, name, doc, default_arg=True):
        self.name, self.__doc__, self._default_arg = name, doc, default_arg

    @property
    def value(self):
        return config.read(self.name)

    def __call__(self, new_value=_REQUIRED):
        if new_value is _REQUIRED:
            new_value = self._default_arg
        if new_value is _REQUIRED:
            raise TypeError(f"Context manager for {self.name[4:]} config option requires an "
                            "argument representing the new value for the config option.")
        return config.override(**{self.name: new_value})

    def __repr__(self):
        return f"<refjax config State {self.name}={self.value!r}>"


debug_nans = State("jax_debug_nans", "Raise FloatingPointError where a NaN is produced.")
debug_infs = State("jax_debug_infs", "Raise FloatingPointError where an inf is produced.")
numpy_rank_promotion = State("jax_numpy_rank_promotion",
                             "'allow', 'warn' or 'raise' on jnp's implicit rank promotion.")
default_matmul_precision = State("jax_default_matmul_precision",
                                 "The precision of matmuls without an explicit one.")
check_tracer_leaks = State("jax_check_tracer_leaks",
                           "Raise where a traced value outlives its transformation.")
debug_key_reuse = State("jax_debug_key_reuse",
                        "Raise KeyReuseError where a typed PRNG key is used twice.")

default_prng_impl = State("jax_default_prng_impl",
                          "The PRNG implementation of keys made without impl=.")
auto_pcast = State("jax_auto_pcast", "If True, automatically insert `pvary` to match VMAs on "
                   "simple ops (off: shard_map's check_vma refuses operands varying over "
                   "different manual axes).")
remove_size_one_mesh_axis_from_type = State(
    "jax_remove_size_one_mesh_axis_from_type",
    "Removes mesh axes of size 1 from ShapedArray.sharding and vma")
threefry_partitionable = State("jax_threefry_partitionable",
                               "threefry2x32's partitionable scheme (JAX's default) or the "
                               "original one.")
legacy_prng_key = State("jax_legacy_prng_key",
                        "'allow', 'warn' or 'error' on raw uint32 keys passed to jax.random.")
enable_custom_prng = State("jax_enable_custom_prng",
                           "PRNGKey returns typed keys (JAX's custom-PRNG upgrade).")


default_device = State(
    "jax_default_device",
    "Context manager for `jax_default_device` config option.\n\nConfigure the default device "
    "for JAX operations: a Device (e.g. ``jax.devices('cpu')[3]``) where new arrays, and "
    "computations (eager or jitted) on uncommitted arrays, are placed; 'cpu' or None: device "
    "0. Committed arrays keep their device.", default_arg=_REQUIRED)


def _check_default_device(value):
    """JAX's validation of jax_default_device: None, a Device, or a platform name."""
    if value is None or value in ("cpu", "gpu", "tpu") or "Device" in str(type(value)):
        return
    raise ValueError("jax.default_device must be passed either a Device object (e.g. "
                     "`jax.devices('cpu')[0]`) or a platform name string like 'cpu' or 'gpu', "
                     f"got: {value!r}")


def default_device_id():
    """The id of the default device, the one look-up every placement reads (None and 'cpu':
    device 0). Another platform is JAX's RuntimeError when an array would be placed on it."""
    value = config.read("jax_default_device")
    if value is None:
        return 0
    if type(value) is str:
        return _platform_device_id(value)
    return value.id


def _platform_device_id(platform):
    if platform != "cpu":
        raise RuntimeError(f"Unknown backend: '{platform}' requested, but no platforms that are "
                           f"instances of {platform} are present. Platforms present are: cpu")
    return 0


def checking_leaks():
    """Context manager turning on jax_check_tracer_leaks (jax.checking_leaks)."""
    return check_tracer_leaks(True)
enable_checks = State("jax_enable_checks", "Turn on invariant checking for JAX internals "
                      "(refjax: each jaxpr jit stages is type-checked). Makes things slower.")
log_compiles = State("jax_log_compiles", "Log a message each time `jit` traces and compiles a "
                     "computation, at WARNING level through `logging` (DEBUG when off).")
explain_cache_misses = State("jax_explain_cache_misses", "Each time jit's tracing cache "
                             "misses, log an explanation (WARNING, through `logging`).")
no_tracing = State("jax_no_tracing", "Disallow tracing for JIT compilation.")
no_execution = State("jax_no_execution", "Disallow JAX executions.")
thread_guard = State("jax_thread_guard", "Raise when a multi-process JAX operation is called "
                     "from another thread than the guard's (refjax runs one process: no such "
                     "operation exists, so the guard never fires).")


# ---------------------------------------------------------------- transfer guards

_explicit = contextvars.ContextVar("refjax_explicit_transfer", default=False)


@contextlib.contextmanager
def explicit_transfers():
    """Transfers in this block count as explicit (jax.device_put, jax.device_get), which only
    the '*_explicit' guard levels guard."""
    token = _explicit.set(True)
    try:
        yield
    finally:
        _explicit.reset(token)


def transfer_guard_level(direction):
    """The guard level of 'host_to_device', 'device_to_host' or 'device_to_device' transfers:
    its own option, else jax_transfer_guard's, else 'allow'."""
    level = config.read(f"jax_transfer_guard_{direction}")
    return level if level is not None else (config.read("jax_transfer_guard") or "allow")


def check_transfer(direction, describe):
    """Apply the transfer guard to one transfer; `describe()` gives JAX's 'aval=...,
    dst_sharding=...' (called only when the guard logs or refuses)."""
    level = transfer_guard_level(direction)
    if level == "allow" or (_explicit.get() and not level.endswith("_explicit")):
        return
    what = f"{direction.replace('_', '-')} transfer: {describe()}"
    if level.startswith("log"):
        logging.getLogger("refjax").warning(what)
        return
    from .errors import JaxRuntimeError
    raise JaxRuntimeError(f"INVALID_ARGUMENT: Disallowed {what}")
