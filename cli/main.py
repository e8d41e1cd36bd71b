"""The `synapse` command: argument parsing and dispatch to one module per subcommand."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from core.security import new_key
from core.settings import ChannelConfigError, Settings, variable_of
from core.version import synapse_version

ENV_HELP = """settings come from SYNAPSE_* variables (SYNAPSE_API_PORT, SYNAPSE_TEMPORAL_PORT, SYNAPSE_UI_PORT,
SYNAPSE_DATA_DIR, ...) or .env; flags override them. `worker`, `api` and `history` reach Temporal
the standard way: a TEMPORAL_PROFILE from the Temporal config file, or TEMPORAL_ADDRESS,
TEMPORAL_NAMESPACE, TEMPORAL_API_KEY and TEMPORAL_TLS*; without them 127.0.0.1:<temporal port>."""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of `synapse` and all its subcommands."""
    parser = argparse.ArgumentParser(
        prog="synapse",
        description="Durable, human-supervised AI agents on Temporal.",
        epilog=ENV_HELP,
    )
    parser.add_argument("--version", action="version", version=f"synapse {synapse_version()}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    up = commands.add_parser(
        "up",
        help="run Temporal dev server, worker and API together (Ctrl-C stops all)",
        description="Start the embedded default: the Temporal dev server (state kept in the data "
        "dir), the worker and the HTTP API, as one process group. Prints the API docs and Web UI "
        "URLs once everything is ready; Ctrl-C or SIGTERM stops all three.",
        epilog=ENV_HELP,
    )
    up.add_argument("--api-port", type=int, metavar="N", help="HTTP API port (SYNAPSE_API_PORT, 8000)")
    up.add_argument(
        "--temporal-port", type=int, metavar="N", help="Temporal gRPC port (SYNAPSE_TEMPORAL_PORT, 7233)"
    )
    up.add_argument("--ui-port", type=int, metavar="N", help="Temporal Web UI port (SYNAPSE_UI_PORT, 8233)")
    up.add_argument(
        "--data-dir", type=Path, metavar="DIR", help="where state is kept (SYNAPSE_DATA_DIR, .synapse)"
    )

    commands.add_parser(
        "worker",
        help="run only the Temporal worker",
        description="Run the Synapse worker (every workflow and activity) on the task queue "
        "SYNAPSE_TASK_QUEUE until Ctrl-C or SIGTERM. Scale out by running more of them.",
        epilog=ENV_HELP,
    )

    api = commands.add_parser(
        "api",
        help="run only the HTTP API (uvicorn)",
        description="Serve the Synapse HTTP API with uvicorn until Ctrl-C or SIGTERM.",
        epilog=ENV_HELP,
    )
    api.add_argument("--port", type=int, metavar="N", help="port to listen on (SYNAPSE_API_PORT, 8000)")
    api.add_argument("--host", metavar="H", help="interface to bind (SYNAPSE_API_HOST, 127.0.0.1)")

    schema = commands.add_parser(
        "schema",
        help="write the JSON Schema of every contract model",
        description="Write DIR/<Model>.json, the JSON Schema of every Pydantic model in `contracts`, "
        "DIR/events.json (the stream's events) and DIR/openapi.json.",
    )
    schema.add_argument("directory", type=Path, metavar="DIR", help="output directory (created if missing)")
    schema.add_argument(
        "--events-js",
        type=Path,
        metavar="FILE",
        help="also write the console's events.js (generated from DIR/events.json) to FILE",
    )

    settings = commands.add_parser(
        "settings",
        help="every setting with the value it has here; --markdown: the reference of them all",
        description="Print every setting (SYNAPSE_* and the channels' variables) with the value this "
        "process reads from the environment and .env, secrets not shown; or, with --markdown, the "
        "reference of every setting: its variables, type, default and meaning (docs/settings.md is "
        "this output).",
        epilog=ENV_HELP,
    )
    settings.add_argument(
        "--markdown", action="store_true", help="print the reference as Markdown (docs/settings.md)"
    )

    keys = commands.add_parser(
        "keys",
        help="API keys: make one (its digest goes into SYNAPSE_API_KEYS)",
        description="Work with API keys.",
    )
    keys_commands = keys.add_subparsers(dest="keys_command", required=True, metavar="COMMAND")
    new_key = keys_commands.add_parser(
        "new",
        help="print a new key once, and the SYNAPSE_API_KEYS entry that holds only its digest",
        description="Print a new random API key (shown this once: give it to its holder) and the "
        "`sha256:<hex>:PRINCIPAL:ROLE` entry to add to SYNAPSE_API_KEYS.",
    )
    new_key.add_argument("principal", metavar="PRINCIPAL", help="who the key names, e.g. alice")
    new_key.add_argument(
        "role",
        metavar="ROLE",
        choices=["viewer", "operator", "approver", "admin"],
        help="viewer, operator, approver or admin",
    )
    new_key.add_argument(
        "--projects",
        metavar="NAMES",
        help="scope the key to these projects, comma-separated (e.g. shop,billing): it then sees and "
        "acts only on their sessions, graphs, rules, artifacts and audit",
    )

    history = commands.add_parser(
        "history",
        help="workflow histories (export for replay tests)",
        description="Work with recorded workflow histories.",
    )
    history_commands = history.add_subparsers(dest="history_command", required=True, metavar="COMMAND")
    export = history_commands.add_parser(
        "export",
        help="save a workflow's event history as JSON",
        description="Fetch the event history of WORKFLOW_ID and write it as JSON to FILE. Put the "
        "file in tests/histories/ and every test run replays it, so a change that breaks running "
        "workflows fails the tests.",
        epilog=ENV_HELP,
    )
    export.add_argument("workflow_id", metavar="WORKFLOW_ID", help="id of the workflow")
    export.add_argument("file", type=Path, metavar="FILE", help="JSON file to write")
    export.add_argument("--run-id", metavar="R", help="a specific run (default: the latest)")
    add_run(commands)
    add_chat(commands)
    add_pending(commands)
    return parser


