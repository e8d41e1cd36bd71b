"""Server-sent events: workflow chunk streams fanned out to any number of clients per API process."""

from .hub import StreamHub

__all__ = ["StreamHub"]
