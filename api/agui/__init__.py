"""The AG-UI endpoint: any AG-UI frontend (`@ag-ui/client`, CopilotKit) drives a durable session,
its approvals and questions as the run's interrupts (`routes.py`; `docs/ag-ui.md`)."""
