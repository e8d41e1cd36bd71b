"""Tools as plugins: the `assess_tool_call` and `run_tool` activities (`runner`), the registry of
tools (`registry`, the one place a tool is added), and one package per tool (`sql/`)."""
