"""Workflow ids are business keys, built in one place."""

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from contracts.names import GRAPH_PREFIX, SESSION_PREFIX


def session_workflow_id(session_key: str) -> str:
    """Workflow id of the session with this key: `session:<key>`."""
    return f"{SESSION_PREFIX}{session_key}"


def session_key_of(workflow_id: str) -> str:
    """The session key inside a session workflow id."""
    return workflow_id.removeprefix(SESSION_PREFIX)


def graph_workflow_id(graph_id: str) -> str:
    """Workflow id of the graph with this UUID: `graph:<uuid>` (a full id is returned as it is)."""
    return graph_id if graph_id.startswith(GRAPH_PREFIX) else f"{GRAPH_PREFIX}{graph_id}"


def graph_id_of(workflow_id: str) -> str:
    """The graph UUID inside a graph (or graph task) workflow id."""
    return workflow_id.removeprefix(GRAPH_PREFIX).split(":", 1)[0]


def task_run_workflow_id(
    graph_workflow_id: str, task_uuid: str, version: int, instance: int | None = None
) -> str:
    """Workflow id of one run of a graph task: `graph:<uuid>:task:<task_uuid>:v<n>[:i<k>]`."""
    run_id = f"{graph_workflow_id}:task:{task_uuid}:v{version}"
    return run_id if instance is None else f"{run_id}:i{instance}"


def interaction_prefix(task_uuid: str, version: int, instance: int | None = None) -> str:
    """What starts the interaction ids of one task run, unique within its graph: `t<uuid8>v<n>[i<k>]-`."""
    return f"t{task_uuid[:8]}v{version}" + (f"i{instance}" if instance is not None else "") + "-"


def run_of_interaction(interaction_id: str) -> tuple[str, int, int | None] | None:
    """(task uuid's first 8 characters, version, instance) of a task run's interaction id, or None."""
    head, dash, _ = interaction_id.partition("-")
    if not dash or not head.startswith("t") or "v" not in head:
        return None
    uuid8, _, rest = head[1:].partition("v")
    version, _, instance = rest.partition("i")
    if len(uuid8) != 8 or not version.isdigit() or (instance and not instance.isdigit()):
        return None
    return uuid8, int(version), int(instance) if instance else None
