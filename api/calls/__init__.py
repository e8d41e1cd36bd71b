"""The Temporal-call layer: everything the API and its channels ask of workflows, with no HTTP.

Routes (`api/routes/`) and the Lark channel (`api/lark/`) call these; they raise the domain
errors of `errors.py`, which `api/errors.py` maps to HTTP statuses in one place.

- `errors.py`: `CallError` and its kinds (`NotFound`, `AlreadyExists`, `Closed`, `NotAnswered`,
  `Refused`, `Invalid` with its `Problem`s).
- `workflow.py`: a query on any workflow, Temporal's failures (of queries and updates) turned into
  those errors.
- `ref.py`: `WorkflowRef`, a session or a graph as the calls address it (its id, its name, the read
  that checks a command), and its queries and updates.
- `busy.py`: retrying what Temporal refuses for lack of room.
- `sessions.py`: start a session, deliver a message (signal-with-start), read it, update it.
- `graphs.py`: start a graph, read it and its tasks, update it (reopening a closed one).
- `blueprints.py`: the checks a blueprint passes before a graph starts or is extended.
- `decisions.py`: a person's decision taken to the workflow that asked.
- `archive.py`: reading what workflows archived (artifact pages).
- `sizes.py`: each field a command carries held to its limit (`TooLarge`).
- `scope.py`: which project a workflow belongs to, for keys scoped to projects.
"""
