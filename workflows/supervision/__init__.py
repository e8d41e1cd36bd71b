"""Supervision shared by sessions, graphs and graph tasks, typed against small protocols (`ports`):

- `supervisor`: the one place a run wires it, in `@workflow.init`;
- `requests`: asking people (open, wait, escalate, withdraw);
- `decisions`: taking decisions in (check, count, decide), from updates, signals and chats;
  `checks` (what a response may say), `two_people` (the two-person rule), `chat_reply`
  (a chat message read as a decision, zh and en);
- `grants`: standing approvals, matched, used and revoked; `sandbox`: where approved calls run;
- `interventions`: pause, resume, cancel;
- `state` (the fields every supervised state has), `audit` (the audit trail's one writer);
- `handlers`: the signal and update handlers a supervised workflow inherits.
"""
