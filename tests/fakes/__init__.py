"""Loopback stand-ins for external services, driven by the real client SDKs in tests."""
