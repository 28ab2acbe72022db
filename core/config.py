"""refjax.config: JAX's configuration options by JAX's names, with scoped overrides."""
import contextlib
import contextvars
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
    "jax_traceback_filtering": "auto",
    "jax_pprint_use_color": True,
}
_CHOICES = {"jax_numpy_dtype_promotion": ("standard", "strict")}
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
            raise ValueError(f"{name} must be one of {choices}, got {value!r}")
        if name == "jax_num_cpu_devices" and (not isinstance(value, int) or value < 1):
            raise ValueError(f"jax_num_cpu_devices must be a positive int, got {value!r}")

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
