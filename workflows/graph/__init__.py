"""Task graphs: a PlanBlueprint run as a workflow (`workflow`: `TaskGraphWorkflow`), each task
version a child (`task_run`: `AgentTaskWorkflow`); the rules (`rules`: the scheduler and its parts), blueprint checks
(`blueprint`) and what one task definition may say (`checks`), CEL conditions (`cel`), data-flow
paths (`paths`), what a run is given (`runs`), task interventions (`interventions`), a run's opening and end (`lifecycle`), the state
(`state`) and how it looks (`view`)."""

from .task_run import AgentTaskWorkflow
from .workflow import TaskGraphWorkflow

__all__ = ["AgentTaskWorkflow", "TaskGraphWorkflow"]
