"""Frozen per-component configs built from settings: each default is written once, in its dataclass.

A component's config is a frozen dataclass whose field ``name`` is read from the setting
``<PREFIX>_<NAME>`` (``PREFIX`` is the class attribute ``prefix``; a field may name another setting
in its metadata, ``field(metadata={"setting": "DOWNLOAD_MAXSIZE"})``). ``from_settings`` takes
Scrapy's ``Settings`` or any mapping (the tests, the library used without Scrapy), converts each
value to the type of the field's default, and calls ``validate()``. Environment variables are
mapped to settings in ``crawler/settings.py`` only; nothing here reads the environment.

    @dataclass(frozen=True)
    class ArchiveConfig(ComponentConfig):
        prefix: ClassVar[str] = "ARCHIVE"
        enabled: bool = True
        dir: str = "output"

    ArchiveConfig.from_settings({"ARCHIVE_ENABLED": "false"}).enabled  # False
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import MISSING, dataclass, fields
from typing import Any, ClassVar, Self

# What Scrapy's own boolean settings accept (Settings.getbool), in any case: one spelling for every setting.
_FALSE = frozenset({"0", "false"})
_TRUE = frozenset({"1", "true"})


def setting_name(prefix: str, field_name: str, metadata: Mapping[str, Any]) -> str:
    """Return the setting that holds a config field."""
    return str(metadata.get("setting") or f"{prefix}_{field_name.upper()}")


def coerce(name: str, value: Any, like: Any) -> Any:
    """Return ``value`` converted to the type of ``like``; ValueError names the setting."""
    if value is None:
        return like
    if isinstance(like, bool):
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in _TRUE or text in _FALSE:
            return text in _TRUE
        raise ValueError(f"{name} must be true or false (or 1 or 0), got {value!r}")
    try:
        if isinstance(like, int):
            if isinstance(value, float) and not value.is_integer():
                raise ValueError
            return int(value)
        if isinstance(like, float):
            number = float(value)
            if number != number or number in (float("inf"), float("-inf")):  # nan, inf: no setting means them
                raise ValueError
            return number
    except (TypeError, ValueError):
        kind = "a whole number" if isinstance(like, int) else "a number"
        raise ValueError(f"{name} must be {kind}, got {value!r}") from None
    if isinstance(like, str):
        return str(value)
    if isinstance(like, tuple):  # a list setting: a list, or one comma-separated string (-s NAME=a,b)
        items = value.split(",") if isinstance(value, str) else value
        try:
            return tuple(str(item).strip() for item in items if str(item).strip())
        except TypeError:
            raise ValueError(f"{name} must be a list or comma-separated names, got {value!r}") from None
    return value


def _lookup(settings: Any, name: str) -> Any:
    if isinstance(settings, Mapping):
        return settings.get(name)
    return settings.get(name)  # scrapy.settings.BaseSettings


@dataclass(frozen=True)
class ComponentConfig:
    """Base of the per-component configs (see the module docstring)."""

    prefix: ClassVar[str] = ""

    @classmethod
    def from_settings(cls, settings: Any, **overrides: Any) -> Self:
        """Build from Scrapy settings or a mapping; ``overrides`` win over both (e.g. ``learn=False``)."""
        values: dict[str, Any] = {}
        for spec in fields(cls):
            if not spec.init or spec.name in overrides:
                continue
            factory = spec.default_factory
            default = factory() if spec.default is MISSING and callable(factory) else spec.default
            name = setting_name(cls.prefix, spec.name, spec.metadata)
            values[spec.name] = coerce(name, _lookup(settings, name), default)
        config = cls(**values, **overrides)
        config.validate()
        return config

    @classmethod
    def setting_names(cls) -> dict[str, str]:
        """Return {field: setting name}: the settings this component reads."""
        return {spec.name: setting_name(cls.prefix, spec.name, spec.metadata) for spec in fields(cls) if spec.init}

    def validate(self) -> None:
        """Raise ValueError naming the setting when a value cannot work (nothing to check by default)."""
