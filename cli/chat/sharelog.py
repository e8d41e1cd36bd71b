"""`/chat share`: a session as seed 003's session log (JSON), or the same read as Markdown.

The log has `version`, `created_at`, `project_root`, `messages` (a user's with its `attachments`;
an assistant's with its `tool_calls`: name, arguments, result, duration_ms, status) and
`checkpoints` (the tags it was saved as), plus Synapse's `session_key`, `agent_id` and the
`audit` trail (who decided what, where and when). Pure: the caller reads the session.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from contracts import AuditEntry, ToolDenial, UniversalMessage


@dataclass(frozen=True)
class Ran:
    """A call as it ran, from the session's stream: its arguments (an approver's edit included)
    and when it started and ended (after any wait for a person, so that wait is not its duration)."""

    arguments: dict[str, Any]
    started: datetime
    ended: datetime | None = None


LOG_VERSION = 1
ATTACHED = re.compile(
    r"^--- @(?P<path>.+?) \((?P<size>\d+) bytes\) ---\n(?P<body>.*?)\n--- end of @(?P=path) ---$", re.M | re.S
)
"""How the REPL puts an attached file into a message (see `attach.py`)."""
RESULT_CHARS = 4000


def session_log(
    *,
    session_key: str,
    agent_id: str,
    created_at: datetime,
    project_root: str,
    messages: Iterable[UniversalMessage],
    audit: Iterable[AuditEntry],
    checkpoints: Iterable[dict[str, str]] = (),
    exported_at: datetime,
    ran: Mapping[str, Ran] | None = None,
) -> dict[str, Any]:
    """The session log of a conversation and its audit trail; `ran`: the calls as they ran, by
    interaction id (what the stream said), where the messages hold only what the agent proposed."""
    return {
        "version": LOG_VERSION,
        "created_at": _time(created_at),
        "exported_at": _time(exported_at),
        "project_root": project_root,
        "session_key": session_key,
        "agent_id": agent_id,
        "messages": _messages(messages, ran or {}),
        "audit": [entry.model_dump(mode="json", exclude_none=True) for entry in audit],
        "checkpoints": list(checkpoints),
    }


def _messages(messages: Iterable[UniversalMessage], ran: Mapping[str, Ran]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    turn: dict[str, Any] | None = None  # the assistant's entry of the turn going on
    calls_at: dict[int, datetime | None] = {}
    for message in messages:
        content = message.content
        if message.role == "user":
            turn = None
            out.append(_user(message))
        elif message.role == "assistant":
            calls = _calls_of(content)
            if turn is None:
                turn = {
                    "role": "assistant",
                    "content": None,
                    "timestamp": _time(message.timestamp),
                    "tool_calls": [],
                }
                out.append(turn)
            if calls is None:
                turn["content"] = content
                continue
            for call in calls:
                calls_at[len(turn["tool_calls"])] = message.timestamp
                turn["tool_calls"].append(
                    {
                        "name": call.get("tool_id"),
                        "arguments": call.get("arguments", {}),
                        "result": None,
                        "duration_ms": None,
                        "status": "pending",
                    }
                )
        elif message.role == "tool" and turn is not None:
            _answer(turn["tool_calls"], calls_at, message, ran)
        else:
            out.append({"role": message.role, "content": content, "timestamp": _time(message.timestamp)})
    return out


def _user(message: UniversalMessage) -> dict[str, Any]:
    text = message.content if isinstance(message.content, str) else json.dumps(message.content)
    attachments: list[dict[str, Any]] = [
        {
            "type": "file",
            "path": found["path"],
            "size": int(found["size"]),
            "digest": "sha256:" + hashlib.sha256(found["body"].encode()).hexdigest(),
        }
        for found in ATTACHED.finditer(text)
    ]
    attachments += [{"type": "artifact", "id": ref} for ref in message.metadata.get("artifacts", []) or []]
    entry = {"role": "user", "content": text, "timestamp": _time(message.timestamp), "author": message.name}
    return {**entry, "attachments": attachments}


def _calls_of(content: Any) -> list[dict[str, Any]] | None:
    """The tool calls an assistant message makes (None: it is an answer)."""
    if isinstance(content, dict) and isinstance(content.get("tool_call"), dict):
        return [content["tool_call"]]
    if isinstance(content, dict) and isinstance(content.get("tool_calls"), list):
        return [call for call in content["tool_calls"] if isinstance(call, dict)]
    return None


def _answer(
    calls: list[dict[str, Any]],
    calls_at: dict[int, datetime | None],
    message: UniversalMessage,
    ran: Mapping[str, Ran],
) -> None:
    """Put a tool message's result on the first call of its tool still waiting for one: with the
    arguments it ran with (the proposed ones kept beside them when an approver edited them) and
    how long it ran, not counting the wait for a decision."""
    index = next(
        (
            i
            for i, call in enumerate(calls)
            if call["status"] == "pending" and call["name"] in (message.name, None)
        ),
        None,
    )
    if index is None:
        return
    call = calls[index]
    denial = ToolDenial.of(message.content)
    if denial is not None:
        call["status"] = "cancelled" if denial.cancelled else "denied"
    else:
        ok = isinstance(message.content, dict) and message.content.get("ok") is True
        call["status"] = "success" if ok else "error"
    call["result"] = _bounded(message.content)
    call["interaction_id"] = message.tool_call_id
    started, ended = calls_at.get(index), message.timestamp
    run = ran.get(message.tool_call_id or "")
    if run is not None:
        if run.arguments != call["arguments"]:
            call["proposed_arguments"], call["arguments"] = call["arguments"], run.arguments
        started, ended = run.started, run.ended or ended
    if started is not None and ended is not None:
        call["duration_ms"] = int((ended - started).total_seconds() * 1000)


def _bounded(value: Any) -> Any:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return value if len(text) <= RESULT_CHARS else text[: RESULT_CHARS - 1] + "…"


def _time(moment: datetime | None) -> str | None:
    return moment.isoformat().replace("+00:00", "Z") if moment is not None else None


def as_markdown(log: dict[str, Any]) -> str:
    """The log for people: the transcript with its tool calls, then the audit trail as a table."""
    lines = [
        f"# Synapse session `{log['session_key']}`",
        "",
        f"Agent {log['agent_id']} · project `{log['project_root']}` · started {log['created_at']} · exported {log['exported_at']}",
        "",
        "## Transcript",
    ]
    for message in log["messages"]:
        who = message.get("author") or (
            log["agent_id"] if message["role"] == "assistant" else message["role"]
        )
        lines += ["", f"**{who}** · {message.get('timestamp')}", ""]
        for attachment in message.get("attachments", []):
            lines.append(
                f"- attached {attachment['type']} `{attachment.get('path') or attachment.get('id')}`"
            )
        for call in message.get("tool_calls", []):
            lines += [
                f"- tool `{call['name']}`: {call['status']}"
                + (f", {call['duration_ms']} ms" if call["duration_ms"] is not None else ""),
                "",
                "  ```json",
                *(
                    [f"  {json.dumps(call['proposed_arguments'], ensure_ascii=False)}  (proposed)"]
                    if "proposed_arguments" in call
                    else []
                ),
                f"  {json.dumps(call['arguments'], ensure_ascii=False)}",
                f"  {json.dumps(call['result'], ensure_ascii=False, default=str)}",
                "  ```",
            ]
        if message.get("content") is not None:
            content = message["content"]
            lines += [""] if lines[-1] else []
            lines.append(
                content
                if isinstance(content, str)
                else f"```json\n{json.dumps(content, ensure_ascii=False)}\n```"
            )
    lines += [
        "",
        "## Audit",
        "",
        "| at | what | who | channel | request | comment |",
        "|---|---|---|---|---|---|",
    ]
    for entry in log["audit"]:
        cells = [
            entry.get(k) or "" for k in ("at", "kind", "principal", "channel", "interaction_id", "comment")
        ]
        lines.append(
            "| " + " | ".join(str(cell).replace("|", "\\|").replace("\n", " ") for cell in cells) + " |"
        )
    if log["checkpoints"]:
        lines += ["", "## Saved as", ""] + [
            f"- `{c['tag']}` at {c['created_at']}" for c in log["checkpoints"]
        ]
    return "\n".join(lines) + "\n"
