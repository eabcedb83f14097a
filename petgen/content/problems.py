"""Content problems: collected during loading and validation, printed as `path:line: message`."""

from __future__ import annotations

from dataclasses import dataclass, field

import click


@dataclass(frozen=True, order=True)
class Problem:
    path: str
    line: int
    message: str
    hint: str | None = None
    severity: str = "error"  # "error" or "warning"

    def format(self) -> str:
        prefix = "warning: " if self.severity == "warning" else ""
        text = f"{self.path}:{self.line}: {prefix}{self.message}"
        if self.hint:
            text += f"\n    hint: {self.hint}"
        return text


@dataclass
class Problems:
    """An ordered collection of problems; `add` is the only way in."""

    items: list[Problem] = field(default_factory=list)

    def add(self, path: str, line: int, message: str, hint: str | None = None, *, warning: bool = False) -> None:
        self.items.append(Problem(path, line, message, hint, "warning" if warning else "error"))

    def extend(self, problems: list[Problem]) -> None:
        self.items.extend(problems)

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.items if p.severity == "error"]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.items if p.severity == "warning"]

    def sorted(self) -> list[Problem]:
        return sorted(self.items, key=lambda p: (p.path, p.line, p.message))


class ContentError(click.ClickException):
    """The content has problems; nothing was written. Printed by click as `Error: …`, exit 1."""

    def __init__(self, problems: list[Problem], *, strict: bool = False) -> None:
        self.problems = problems
        errors = sum(1 for p in problems if p.severity == "error")
        warnings = len(problems) - errors
        counted = f"{errors} error{'s' if errors != 1 else ''}"
        if strict and warnings:
            counted += f" and {warnings} warning{'s' if warnings != 1 else ''} (--strict)"
        super().__init__(f"content has {counted}; nothing was written.")
