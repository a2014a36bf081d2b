"""Textual pipeline specs: `inline-functions{trace=true},fold-mul-one`.

The xDSL convention: a comma-separated list of pass names, each optionally followed by
`{key=value,...}` options. Values are read as bool (`true`/`false`), int, or string (bare, or
quoted with `"`/`'` to keep commas, braces or a literal `true`). Option keys may be written with
dashes (`max-depth`) and are returned with underscores, since they become dataclass fields.
"""

from __future__ import annotations

import re
from typing import NamedTuple

OptionValue = bool | int | str


class PipelineSpecError(ValueError):
    """A malformed pipeline spec; the message names the problem, the column, and shows a caret."""

    def __init__(self, spec: str, column: int, problem: str) -> None:
        self.spec = spec
        self.column = column  # 1-based
        self.problem = problem
        super().__init__(
            f"bad pipeline spec at column {column}: {problem}\n  {spec}\n  {' ' * (column - 1)}^"
        )


class PassSpec(NamedTuple):
    """One entry of a pipeline: a pass name and its options (compares equal to a plain tuple)."""

    name: str
    options: dict[str, OptionValue]


_NAME = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)*")
_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:-[A-Za-z0-9_]+)*")
_BARE = re.compile(r"[^,{}=\s\"']+")
_INT = re.compile(r"[+-]?[0-9]+")


class _Reader:
    def __init__(self, spec: str) -> None:
        self.spec = spec
        self.pos = 0

    def fail(self, problem: str, pos: int | None = None) -> PipelineSpecError:
        return PipelineSpecError(self.spec, (self.pos if pos is None else pos) + 1, problem)

    def skip_space(self) -> None:
        while self.pos < len(self.spec) and self.spec[self.pos].isspace():
            self.pos += 1

    def peek(self) -> str:
        self.skip_space()
        return self.spec[self.pos] if self.pos < len(self.spec) else ""

    def describe_here(self) -> str:
        char = self.peek()
        return "end of spec" if not char else repr(char)

    def expect(self, char: str) -> None:
        if self.peek() != char:
            raise self.fail(f"expected {char!r}, found {self.describe_here()}")
        self.pos += 1

    def match(self, pattern: re.Pattern[str], what: str) -> str:
        self.skip_space()
        m = pattern.match(self.spec, self.pos)
        if m is None:
            raise self.fail(f"expected {what}, found {self.describe_here()}")
        self.pos = m.end()
        return m.group()

    def pass_spec(self) -> PassSpec:
        name = self.match(_NAME, "a kebab-case pass name")
        if self.pos < len(self.spec) and self.spec[self.pos] in "_ABCDEFGHIJKLMNOPQRSTUVWXYZ":
            raise self.fail("pass names are kebab-case: lowercase letters, digits and '-'")
        options: dict[str, OptionValue] = {}
        if self.peek() == "{":
            self.pos += 1
            if self.peek() == "}":
                self.pos += 1
                return PassSpec(name, options)
            while True:
                self.skip_space()
                key_pos = self.pos
                key = self.match(_KEY, "an option name").replace("-", "_")
                if key in options:
                    raise self.fail(f"option {key!r} of pass {name!r} is given twice", key_pos)
                self.expect("=")
                options[key] = self.value()
                if self.peek() == ",":
                    self.pos += 1
                    continue
                if self.peek() == "}":
                    self.pos += 1
                    break
                raise self.fail(f"expected ',' or '}}' after an option, found {self.describe_here()}")
        return PassSpec(name, options)

    def value(self) -> OptionValue:
        quote = self.peek()
        if quote in ("'", '"'):
            start = self.pos
            end = self.spec.find(quote, start + 1)
            if end < 0:
                raise self.fail("unterminated quoted value", start)
            self.pos = end + 1
            return self.spec[start + 1 : end]
        text = self.match(_BARE, "an option value")
        if text in ("true", "True"):
            return True
        if text in ("false", "False"):
            return False
        if _INT.fullmatch(text):
            return int(text)
        return text


def parse_pipeline(spec: str) -> list[PassSpec]:
    """Parse a pipeline spec into (name, options) pairs; an empty spec is an empty pipeline."""
    reader = _Reader(spec)
    entries: list[PassSpec] = []
    if not reader.peek():
        return entries
    while True:
        entries.append(reader.pass_spec())
        if not reader.peek():
            return entries
        if reader.peek() != ",":
            raise reader.fail(f"expected ',' between passes, found {reader.describe_here()}")
        reader.pos += 1


def format_pipeline(entries: list[PassSpec]) -> str:
    """The spec text of `entries` (the inverse of `parse_pipeline` up to spacing and quoting)."""
    parts = []
    for name, options in entries:
        if not options:
            parts.append(name)
            continue
        rendered = ",".join(f"{key}={_format_value(value)}" for key, value in options.items())
        parts.append(f"{name}{{{rendered}}}")
    return ",".join(parts)


def _format_value(value: OptionValue) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if (
        _BARE.fullmatch(value)
        and value not in ("true", "false", "True", "False")
        and not _INT.fullmatch(value)
    ):
        return value
    return f'"{value}"' if '"' not in value else f"'{value}'"
