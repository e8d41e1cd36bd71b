"""The `sql` tool: statement classification (`syntax`), the database with its exactly-once claims
(`database`)."""
