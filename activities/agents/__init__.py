"""Agents: the `agent_step` activity (`step`), the offline demo rules (`demo`), and one package per
framework adapter (`adk/`, `langgraph/`, imported lazily: each framework takes seconds to load)."""
