"""Variable naming: the auto-name grammar and the fresh names inlining gives to spliced locals.

docs/specification.md, "Alpha-renaming": a name with an auto-name role or version (`base__qualifier_role_vN`) gets
the qualifier `inline<k>` inserted so the role and version survive repeated inlining; any other
name gets the suffix `_inline<k>`, joined so that a trailing `_` never fuses into the reserved
`__` delimiter.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

ROLES = ("ssa", "iter", "rv", "phi", "tile", "tmp", "out", "store", "idx", "arg")

_AUTO = re.compile(
    r"^(?P<base>[A-Za-z_][A-Za-z0-9_]*?)__(?P<quals>(?:[A-Za-z0-9]+_)*?)"
    r"(?:(?P<role>" + "|".join(ROLES) + r")(?:_v(?P<v1>\d+))?|v(?P<v2>\d+))$"
)


@dataclass(frozen=True)
class AutoName:
    """A parsed auto-name: `base__q1_q2_role_vN` (role and version each optional, not both)."""

    base: str
    qualifiers: tuple[str, ...]
    role: str | None
    version: int | None

    def __str__(self) -> str:
        parts = [*self.qualifiers]
        if self.role is not None:
            parts.append(self.role)
        if self.version is not None:
            parts.append(f"v{self.version}")
        return f"{self.base}__{'_'.join(parts)}"


def parse_auto_name(name: str) -> AutoName | None:
    """The auto-name structure of `name`, or None when it is a plain user name."""
    if "__" not in name:  # the common case, and the regex is slow to say no
        return None
    match = _AUTO.match(name)
    if match is None:
        return None
    quals = tuple(q for q in match.group("quals").split("_") if q)
    version = match.group("v1") or match.group("v2")
    return AutoName(
        base=match.group("base"),
        qualifiers=quals,
        role=match.group("role"),
        version=int(version) if version is not None else None,
    )


def add_qualifier(name: AutoName, qualifier: str) -> AutoName:
    """Insert a qualifier in front of the existing ones (the newest inlining is outermost)."""
    return AutoName(name.base, (qualifier, *name.qualifiers), name.role, name.version)


def join_name_suffix(name: str, suffix: str) -> str:
    """`name` + `_` + `suffix`, trimming a trailing `_` first so `_` -> `_inline7`, never `__`."""
    return f"{name.rstrip('_') or ''}_{suffix}" if name.rstrip("_") else f"_{suffix}"


def inline_name(name: str, counter: int) -> str:
    """The name a callee local `name` takes in the copy spliced at call site `counter`."""
    qualifier = f"inline{counter}"
    auto = parse_auto_name(name)
    if auto is not None:
        return str(add_qualifier(auto, qualifier))
    return join_name_suffix(name, qualifier)


def validate_base_name(name: str) -> None:
    """Reject a user-written name that uses the reserved `__` delimiter outside the grammar."""
    if "__" in name and parse_auto_name(name) is None:
        raise ValueError(
            f"name '{name}' uses the reserved delimiter '__', which the IR keeps for auto-names "
            f"(base__qualifier_role_vN); rename it, e.g. '{name.replace('__', '_')}'"
        )
