"""All of Synapse's I/O: agents (`agents/`), tools (`tools/`), outbound channels (`channels/`); workflows only call these."""
