"""Workflow ids are business keys, built in one place."""

SESSION_PREFIX = "session:"


def session_workflow_id(session_key: str) -> str:
    """Workflow id of the session with this key: `session:<key>`."""
    return f"{SESSION_PREFIX}{session_key}"


def session_key_of(workflow_id: str) -> str:
    """The session key inside a session workflow id."""
    return workflow_id.removeprefix(SESSION_PREFIX)
