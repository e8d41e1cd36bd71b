"""Approval rules, shared by the API (which manages them) and the workers (which assess calls
against them): the store (`store`: SQLite by default, any SQLAlchemy URL), which rule decides a
call (`match`), and the built-in profiles (`profiles`: named sets of rules and settings)."""
