"""The names that cross the line between workflows and everything else, defined once.

Activities are registered under these names (`@activity.defn(name=...)`) and workflows call them
by name, so no activity module (and none of its heavy imports) reaches the workflow sandbox.
Signals, updates and queries that a client or another workflow sends by name are here too;
the rest are called through typed references (`handle.execute_update(SessionWorkflow.pause_checked, ...)`).
Every name is recorded in running workflows' histories: never rename one.
"""

# ------------------------------------------------------------------ activities
AGENT_STEP = "agent_step"
"""Ask the agent what it wants to do next (`AgentStepInput` -> `AgentResult`)."""
ASSESS_TOOL_CALL = "assess_tool_call"
"""Assess a tool call against its tool's policy (local activity; `ToolAssessment`)."""
RUN_TOOL = "run_tool"
"""Run an approved (or free) tool call (`ToolRun` -> `ToolResult`)."""
RESOLVE_AGENTS = "resolve_agents"
"""Look up agent declarations for a graph's assignees (local activity)."""
READ_OUTPUT = "read_output"
"""Read an offloaded task output back whole (local activity)."""
STORE_INPUTS = "store_inputs"
"""Keep a task run's inputs too large to carry in the artifact store (local activity; read back
with `read_output`)."""
ARCHIVE_PAGE = "archive_page"
"""Write a page of a bounded list to the artifact store (local activity)."""
INDEX_EXPERIENCE = "index_experience"
"""Put a finished turn or task result into the experience index (local activity)."""
DELIVER_MESSAGE = "deliver_message"
"""Send a message or a card to a chat (Lark)."""
NOTIFY_WEBHOOK = "notify_webhook"
"""POST a notification to the session's webhook."""

# ------------------------------------------------------------------ signals
SUBMIT_MESSAGE = "submit_message"
"""A message for a session (signal-with-start creates the session)."""
DECIDE = "decide"
"""A `Decision` on an interaction (the signal twin of `decide_checked`): a refusal is audited."""
TOOL_OUTPUTS = "tool_outputs"
"""A batch of a running tool's output (`ToolOutputBatch`)."""
TASK_FINISHED = "task_finished"
"""A graph task's run tells its graph how it ended."""
TASK_INTERACTIONS = "task_interactions"
"""A graph task's run tells its graph which of its requests wait for a person."""
REPORT_TO_GRAPH = "report_to_graph"
"""A graph that continued-as-new asks its task runs to signal their report."""
GRAPH_PROGRESS = "graph_progress"
"""A graph tells the session that started it what changed."""
ELICIT = "elicit"
"""A running MCP tool's server asks the person something (`Elicitation`)."""

# ------------------------------------------------------------------ updates, queries
DECIDE_CHECKED = "decide_checked"
"""A `Decision` on an interaction, validated before history, answered once it took effect."""
WATCH = "watch"
"""Long-poll a workflow's chunk stream."""
GET_ELICITATION = "get_elicitation"
"""What the person answered to an elicitation (`ElicitationAnswer`, None until then)."""
GET_ARCHIVE = "get_archive"
"""Where the archived part of a workflow's kept lists is."""

# ------------------------------------------------------------------ workflow ids
SESSION_PREFIX = "session:"
"""A session's workflow id is `session:<key>` (built by `workflows.identity.ids`)."""
GRAPH_PREFIX = "graph:"
"""A graph's workflow id is `graph:<uuid>`, its task runs' `graph:<uuid>:task:…`."""
