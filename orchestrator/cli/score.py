"""Placeholder until the score command lands."""

COMMANDS: list = []
