"""Supervision shared by sessions and graph tasks, typed against small protocols (`ports`):

- `approvals`: pending requests, decisions and the audit trail on a state model;
- `chat_reply`: a chat message read as a decision (confirm/cancel keywords, zh and en);
- `supervisor`: the agent loop's host (ask approval, checkpoint, tool finished) and every decision;
- `interventions`: pause, resume, cancel;
- `handlers`: the signal and update handlers a supervised workflow inherits.
"""
