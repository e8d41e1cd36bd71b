"""How a workflow is named and found: its id, a business key built in one place (`ids`), and the
search attributes operators filter by in the Web UI (`search_attributes`)."""
