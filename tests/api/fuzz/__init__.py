"""`make fuzz`: schemathesis at length against the live app, with realistic ids, keys off and on.

Not part of `make test` (it takes minutes). `python -m tests.api.fuzz --help` lists its options.
`stack` runs a dev server, a worker and the app twice (without and with API keys); `seed` fills
it with sessions, approvals, a graph, grants, rules and an artifact whose ids schemathesis then
uses; `__main__` runs schemathesis with random seeds until each app has had its cases, and says
what it found.
"""
