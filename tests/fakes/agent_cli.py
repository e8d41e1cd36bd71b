"""An agent CLI in Amazon Q's style, run on a real PTY by the terminal tests: it marks its prompt
with OSC 697 (`StartPrompt` ... `EndPrompt`), echoes what is typed (as a line editor in raw mode
does), shows a `Thinking...` spinner redrawn with `\\r`, announces `Using tool: NAME`, then answers.
`/quit` ends it with exit status 0. Run as `python agent_cli.py`."""

from __future__ import annotations

import sys
import time

START, END = "\x1b]697;StartPrompt\x07", "\x1b]697;EndPrompt\x07"


def say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def prompt() -> None:
    sys.stdout.write(f"{START}\x1b[32m> \x1b[0m{END}")
    sys.stdout.flush()


def answer(question: str) -> None:
    for frame in "⠋⠙⠹":
        sys.stdout.write(f"\r{frame} Thinking...")
        sys.stdout.flush()
        time.sleep(0.1)
    sys.stdout.write("\r\x1b[2K")
    say("🛠️  Using tool: fs_read (trusted)")
    say(f"You asked: \x1b[1m{question}\x1b[0m")
    say("That is all I know.")


def main() -> None:
    prompt()
    for line in sys.stdin:
        question = line.strip()
        sys.stdout.write(question + "\r\n")  # the echo
        if question == "/quit":
            say("bye")
            return
        answer(question)
        prompt()


if __name__ == "__main__":
    main()
