"""The settings source that reads each group's fields from their own flat variables."""

from __future__ import annotations

from typing import Any

from pydantic import AliasChoices
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource
from pydantic_settings.sources import EnvSettingsSource

from .group import Group


class GroupedVariables(PydanticBaseSettingsSource):
    """Reads each group's fields from their own flat variables (first `environ`, then `.env`)."""

    def __init__(self, settings_cls: type[BaseSettings], *sources: EnvSettingsSource) -> None:
        super().__init__(settings_cls)
        self._sources = sources

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        """Unused: `__call__` reads whole groups."""
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        values: dict[str, dict[str, Any]] = {}
        for group_name, group_field in self.settings_cls.model_fields.items():
            group = group_field.annotation
            if not (isinstance(group, type) and issubclass(group, Group)):
                continue
            for name, field in group.model_fields.items():
                found = self._lookup(field)
                if found is not None:
                    values.setdefault(group_name, {})[name] = found
        return values

    def _lookup(self, field: FieldInfo) -> str | None:
        alias = field.validation_alias
        names = [str(choice) for choice in alias.choices[1:]] if isinstance(alias, AliasChoices) else []
        for source in self._sources:
            for name in names:
                value = source.env_vars.get(name.lower())
                if value is not None:
                    return value
        return None
