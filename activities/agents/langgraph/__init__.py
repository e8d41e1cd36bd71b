"""The LangGraph adapter: one agent step as a `model ⇄ tools` graph interrupted before `tools`.

Nothing is imported here: LangGraph and langchain-openai take seconds to import, so
`agents/step.py` loads `agent` on first use."""
