"""The base every contract model shares: strict, documented, one model per message."""

from pydantic import BaseModel, ConfigDict


class Contract(BaseModel):
    """Base of every Synapse contract: strict (unknown fields are rejected).

    A field whose seed name is ambiguous has a precise Python name and keeps the seed's name on the
    wire as its alias (`InteractionRequest.workflow_id` is `task_id` in JSON): models are read by
    either name and always written by the alias, so payloads, histories and the HTTP API keep the
    seeds' names.

    What people send is read as its schema says: the numbers and switches of request bodies are
    `StrictInt` / `StrictBool`, so JSON `true` is not the number 1 and `"1"` is not a decision
    (pydantic would otherwise convert them; `make fuzz` found `question_timeout_seconds: true`
    accepted)."""

    model_config = ConfigDict(
        extra="forbid", validate_by_name=True, validate_by_alias=True, serialize_by_alias=True
    )
