"""Tools of MCP servers (seed 003's ToolDispatchers): each declared server kept connected
(`connection`), its tools offered as plugins (`tool`), a worker's set of them (`servers`), the
state the API reads (`status`), and a server's mid-call questions taken to the person (`elicit`)."""
