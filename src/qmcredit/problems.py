"""Problems found in a claim: each names the exact place (field path or table row) and the fix."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Problem:
    location: str
    message: str

    def __str__(self) -> str:
        return f"{self.location}: {self.message}"

    def to_dict(self) -> dict:
        return {"location": self.location, "message": self.message}


class ClaimError(ValueError):
    """A claim that cannot be decided. ``problems`` lists every problem found, not only the first."""

    def __init__(self, problems: list[Problem], source: str | None = None):
        self.problems = list(problems)
        self.source = source
        head = f"{source}: " if source else ""
        n = len(self.problems)
        super().__init__(f"{head}{n} problem{'s' if n != 1 else ''} in the claim" + "".join(f"\n  {p}" for p in self.problems[:50]))

    def __reduce__(self):
        """Pickled as its problems and source (an exception pickles its message otherwise): a
        claim refused in a worker process reaches the process that reports it whole."""
        return type(self), (self.problems, self.source)

    def one_line(self) -> str:
        first = self.problems[0] if self.problems else Problem("claim", "invalid")
        more = f" (and {len(self.problems) - 1} more)" if len(self.problems) > 1 else ""
        return f"{first}{more}"

    def to_dict(self) -> dict:
        return {"error": "invalid claim", "source": self.source, "problems": [p.to_dict() for p in self.problems]}
