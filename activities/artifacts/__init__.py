"""Keeping large things out of history: offloading results to artifacts, archiving pages."""
