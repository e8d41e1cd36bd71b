"""Recording finished work in the experience index (recall happens in `agents/context.py`)."""
