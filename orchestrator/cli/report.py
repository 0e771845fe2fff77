"""Placeholder until the report command lands."""

COMMANDS: list = []
