"""Why a tool call a model proposed cannot go to the workflow, in words the model can act on.

Every adapter checks each proposed call before handing it over (unknown tool, arguments that
are not an object or fail the tool's JSON schema) and asks the model again once, telling it
this. The workflow's gate then sees only calls it could run.
"""

from __future__ import annotations

from typing import Any

import jsonschema

from contracts import AgentResult, FailureDetails, ToolDescriptor

from .model_errors import model_failure

OTHER_CALL_INVALID = "not run: another call of this turn was invalid; propose it again"
"""What a valid call of a turn with an invalid one is answered when the model is asked again."""


def call_problem(name: str, args: Any, allowed: dict[str, ToolDescriptor]) -> str | None:
    """Why the call of tool `name` with `args` cannot go to the workflow, or None when it can."""
    descriptor = allowed.get(name)
    if descriptor is None:
        names = ", ".join(sorted(allowed)) or "none"
        return f"there is no tool named {name!r}; the tools are: {names}"
    if not isinstance(args, dict):
        return f"the arguments of {name!r} must be a JSON object, not {args!r}"
    validator = jsonschema.validators.validator_for(descriptor.arguments_schema)(descriptor.arguments_schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(args))
    if error is None:
        return None
    where = "/".join(str(part) for part in error.absolute_path) or "(arguments)"
    return f"arguments of {name!r} do not match its schema at {where}: {error.message}"


def invalid_twice(problems: list[str], thought: str) -> AgentResult:
    """The `VALIDATION_ERROR` of a step whose model proposed invalid calls after being told why."""
    message = f"the model proposed invalid tool calls again after being told why: {'; '.join(problems)}"
    return model_failure(
        FailureDetails(type="VALIDATION_ERROR", message=message),
        thought=thought or "My tool calls were invalid twice.",
    )
