"""All of Synapse's I/O: agent steps, tools (sql), and later channels; workflows only call these."""
