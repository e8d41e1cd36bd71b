"""Server-sent events: workflow chunk streams fanned out to any number of clients per API process,
and one message's turn followed on its session's stream (`turns.py`)."""

from .hub import StreamHub

__all__ = ["StreamHub"]
