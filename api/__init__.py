"""The FastAPI app (`main.create_app`): routes, dependencies, error mapping, session calls, the
SSE stream hub (`sse/`) and the Lark/Feishu inbound channel (`lark/`)."""
