"""Approval rules read where calls are assessed (`book`: the saved rules and the session's profile),
and the "allow always" rule offered for a call (`offers`: the REPL's and the console's)."""
