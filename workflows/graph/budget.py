"""What one workflow task of a graph may carry: payload bytes within a budget.

Temporal takes a workflow task's commands in one gRPC message of 4 MiB at most; past it the task
fails with `GrpcMessageTooLarge` and the server terminates the run. Each payload alone stays
small (inputs over the inline size go by reference, `by_reference`; the claim check keeps any
payload of `SYNAPSE_CLAIM_CHECK_BYTES` out of history), but a graph starts hundreds of runs and
sends as many signals at once. A `PayloadBudget` admits such commands while the bytes in flight
(issued, and not yet confirmed by the server) fit `TASK_PAYLOAD_BUDGET`, and at most
`COMMANDS_IN_FLIGHT` of them; one that would pass it
waits until earlier ones are confirmed. A confirmation only ever arrives in a later workflow task,
so no task carries more than the budget (one command larger than the budget alone goes alone).

Sizes are the payloads as the workflow's payload converter encodes them, plus `PAYLOAD_OVERHEAD`
each for what a codec adds (encryption: key id, nonce, tag) and the command's own fields (ids,
names, the summary). Determinism: sizes come from the values, waits are `wait_condition`s; a
graph whose commands fit the budget issues exactly the commands it issued before.
"""

from __future__ import annotations

from typing import Any

from temporalio import workflow

KIB = 1024
MIB = 1024 * KIB
TASK_PAYLOAD_BUDGET = 1 * MIB
"""Payload bytes one workflow task may carry in commands admitted here: a quarter of gRPC's
4 MiB, leaving room for everything else a task carries (markers, update answers, the stream)."""
COMMANDS_IN_FLIGHT = 25
"""Starts and signals in flight at once. Hundreds of child starts issued together queue on the
server behind one another and behind the graph's own next task (measured, 300 wide: that task
waited out its sticky queue's 10 s in half the runs, so reads of the graph timed out); in rounds
of 25 its next task is handed out within about a second, and the fan-out as a whole goes faster."""
PAYLOAD_OVERHEAD = 2 * KIB
"""Counted for each command besides its payloads: a codec's envelope (the encryption codec adds
about 100 bytes) and the command's ids, names and summary."""


def payload_size(*values: Any) -> int:
    """Bytes of `values` as this workflow's payload converter encodes them."""
    payloads = workflow.payload_converter().to_payloads(list(values)) if values else []
    return sum(payload.ByteSize() for payload in payloads)


def encoded_size(*values: Any) -> int:
    """Bytes one command carrying `values` adds to its workflow task."""
    return payload_size(*values) + PAYLOAD_OVERHEAD


class InFlight:
    """The commands issued and not yet confirmed, and their bytes, against limits (no waiting:
    pure). Every command counts at least `PAYLOAD_OVERHEAD`, so none is free."""

    def __init__(self, limit: int = TASK_PAYLOAD_BUDGET, commands: int = COMMANDS_IN_FLIGHT) -> None:
        self.limit = limit
        self.commands = commands
        self.carried = 0
        self.issued = 0

    def fits(self, size: int) -> bool:
        """Whether a command of `size` bytes may be issued now (alone, it always may)."""
        return self.issued == 0 or (self.carried + size <= self.limit and self.issued < self.commands)

    def take(self, size: int) -> None:
        """A command of `size` bytes was issued."""
        self.carried += size
        self.issued += 1

    def give_back(self, size: int) -> None:
        """A command of `size` bytes was confirmed (or failed)."""
        self.carried -= size
        self.issued -= 1


class PayloadBudget(InFlight):
    """`InFlight` that waits: commands are admitted while they fit, the rest wait their turn."""

    async def admit(self, size: int) -> bool:
        """Wait until `size` fits, and take it; whether it had to wait (the state may have moved
        on meanwhile). Give it back with `give_back` once the command is confirmed."""
        waited = False
        while not self.fits(size):  # every waiter wakes at once: each checks again in turn
            waited = True
            await workflow.wait_condition(lambda: self.fits(size))
        self.take(size)
        return waited
