"""The agent loop sessions and graph tasks share (`loop`), what it needs from its host (`host`)
and the host on supervision (`supervised`, over `state.AgentRunState`), the handlers such a run adds
(`handlers`: grants, a running tool's output), the tool gate (`gate`),
the agent's questions (`questions`), what the agent is told (`replies`), worker-bound tool
routing (`routing`), the activity options (`options`), and finished work
remembered (`experience`)."""
