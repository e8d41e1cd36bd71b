"""The base every contract model shares: strict, documented, one model per message."""

from pydantic import BaseModel, ConfigDict


class Contract(BaseModel):
    """Base of every Synapse contract: strict (unknown fields are rejected)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)
