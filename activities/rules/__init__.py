"""Approval rules read where calls are assessed (`book`): the saved rules and the session's profile."""
