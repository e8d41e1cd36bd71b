"""What every settings group shares: its base model and `env`, which names a field's variables."""

from __future__ import annotations

from pydantic import AliasChoices, BaseModel, ConfigDict


def env(name: str, *more: str) -> AliasChoices:
    """The variables a field is read from (the first set wins); its own name works in code."""
    return AliasChoices(name, *more)


class Group(BaseModel):
    """A group of settings (`settings.api`, `settings.lark`, ...): frozen, unknown fields refused, each
    field read from the flat variables its `validation_alias` names (see `source.py`)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)
