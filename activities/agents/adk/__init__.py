"""The google-adk adapter: one agent step as an ADK `LlmAgent` stopped at its first decision.

Nothing is imported here: `google.adk` takes about a second to import, so `agents/step.py` loads
`agent` on first use."""
