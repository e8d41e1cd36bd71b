"""What the stream's events say, in words: written once, read by the REPL, the console (the API
sends each event's sentence with it) and the chat channels.

- `line_of(event)`: the event as one line of a conversation, with its tone (good news, bad news,
  a note, a call, a graph's progress, a thought, plain);
- `chat_text(event, request)`: what a chat is told of it (some events word it for a chat: a
  question to answer by replying, a timeout, an escalation);
- `decisions`, `tools`: the sentences of a decision and of a tool's result, which cards use too.

Pure, no I/O. Workflow code never imports it: a workflow tells events, the delivering activity and
the API put them in words.
"""

from .chat import chat_text
from .decisions import decision_text
from .lines import Line, Tone, line_of
from .tools import result_line

__all__ = ["Line", "Tone", "chat_text", "decision_text", "line_of", "result_line"]
