"""A workflow's chunk stream: the chunks it publishes (`chunks`), the watchers' long-polls (`watch`),
and bounded lists archived a page at a time (`archive`)."""
