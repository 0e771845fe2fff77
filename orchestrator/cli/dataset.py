"""Placeholder until the dataset command lands."""

COMMANDS: list = []
