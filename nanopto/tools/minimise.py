"""Make a failing `pl` program smaller while it still fails the same way.

A greedy reducer over the source's lines, in the spirit of delta debugging: it tries to delete a
whole statement (a line with the block indented under it) or a whole helper (its decorator, `def`
and body), keeps any deletion after which `still_fails` holds, and repeats until no deletion is
kept or the budget of tries is spent. A deletion that breaks the program (an undefined name, an
empty body) fails to parse or fails another way, and is simply not kept; what is left is a program
in which every line matters to the failure. `nanopto soak` uses it on the first program of every
finding's signature (docs/property-testing.md#soaking-a-pipeline).
"""

from __future__ import annotations

import time
from collections.abc import Callable


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _blocks(lines: list[str], depth: int) -> list[tuple[int, int]]:
    """Every deletable `(start, end)` range at one depth, last first: at depth 4 a function of the
    program class (its decorators, `def` and body), deeper a statement with the lines under it."""
    found: list[tuple[int, int]] = []
    for i, line in enumerate(lines):
        text = line.strip()
        if not text or text.startswith("#") or _indent(line) != depth:
            continue
        if depth == 4:
            if not text.startswith("@") or lines[i - 1].strip().startswith("@"):
                continue
            end = i + 1
            while end < len(lines) and lines[end].strip().startswith("@"):
                end += 1
            end += 1
        elif text.startswith(("def ", "@")):
            continue
        else:
            end = i + 1
        while end < len(lines) and (not lines[end].strip() or _indent(lines[end]) > depth):
            end += 1
        found.append((i, end))
    return found[::-1]


def minimise(source: str, still_fails: Callable[[str], bool], *, max_tries: int = 400, max_seconds: float = 60.0) -> str:
    """The smallest program found, by whole-line deletions, for which `still_fails` holds.

    Whole helpers go first, then statements from the outermost level inwards, each level from the
    last line up (a deletion leaves the lines above it where they were). `still_fails(source)` must
    be true of `source` itself; it is called at most `max_tries` times and no longer than about
    `max_seconds`."""
    lines = source.splitlines()
    started = time.monotonic()
    tries = 0
    shrunk = True
    while shrunk:
        shrunk = False
        deepest = max((_indent(line) for line in lines if line.strip()), default=0)
        for depth in range(4, deepest + 1, 4):
            for start, end in _blocks(lines, depth):
                if tries >= max_tries or time.monotonic() - started > max_seconds:
                    return "\n".join(lines) + "\n"
                candidate = lines[:start] + lines[end:]
                tries += 1
                if still_fails("\n".join(candidate) + "\n"):
                    lines = candidate
                    shrunk = True
    return "\n".join(lines) + "\n"
