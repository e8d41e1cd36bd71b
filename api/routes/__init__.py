"""HTTP routes, one module per resource (sessions, their events, interactions and grants, graphs,
artifacts, experience, health); the Temporal calls behind them are in `api/calls/`."""
