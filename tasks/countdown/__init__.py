"""Countdown: reach a whole target from a handful of numbers with + - * / (issue 58; the exact
layer is ``verifiers.countdown``)."""

from tasks.countdown.task import Countdown, CountdownState, parse_puzzle

__all__ = ["Countdown", "CountdownState", "parse_puzzle"]
