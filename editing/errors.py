"""Why a change was refused. Each error has the code a GraphQL client sees, and details."""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from api_errors import ApiError, ErrorCode

Location = tuple[str | int, ...]
"""Where in the input a problem is, e.g. ("entries", 3, "score")."""


@dataclass(frozen=True)
class Problem:
    location: Location
    message: str
    refers_to: Location | None = None
    """Another place the message names (the row a repeated row repeats), for a reader that
    names places otherwise (an import names a CSV file's lines)."""


def dotted(location: Location) -> str:
    """`entries[3].score`: a location as a reader writes it."""
    text = ""
    for part in location:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text


class EditError(ApiError):
    """A change the client asked for that cannot be made; nothing was written."""


class InvalidInput(EditError):
    """The input breaks a rule: each problem names the field or row (by index) at fault."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = list(problems)
        shown = "; ".join(f"{dotted(p.location)}: {p.message}" for p in self.problems[:5])
        more = len(self.problems) - 5
        super().__init__(shown + (f"; and {more} more" if more > 0 else ""))

    @classmethod
    def at(cls, location: Location, message: str) -> "InvalidInput":
        return cls([Problem(location, message)])

    def within(self, prefix: Location) -> "InvalidInput":
        """The same problems, located inside a larger input."""
        return InvalidInput(
            [
                Problem(
                    (*prefix, *p.location),
                    p.message,
                    None if p.refers_to is None else (*prefix, *p.refers_to),
                )
                for p in self.problems
            ]
        )

    def extensions(self) -> dict[str, Any]:
        return {
            "field": dotted(self.problems[0].location),
            "problems": [
                {"field": dotted(p.location), "message": p.message} for p in self.problems
            ],
        }


class Conflict(EditError):
    """The document is not at the revision the writer expected: someone changed it first."""

    code = ErrorCode.CONFLICT

    def __init__(self, message: str, *, current_revision: int | None) -> None:
        super().__init__(message)
        self.current_revision = current_revision

    def extensions(self) -> dict[str, Any]:
        return {"currentRevision": self.current_revision}


class NotFound(EditError):
    code = ErrorCode.NOT_FOUND
