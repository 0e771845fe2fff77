"""Placeholder until the run command lands."""

COMMANDS: list = []
