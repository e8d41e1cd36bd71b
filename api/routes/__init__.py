"""HTTP routes, one module per resource (sessions, their events, interactions, health)."""
