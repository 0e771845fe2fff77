"""Placeholder until the devices command lands."""

COMMANDS: list = []