def add_client_flags(command: argparse.ArgumentParser) -> None:
    """`--api` and `--api-key`, of every command that talks to the API."""
    command.add_argument(
        "--api", metavar="URL", help="the Synapse API (SYNAPSE_API_URL, http://127.0.0.1:8000)"
    )
    command.add_argument(
        "--api-key", metavar="KEY", help="bearer key when the API needs one (SYNAPSE_API_KEY)"
    )


def add_pending(commands: Any) -> None:
    """`synapse pending`: what waits for the caller."""
    waiting = commands.add_parser(
        "pending",
        help="every request waiting for you, across sessions and graphs",
        description="List every request (tool approval, question, gated graph task) that you may "
        "answer, in every session and graph, with the API path that decides it. You are the API "
        "key's principal, else --principal, else $USER.",
        epilog="exit codes: 0 listed (or nothing waits); 5 the API could not be reached or failed.",
    )
    add_client_flags(waiting)
    waiting.add_argument(
        "--principal", metavar="WHO", help="who you are when the API has no keys (default: $USER)"
    )
    waiting.add_argument("--json", action="store_true", help="one JSON list instead of lines")


EXIT_HELP = """exit codes: 0 the turn ended with an answer and nothing was denied; 1 the agent failed;
2 bad input (flags, or a request the API refused: unknown agent or profile, a cancelled session);
3 a person or an approval rule denied a call (or cancelled the turn); 4 nobody decided in time
(--wait-approval, or the session's approval timeout; the turn is then cancelled); 5 the API could
not be reached or failed."""


def add_run(commands: Any) -> None:
    """`synapse run`: one headless turn."""
    run = commands.add_parser(
        "run",
        help="one turn, headless, for scripts and CI",
        description="Send PROMPT to a session (a new one unless --session names one) and follow the "
        "turn to its end. A request for a person waits for a decision from any channel (HTTP, Lark, a "
        "REPL); the answer goes to stdout.",
        epilog=EXIT_HELP,
    )
    run.add_argument("-p", "--prompt", required=True, help="what to tell the agent")
    run.add_argument(
        "--session",
        metavar="KEY",
        help="the session, which goes on after the run (default: a new one, run-<id>, ended with the run)",
    )
    run.add_argument(
        "--output-format",
        choices=["text", "json", "stream-json"],
        default="text",
        help="text: the answer (progress on stderr); json: one object at the end; stream-json: one "
        "JSON line per event, then a `result` line",
    )
    run.add_argument(
        "--wait-approval",
        type=positive_seconds,
        metavar="SECONDS",
        help="how long a request for a person may wait (default: as long as the session's approval timeout)",
    )
    add_client_flags(run)
    run.add_argument("--agent", metavar="Agent:NAME", help="the agent of a new session")
    run.add_argument("--profile", help="profile of a new session: default, restricted, enterprise")
    run.add_argument("--project", metavar="NAME", help="project of a new session (its approval rules apply)")
    run.add_argument("--principal", metavar="WHO", help="who sends the prompt (default: $USER)")


def add_chat(commands: Any) -> None:
    """`synapse chat`: the interactive REPL."""
    chat = commands.add_parser(
        "chat",
        help="the interactive REPL: talk to an agent, approve its calls inline",
        description="Talk to an agent in a session and answer its requests inline (y approve, s allow "
        "for the session, a allow always in this project, e edit, n deny, l later). /help lists the slash "
        "commands; @path attaches files from trusted folders, !cmd runs a shell command. Settings: "
        "~/.synapse/settings.toml, the project's .synapse/settings.toml, SYNAPSE_CHAT_* variables, flags.",
    )
    chat.add_argument(
        "session", nargs="?", metavar="SESSION_KEY", help="a session to attach to (default: a new one)"
    )
    add_client_flags(chat)
    chat.add_argument("--agent", metavar="Agent:NAME", help="the agent of a new session (default Agent:demo)")
    chat.add_argument(
        "--profile", metavar="NAME", help="profile of a new session: default, restricted, enterprise"
    )


