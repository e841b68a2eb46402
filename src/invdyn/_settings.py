"""Typed fields of frozen dataclass configurations, read by their annotations.

`check_fields` holds each field of a configuration to its annotation (a JSON value read into a
frozen dataclass is checked and converted: ints taken for floats, lists for tuples);
`with_overrides` applies ``"key=value"`` texts to a configuration of sections (dataclass fields
that are dataclasses themselves) and plain fields, each value parsed by its field's annotation.
The annotations handled are ``bool``, ``int``, ``float`` (finite), ``str`` and
``tuple[int, ...]``.
"""

from __future__ import annotations

import dataclasses
import math
import typing
from collections.abc import Iterable
from typing import Any, TypeVar

from invdyn.errors import InputError

Config = TypeVar("Config")

_KINDS = {bool: "a bool", int: "an int", float: "a finite number", str: "a string"}
_TRUE = ("true", "1", "yes", "on")
_FALSE = ("false", "0", "no", "off")


def field_types(cls: type[Any]) -> dict[str, Any]:
    """The annotation of each field of the dataclass `cls`, by name, in field order."""
    hints = typing.get_type_hints(cls)
    return {field.name: hints[field.name] for field in dataclasses.fields(cls)}


def check_fields(config: Any, section: str) -> None:
    """Hold every field of the frozen dataclass `config` to its annotation, storing the value
    converted (an int as a float, a list as a tuple).

    Args:
      config: the dataclass instance, in its ``__post_init__``.
      section: the name its fields are reported under (``model`` for ``model.horizon``).

    Raises:
      InputError: a value of another type, naming the field.
    """
    for name, annotation in field_types(type(config)).items():
        value = coerce(getattr(config, name), annotation, f"{section}.{name}")
        # the dataclass is frozen: its own __post_init__ stores the converted value
        object.__setattr__(config, name, value)


def coerce(value: Any, annotation: Any, name: str) -> Any:
    """`value` as the type `annotation` names, or `InputError` naming the field `name`."""
    if annotation is bool:
        if isinstance(value, bool):
            return value
    elif annotation is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif annotation is float:
        if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
            return float(value)
    elif annotation is str:
        if isinstance(value, str):
            return value
    elif _is_int_tuple(annotation):
        if isinstance(value, list | tuple) and all(
            isinstance(v, int) and not isinstance(v, bool) for v in value
        ):
            return tuple(value)
    else:
        raise TypeError(f"{name}: unsupported annotation {annotation!r}")
    kind = _KINDS.get(annotation, "a list of ints")
    raise InputError(f"{name} must be {kind}, got {value!r}")


def parse(text: str, annotation: Any, name: str) -> Any:
    """Override text `text` as the type `annotation` names: ``true``/``false`` (or 1/0,
    yes/no, on/off), a number, the text itself, or comma-separated ints (empty: none).

    Raises:
      InputError: text that does not parse, naming the field `name`.
    """
    try:
        if annotation is bool:
            lowered = text.lower()
            if lowered in _TRUE + _FALSE:
                return lowered in _TRUE
            raise ValueError(text)
        if annotation in (int, float, str):
            return annotation(text)
        inner = text.strip().strip("()[]").strip()
        return tuple(int(part) for part in inner.split(",") if part.strip()) if inner else ()
    except ValueError:
        shown = (typing.get_origin(annotation) or annotation).__name__
        raise InputError(f"{name}: cannot parse {text!r} as {shown}") from None


def with_overrides(config: Config, overrides: Iterable[str]) -> Config:
    """`config` with ``"key=value"`` overrides applied in order, checked once all are in.

    A key is ``section.field`` (``model.horizon=4``), a plain field of `config` itself
    (``dataset=...``), or a bare field name that only one section has (``horizon=4``); each
    value is parsed by its field's annotation (`parse`).

    Args:
      config: a frozen dataclass whose fields are sections (frozen dataclasses) or plain
        values.
      overrides: the ``"key=value"`` texts.

    Returns:
      A new configuration, built (and so checked) by its sections' own constructors.

    Raises:
      InputError: a malformed override, an unknown or ambiguous key, or a bad value.
    """
    types = field_types(type(config))
    # each section's fields and their annotations
    sections = {
        name: field_types(kind)
        for name, kind in types.items()
        if isinstance(kind, type) and dataclasses.is_dataclass(kind)
    }
    changes: dict[str, Any] = {name: {} for name in sections}
    for item in overrides:
        if not isinstance(item, str) or "=" not in item:
            raise InputError(f"an override must be 'key=value', got {item!r}")
        key, text = (part.strip() for part in item.split("=", 1))
        section, name = _resolve_key(key, types, sections)
        if section is None:
            changes[name] = parse(text, types[name], name)
        else:
            changes[section][name] = parse(text, sections[section][name], f"{section}.{name}")
    replaced = {
        name: dataclasses.replace(getattr(config, name), **fields) if name in sections else fields
        for name, fields in changes.items()
    }
    return dataclasses.replace(config, **replaced)  # type: ignore[type-var]


def _resolve_key(
    key: str, types: dict[str, Any], sections: dict[str, dict[str, Any]]
) -> tuple[str | None, str]:
    """The (section, field) an override key names, `sections` holding each section's field
    annotations; section None for a plain field."""
    if "." in key:
        section, name = key.split(".", 1)
        if section not in sections or name not in sections[section]:
            raise InputError(f"unknown config key {key!r}")
        return section, name
    if key in types and key not in sections:
        return None, key
    owners = [section for section, fields in sections.items() if key in fields]
    if len(owners) != 1:
        where = " or ".join(f"{section}.*" for section in sections)
        raise InputError(f"unknown config key {key!r}; use section.field ({where})")
    return owners[0], key


def _is_int_tuple(annotation: Any) -> bool:
    return typing.get_origin(annotation) is tuple and typing.get_args(annotation) == (int, ...)
