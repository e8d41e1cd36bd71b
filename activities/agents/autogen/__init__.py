"""The AutoGen adapter: one agent step as an AgentChat `AssistantAgent`, stopped at its tool calls.

Nothing is imported here: AutoGen takes a second to import, so `agents/step.py` loads `agent`
on first use."""
