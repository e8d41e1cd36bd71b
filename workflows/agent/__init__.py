"""The agent loop sessions and graph tasks share (`loop`), what it needs from its host (`host`),
the tool gate (`gate`), the agent's questions (`questions`), worker-bound tool routing
(`routing`), the activity options (`options`), and finished work remembered (`experience`)."""
