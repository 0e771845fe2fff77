"""Preparing Linux boards (`edgefarm setup`): the verdict on what a board is, and the setup steps."""

from .verdict import Check, Verdict, judge

__all__ = ["Check", "Verdict", "judge"]
