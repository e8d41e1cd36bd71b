"""What a command's outcome tells the agent: bash's own lost-child warning is not the command's output."""

from __future__ import annotations

import pytest

from activities.tools.terminal.result import Limits, command_result
from activities.tools.terminal.shell import CommandOutcome

WARNING = "bash: line 1: wait_for: No record of process 4\n"
LIMITS = Limits(total_seconds=60, idle_seconds=30)


def outcome(output: str) -> CommandOutcome:
    return CommandOutcome(output=output, exit_status=0, cwd="/work", execution_time=0.1)


@pytest.mark.parametrize("sandbox", ["workspace-write", "read-only"])
def test_a_sandboxs_lost_child_warning_is_dropped_and_nothing_else(sandbox: str) -> None:
    said = "started\n" + WARNING + "bash: line 2: wait_for: No record of process 12 (said by the command)\n"
    result = command_result("sleep 30 & echo started", outcome(said), LIMITS, sandbox)
    assert result.content["output"] == (
        "started\nbash: line 2: wait_for: No record of process 12 (said by the command)\n"
    )


def test_without_a_sandbox_the_output_is_left_as_it_is() -> None:
    result = command_result("echo", outcome("started\n" + WARNING), LIMITS, "none")
    assert result.content["output"] == "started\n" + WARNING
