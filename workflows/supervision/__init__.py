"""Supervision shared by sessions and graph tasks: approvals and the audit trail, chat replies,
decisions and interventions."""
