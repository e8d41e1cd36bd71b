"""The FastAPI app (`main.create_app`).

- `main.py` builds the app; `deps.py` holds its `Annotated` dependencies and shared path
  parameters; `errors.py` maps every error to its HTTP answer, in one place; `openapi.py`
  completes the document; `limits.py` refuses oversized bodies at the door.
- `routes/`: the HTTP routes, one module per resource.
- `calls/`: the Temporal-call layer (sessions, graphs, decisions, ...), with no HTTP in it.
- `sse/`: the stream hub that fans workflow chunks out to server-sent-event clients.
- `lark/`: the Lark/Feishu inbound channel.
"""
