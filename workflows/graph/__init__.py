"""Task graphs: a PlanBlueprint run as a workflow (`workflow`: `TaskGraphWorkflow`), each task
version a child (`task_run`: `AgentTaskWorkflow`); the rules (`scheduler`), blueprint checks
(`blueprint`) and what one task definition may say (`checks`), CEL conditions (`cel`), data-flow
paths (`paths`), what a run is given (`runs`), task interventions (`task_interventions`), the state
(`state`) and how it looks (`view`)."""

from .task_run import AgentTaskWorkflow
from .workflow import TaskGraphWorkflow

__all__ = ["AgentTaskWorkflow", "TaskGraphWorkflow"]
