"""The `ask_user` tool: declared to every agent; a person answers it, no activity runs it."""
