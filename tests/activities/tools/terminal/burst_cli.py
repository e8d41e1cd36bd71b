"""An agent CLI that answers each line with a burst: `COUNT` tool uses, each with its one-line result,
written at once, then its OSC 697 marked prompt again (as `tests/fakes/agent_cli.py` marks it).
`/quit` ends it. Run as `python burst_cli.py COUNT`."""

from __future__ import annotations

import sys

START, END = "\x1b]697;StartPrompt\x07", "\x1b]697;EndPrompt\x07"


def prompt() -> None:
    sys.stdout.write(f"{START}> {END}")
    sys.stdout.flush()


def main(count: int) -> None:
    prompt()
    for line in sys.stdin:
        question = line.strip()
        sys.stdout.write(question + "\r\n")  # the echo
        if question == "/quit":
            return
        sys.stdout.write("".join(f"Using tool: t{i}\nresult {i} of {question}\n" for i in range(count)))
        prompt()


if __name__ == "__main__":
    main(int(sys.argv[1]))
