"""One vocabulary, for every task, of what an answer check found: named checks, each passed,
failed or not checkable, under a named rule set. ``verified`` is derived, never set by hand."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from verifiers.verdict import Invalid

__all__ = ["AnswerReport", "Check", "as_invalid"]


@dataclass(frozen=True, slots=True)
class Check:
    """One exact check of an answer.

    ``passed`` is True, False, or None when the check could not be made (``detail`` says why,
    e.g. "no answer key"). ``required`` checks decide ``verified``; the others are reported only
    (e.g. "entries found in the lexicon 9/10", which is not a rule of the puzzle).
    """

    name: str
    passed: bool | None
    detail: str = ""
    required: bool = True

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "passed": self.passed, "detail": self.detail, "required": self.required}

    def line(self) -> str:
        mark = {True: "pass", False: "FAIL", None: "not checked"}[self.passed]
        extra = f": {self.detail}" if self.detail else ""
        opt = "" if self.required else " (reported only)"
        return f"{mark:>11}  {self.name}{extra}{opt}"


@dataclass(frozen=True, slots=True)
class AnswerReport:
    """What was checked of one answer, under which rules, and the result of each check.

    ``verified`` holds only when there is at least one required check and every required check
    passed: a required check that could not be made (``passed is None``) means not verified.
    """

    rules: str
    checks: tuple[Check, ...]

    @property
    def verified(self) -> bool:
        required = [c for c in self.checks if c.required]
        return bool(required) and all(c.passed is True for c in required)

    @property
    def reason(self) -> str | None:
        """The first required check that failed or could not be made, in words; None if verified."""
        for c in self.checks:
            if c.required and c.passed is not True:
                state = "failed" if c.passed is False else "could not be checked"
                return f"{c.name} {state}" + (f": {c.detail}" if c.detail else "")
        if not any(c.required for c in self.checks):
            return "nothing required was checked"
        return None

    def to_json(self) -> dict[str, Any]:
        return {"verified": self.verified, "rules": self.rules, "checks": [c.to_json() for c in self.checks]}

    def lines(self) -> list[str]:
        head = "verified" if self.verified else "NOT verified"
        return [f"{head} under {self.rules}", *(c.line() for c in self.checks)]

    @classmethod
    def from_json(cls, data: Any) -> AnswerReport:
        """Read ``to_json`` output back; ValueError with a one-line reason when malformed."""
        if not isinstance(data, dict) or not isinstance(data.get("rules"), str) or not isinstance(
                data.get("checks"), list):
            raise ValueError("an answer report needs 'rules' (text) and 'checks' (a list)")
        checks = []
        for c in data["checks"]:
            if (not isinstance(c, dict) or not isinstance(c.get("name"), str)
                    or c.get("passed") not in (True, False, None) or not isinstance(c.get("detail", ""), str)
                    or not isinstance(c.get("required", True), bool)):
                raise ValueError("each check needs 'name' (text), 'passed' (true/false/null), 'detail', 'required'")
            checks.append(Check(c["name"], c["passed"], c.get("detail", ""), c.get("required", True)))
        return cls(data["rules"], tuple(checks))


def as_invalid(report: AnswerReport) -> Invalid | None:
    """None when ``report`` is verified, else Invalid with the first failing required check's
    detail (or its name): the short reason a gate, a refine prompt or ``verify_answer`` gives."""
    if report.verified:
        return None
    for c in report.checks:
        if c.required and c.passed is not True:
            return Invalid(c.detail or c.name)
    return Invalid(report.reason or "nothing required was checked")
