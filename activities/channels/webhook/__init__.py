"""Signed webhook notifications of a session's interactions (`notify_webhook`)."""
