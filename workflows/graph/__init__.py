"""Task graphs: a PlanBlueprint run as a workflow.

- `workflow`: `TaskGraphWorkflow` (handlers, run loop, continue-as-new), its `state` and `view`;
- `rules/`: the scheduler and its parts, pure (every status change of a task);
- at the door: `blueprint` (accepting a blueprint), `checks` (what one task may say), `reach`
  (GOTOs whose target can never run), `cel` and `cel_numbers` (conditions), `paths` (data flow);
- the workflow's parts: `children` (task runs started, awaited, cancelled), `gates` (people asked),
  `plans` (blueprints and agents' plans accepted), `interventions` and `rollbacks` (people's
  changes to tasks), `lifecycle` (a run's opening and end), `relay` (a parent session told),
  `whole_outputs` (offloaded answers read back), `run_inputs` (what a task run is given),
  `by_reference` (large inputs kept in the artifact store), `budget` (payload bytes per workflow task);
- `task_run/`: `AgentTaskWorkflow`, one version (or loop instance) of one task, run by its assignee.
"""

from .task_run import AgentTaskWorkflow
from .workflow import TaskGraphWorkflow

__all__ = ["AgentTaskWorkflow", "TaskGraphWorkflow"]
