"""`synapse chat`: seed 003's interactive terminal client, a client of the HTTP API (the session
lives in its workflow, so the REPL can quit, crash or move and come back).

Modules, one concept each:
- `launch`: the command's entry (settings, terminal check, run); `repl`: the input line, footer,
  keys and the loop; `chat`: the session followed (start, attach, send); `state`: what the REPL
  knows of it; `follower`: its event stream, resumed after drops; `render`: chunks through rich;
- `approvals`: requests answered inline (y s a e n l; `a` saves `activities.rules.offers`' rule);
  `prompts`: one-key and one-line questions that can be closed from elsewhere;
- `commands`: the slash commands and how a line is read into them; `dispatch`: running them;
  `session_commands`, `chat_commands`, `graphs`, `info_commands`: what they do; `saved`: saved
  chat tags; `sharelog`: the session log `/chat share` writes; `completion`: Tab completion;
- `outgoing`: what a typed line sends (`@path`, `!cmd`, shell mode); `attach`: reading the files;
  `trust`: trusted folders; `settings`, `settings_file`: layered settings; `places`: where files are.
"""

from .launch import ChatOptions, run_chat

__all__ = ["ChatOptions", "run_chat"]