def positive_seconds(text: str) -> float:
    """A number of seconds above zero (argparse type)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text} s: give a number of seconds above 0")
    return value


def settings_from(overrides: dict[str, Any]) -> Settings:
    """Settings from the environment, with the flags that were given taking precedence.

    `overrides` may nest one level (`{"api": {"port": 9000}}`); flags not given are None.
    """
    given: dict[str, Any] = {}
    for key, value in overrides.items():
        if isinstance(value, dict):
            value = {name: v for name, v in value.items() if v is not None} or None
        if value is not None:
            given[key] = value
    return Settings(**given)


SECRET_WORDS = ("KEY", "SECRET", "TOKEN", "PASSWORD")


def shown(variable: str, value: object) -> str:
    """`VARIABLE='value'` for an error message; a secret's value is never echoed."""
    if any(word in variable.upper() for word in SECRET_WORDS):
        return f"{variable} (value not shown)"
    return f"{variable}={value!r}"


def serving(settings: Settings) -> Settings:
    """`settings` for a command that serves (up, worker, api), once its channels can work."""
    settings.dingtalk.check()
    return settings


def api_url(given: str | None) -> str:
    """The API a client command talks to: `--api`, else SYNAPSE_API_URL, else this machine's port."""
    return given or os.environ.get("SYNAPSE_API_URL") or f"http://127.0.0.1:{Settings().api.port}"


def run(args: argparse.Namespace) -> int:
    """Dispatch parsed arguments to their subcommand; returns the exit code."""
    if args.command == "up":
        from cli.up import up

        return up(
            serving(
                settings_from(
                    {
                        "api": {"port": args.api_port},
                        "temporal": {"port": args.temporal_port, "ui_port": args.ui_port},
                        "data_dir": args.data_dir,
                    }
                )
            )
        )
    if args.command == "worker":
        from cli.serve import worker

        return worker(serving(Settings()))
    if args.command == "api":
        from cli.serve import api

        return api(serving(settings_from({"api": {"port": args.port, "host": args.host}})))
    if args.command == "schema":
        from cli.schema import schema

        return schema(args.directory, args.events_js)
    if args.command == "settings":
        from cli.settings_doc import settings_command

        return settings_command(args.markdown)
    if args.command == "history":
        from cli.history import export

        return export(Settings(), args.workflow_id, args.file, args.run_id)
    if args.command == "keys":
        try:
            projects = [name.strip() for name in (args.projects or "").split(",") if name.strip()]
            if args.projects is not None and not projects:
                raise ValueError(f"--projects {args.projects!r}: name at least one project")
            key, entry = new_key(args.principal, args.role, projects)
        except ValueError as err:
            print(f"error: {err}", file=sys.stderr)
            return 2
        print(f"key (shown once; give it to {args.principal}): {key}")
        print(f"SYNAPSE_API_KEYS entry (holds only its digest): {entry}")
        return 0
    if args.command == "run":
        from cli.headless import Headless, run_headless

        return run_headless(
            Headless(
                api=api_url(args.api),
                prompt=args.prompt,
                session=args.session,
                api_key=args.api_key or os.environ.get("SYNAPSE_API_KEY"),
                agent=args.agent,
                profile=args.profile,
                project=args.project,
                principal=args.principal or os.environ.get("USER"),
                output=args.output_format,
                wait_approval=args.wait_approval,
            )
        )
    if args.command == "pending":
        from cli.pending import pending

        return pending(
            api_url(args.api),
            api_key=args.api_key or os.environ.get("SYNAPSE_API_KEY"),
            principal=args.principal or os.environ.get("USER"),
            as_json=args.json,
        )
    if args.command == "chat":
        from cli.chat import ChatOptions, run_chat

        return run_chat(ChatOptions(args.session, args.api, args.api_key, args.agent, args.profile))
    raise AssertionError(f"unhandled command {args.command!r}")  # argparse rejects unknown ones


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `synapse` console script.

    Args:
        argv: Arguments without the program name (default: `sys.argv[1:]`).

    Returns:
        The exit code: 0 on success, 1 on failure, 2 on a usage or configuration error.
    """
    args = build_parser().parse_args(argv)
    try:
        return run(args)
    except ValidationError as err:
        problems = "; ".join(
            f"{shown(variable_of(e['loc']), e.get('input'))}: {e['msg']}" for e in err.errors()
        )
        print(f"error: invalid setting (check SYNAPSE_* variables and flags): {problems}", file=sys.stderr)
        return 2
    except ChannelConfigError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
