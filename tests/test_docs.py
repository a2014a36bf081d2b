"""Every ```python block in docs/*.md runs here, so the book "Inlining by rewriting" cannot go stale.

Conventions (docs/index.md, "How to read this book"):

* A ```python block is executed. The blocks of one file run in order in one namespace, so a later
  block may use names an earlier one defined; each file starts from an empty namespace.
* A ```python block followed (blank lines aside) by a line `<!-- output -->` and then a ```text
  block asserts its output: the text block must equal what the python block printed, exactly,
  except for trailing newlines at the very end.
* ```text blocks without the marker, ```pl (pl source shown, not run), ```sh and the rest are not
  run.

One test per python block, with the id `file.md:line`; a failure names the file and line of the
block, and the traceback's line numbers are the markdown file's own. When a block fails, the later
blocks of the same file are reported as not run rather than failing with a cascade of NameErrors.

Run as a script to regenerate the marked output blocks from what the code prints now:

    python tests/test_docs.py --update [docs/some-chapter.md ...]
"""

from __future__ import annotations

import contextlib
import difflib
import io
import os
import re
import subprocess
import sys
import traceback
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
OUTPUT_MARKER = "<!-- output -->"
_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")


class DocsFormatError(ValueError):
    """A markdown file the collector cannot read unambiguously (it never guesses)."""


class DocBlockFailure(AssertionError):
    """A python block raised, or printed something other than its marked output."""


@dataclass(frozen=True)
class Block:
    """One ```python block: where it is, its code, and the output it is expected to print."""

    path: Path
    index: int
    line: int
    """1-based line of the block's first code line (the fence is on the line before)."""
    code: str
    expected: str | None = None
    expected_line: int | None = None
    """1-based line of the expected output's first line, for --update and for messages."""
    expected_end: int | None = None
    """1-based line of the closing fence of the expected output block."""

    @property
    def where(self) -> str:
        return f"{_display(self.path)}:{self.line}"


def _display(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


@dataclass
class _Fenced:
    info: str
    open_line: int
    body: list[str]
    close_line: int


def _fenced_blocks(path: Path, lines: list[str]) -> Iterator[_Fenced | tuple[int, str]]:
    """Yield the fenced blocks, and the non-blank lines outside them as (line number, text)."""
    i = 0
    while i < len(lines):
        match = _FENCE.match(lines[i])
        if match is None:
            if lines[i].strip():
                yield (i + 1, lines[i])
            i += 1
            continue
        indent, fence, info = match["indent"], match["fence"], match["info"].strip()
        if indent and info.split()[:1] == ["python"]:
            raise DocsFormatError(
                f"{_display(path)}:{i + 1}: indented ```python block; the docs test only runs "
                "blocks whose fence starts in column 0, so this one would silently never run"
            )
        start = i
        i += 1
        body: list[str] = []
        while i < len(lines):
            close = _FENCE.match(lines[i])
            if (
                close
                and close["fence"][0] == fence[0]
                and len(close["fence"]) >= len(fence)
                and not close["info"].strip()
            ):
                break
            body.append(lines[i][len(indent) :] if lines[i].startswith(indent) else lines[i])
            i += 1
        else:
            raise DocsFormatError(f"{_display(path)}:{start + 1}: code block opened here is never closed")
        yield _Fenced(info, start + 1, body, i + 1)
        i += 1


def collect_blocks(path: Path) -> list[Block]:
    """The ```python blocks of one markdown file, each with its expected output if marked."""
    lines = path.read_text(encoding="utf-8").splitlines()
    items = list(_fenced_blocks(path, lines))
    blocks: list[Block] = []
    consumed_markers: set[int] = set()
    for k, item in enumerate(items):
        if not isinstance(item, _Fenced) or item.info.split()[:1] != ["python"]:
            continue
        expected = expected_line = expected_end = None
        following = items[k + 1 : k + 3]
        if following and isinstance(following[0], tuple) and following[0][1].strip() == OUTPUT_MARKER:
            marker_line = following[0][0]
            output = following[1] if len(following) > 1 else None
            if not isinstance(output, _Fenced) or output.info != "text":
                raise DocsFormatError(
                    f"{_display(path)}:{marker_line}: `{OUTPUT_MARKER}` must be followed by a ```text block "
                    "holding the output of the python block above it"
                )
            consumed_markers.add(marker_line)
            expected = "\n".join(output.body)
            expected_line, expected_end = output.open_line + 1, output.close_line
        blocks.append(
            Block(
                path,
                len(blocks),
                item.open_line + 1,
                "\n".join(item.body) + "\n",
                expected,
                expected_line,
                expected_end,
            )
        )
    for item in items:
        if isinstance(item, tuple) and item[1].strip() == OUTPUT_MARKER and item[0] not in consumed_markers:
            raise DocsFormatError(
                f"{_display(path)}:{item[0]}: `{OUTPUT_MARKER}` is not directly after a ```python block, "
                "so there is no code whose output it could be"
            )
    return blocks


def _trim(text: str) -> str:
    return text.rstrip("\n")


def execute(block: Block, namespace: dict[str, Any]) -> str:
    """Run one block in `namespace` and return what it printed; raise DocBlockFailure on error.

    The code is compiled with the markdown file as its filename and padded so that its line
    numbers are the file's: a traceback points straight at the line in the chapter.
    """
    code = compile("\n" * (block.line - 1) + block.code, str(block.path), "exec")
    captured = io.StringIO()
    try:
        with contextlib.redirect_stdout(captured):
            exec(code, namespace)
    except Exception as exc:
        frames = traceback.extract_tb(exc.__traceback__)
        in_doc = [f for f in frames if f.filename == str(block.path)]
        at = f"{_display(block.path)}:{in_doc[-1].lineno}" if in_doc else block.where
        detail = "".join(
            traceback.format_exception(
                type(exc), exc, exc.__traceback__.tb_next if exc.__traceback__ else None
            )
        )
        raise DocBlockFailure(
            f"{block.where}: the python block starting here failed at {at}: {type(exc).__name__}: {exc}\n\n"
            f"{detail}\nprinted before the failure:\n{captured.getvalue()}"
        ) from None
    printed = captured.getvalue()
    if block.expected is not None and _trim(printed) != _trim(block.expected):
        diff = "\n".join(
            difflib.unified_diff(
                _trim(block.expected).splitlines(),
                _trim(printed).splitlines(),
                f"{_display(block.path)}:{block.expected_line} (the ```text block)",
                "what the code printed",
                lineterm="",
            )
        )
        raise DocBlockFailure(
            f"{block.where}: the output printed by this block differs from the ```text block at line "
            f"{block.expected_line} (regenerate with `python tests/test_docs.py --update {_display(block.path)}` "
            f"after checking the change is intended):\n{diff}"
        )
    return printed


@dataclass
class _FileRun:
    """The shared namespace of one markdown file and how far its blocks have run."""

    namespace: dict[str, Any]
    done: int = 0
    failed: Block | None = None
    outputs: list[str] = field(default_factory=list)


def new_run(path: Path) -> _FileRun:
    return _FileRun({"__name__": f"docs_{path.stem.replace('-', '_')}", "__file__": str(path)})


def run_until(run: _FileRun, blocks: list[Block], target: Block) -> str:
    """Run the blocks of one file up to and including `target`, in order, in one namespace."""
    while run.done <= target.index:
        block = blocks[run.done]
        if run.failed is not None:
            raise DocBlockFailure(
                f"{target.where}: not run, because an earlier block of the same file failed ({run.failed.where})"
            )
        try:
            run.outputs.append(execute(block, run.namespace))
        except DocBlockFailure:
            run.failed = block
            raise
        finally:
            run.done += 1
    return run.outputs[target.index]


def doc_files(docs: Path = DOCS) -> list[Path]:
    return sorted(docs.glob("*.md"))


def _all_blocks() -> list[Block]:
    return [block for path in doc_files() for block in collect_blocks(path)]


_RUNS: dict[Path, _FileRun] = {}
_BLOCKS = _all_blocks()


@pytest.mark.parametrize("block", _BLOCKS, ids=[b.where.removeprefix("docs/") for b in _BLOCKS])
def test_docs_block(block: Block, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    run = _RUNS.setdefault(block.path, new_run(block.path))
    blocks = [b for b in _BLOCKS if b.path == block.path]
    message = None
    try:
        run_until(run, blocks, block)
    except DocBlockFailure as failure:
        message = str(failure)
    if message is not None:
        pytest.fail(message, pytrace=False)


# --- The book's shape -------------------------------------------------------------------------

CHAPTERS = (*sorted(p.name for p in DOCS.glob("[0-9][0-9]-*.md")), "lab.md", "course.md")
"""Every numbered chapter (a new one is covered without editing this list), the lab sheet and the
course."""

GUIDES = ("playground.md", "checking-a-pipeline.md")
"""Guide pages outside the chapters that are held to the chapters' standard:
each is in the index and the nav, runs code and checks its printed output (here, in CI)."""


def test_every_chapter_is_in_the_index_and_the_mkdocs_nav() -> None:
    index = (DOCS / "index.md").read_text(encoding="utf-8")
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for chapter in (*CHAPTERS, *GUIDES):
        assert (DOCS / chapter).is_file(), f"docs/{chapter} is missing"
        assert f"({chapter})" in index, f"docs/index.md does not link {chapter}"
        assert re.search(rf":\s*{re.escape(chapter)}\s*$", nav, re.M), (
            f"mkdocs.yml nav does not list {chapter}"
        )


def test_every_chapter_runs_code_and_checks_some_output() -> None:
    for chapter in (*CHAPTERS, *GUIDES):
        blocks = collect_blocks(DOCS / chapter)
        assert blocks, f"docs/{chapter} has no ```python block"
        assert any(b.expected is not None for b in blocks), f"docs/{chapter} checks no printed output"


EXERCISE_HEADING = re.compile(r"^### Exercise\b(?P<title>.*)$")
ANSWER_OPEN = '<details markdown="1">'
ANSWER_SUMMARY = "<summary>Answer</summary>"


def exercises(path: Path) -> list[tuple[int, str, bool]]:
    """(line, title, has an answer) for each `### Exercise ...` heading of a page.

    The book's convention: an exercise is a `### Exercise N.M: title` heading; its answer is a
    `<details markdown="1">` block whose first line is `<summary>Answer</summary>`, before the next
    heading of level 1 to 3. Headings inside code blocks do not count.
    """
    lines = path.read_text(encoding="utf-8").splitlines()
    prose = {item[0] for item in _fenced_blocks(path, lines) if isinstance(item, tuple)}
    headings = [i for i, line in enumerate(lines) if i + 1 in prose and re.match(r"^#{1,3} ", line)]
    found: list[tuple[int, str, bool]] = []
    for k, i in enumerate(headings):
        match = EXERCISE_HEADING.match(lines[i])
        if match is None:
            continue
        end = headings[k + 1] if k + 1 < len(headings) else len(lines)
        section = [line.strip() for line in lines[i + 1 : end]]
        answered = any(
            line == ANSWER_OPEN and j + 1 < len(section) and section[j + 1] == ANSWER_SUMMARY
            for j, line in enumerate(section)
        )
        found.append((i + 1, match["title"].strip(" :"), answered))
    return found


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_chapter_has_two_answered_exercises_one_of_them_find_the_bug(chapter: str) -> None:
    found = exercises(DOCS / chapter)
    unanswered = [f"line {line}: {title}" for line, title, answered in found if not answered]
    assert not unanswered, (
        f"docs/{chapter}: exercises without a `{ANSWER_OPEN}` + `{ANSWER_SUMMARY}` answer: {unanswered}"
    )
    assert len(found) >= 2, (
        f"docs/{chapter} has {len(found)} exercise(s) (`### Exercise ...`); every chapter needs two"
    )
    assert any("find the bug" in title.lower() for _, title, _ in found), (
        f"docs/{chapter}: no exercise titled `find the bug`"
    )


QUIZ = "misconceptions.md"
"""The quiz: every belief is a question whose answer is folded, and nothing it prints is shown before
the reader has predicted it."""


def test_the_quiz_asks_before_it_reveals() -> None:
    found = exercises(DOCS / QUIZ)
    assert len(found) >= 8, f"docs/{QUIZ} has {len(found)} questions (`### Exercise M.n: ...`)"
    unanswered = [f"line {line}: {title}" for line, title, answered in found if not answered]
    assert not unanswered, f"docs/{QUIZ}: questions without a folded answer: {unanswered}"
    depth = 0
    for number, line in enumerate((DOCS / QUIZ).read_text(encoding="utf-8").splitlines(), start=1):
        depth += line.strip() == ANSWER_OPEN
        depth -= line.strip() == "</details>"
        if line.strip() == OUTPUT_MARKER:
            assert depth > 0, f"docs/{QUIZ}:{number}: a checked output outside an answer reveals it before the question"


def test_the_exercise_collector_sees_answers_and_their_absence(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        '# c\n\n### Exercise 1.1: find the bug\n\ntext\n\n<details markdown="1">\n<summary>Answer</summary>\n\n'
        "yes\n\n</details>\n\n### Exercise 1.2: open\n\n```text\n### Exercise not a heading\n```\n\n## Next\n\n"
        '<details markdown="1">\n<summary>Answer</summary>\n</details>\n',
    )
    assert exercises(path) == [(3, "1.1: find the bug", True), (14, "1.2: open", False)]


def test_mkdocs_build_strict_passes(tmp_path: Path) -> None:
    """`mkdocs build --strict` with every page in the nav (skipped where mkdocs is not installed:
    it is not a dependency of nanopto)."""
    pytest.importorskip("mkdocs")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "--quiet",
            "--site-dir",
            str(tmp_path / "site"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stdout}\n{done.stderr}"


def test_relative_links_between_pages_resolve() -> None:
    for path in doc_files():
        for target in re.findall(r"\]\(([^)#:\s]+\.md)(?:#[^)]*)?\)", path.read_text(encoding="utf-8")):
            assert (path.parent / target).is_file(), f"{_display(path)} links to missing {target}"


# --- The collector itself: each convention fails when it should ------------------------------


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "chapter.md"
    path.write_text(text, encoding="utf-8")
    return path


def _run_all(path: Path) -> list[str]:
    blocks = collect_blocks(path)
    run = new_run(path)
    return [run_until(run, blocks, b) for b in blocks]


def test_blocks_share_one_namespace_and_outputs_are_compared(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "# t\n\n```python\nx = 2\n```\n\ntext\n\n```python\nprint(x * 21)\n```\n\n<!-- output -->\n```text\n42\n```\n",
    )
    blocks = collect_blocks(path)
    assert [(b.line, b.expected) for b in blocks] == [(4, None), (10, "42")]
    assert _run_all(path) == ["", "42\n"]


def test_a_failing_block_names_its_file_and_line(tmp_path: Path) -> None:
    path = _write(tmp_path, "# t\n\n```python\nx = 1\ny = x / 0\n```\n\n```python\nprint(x)\n```\n")
    blocks = collect_blocks(path)
    run = new_run(path)
    with pytest.raises(DocBlockFailure) as info:
        run_until(run, blocks, blocks[0])
    assert f"{path}:4" in str(info.value) and f"failed at {path}:5" in str(info.value)
    assert "ZeroDivisionError" in str(info.value)
    with pytest.raises(DocBlockFailure, match="not run, because an earlier block"):
        run_until(run, blocks, blocks[1])


def test_a_stale_output_block_fails_with_a_diff(tmp_path: Path) -> None:
    path = _write(tmp_path, "```python\nprint('new')\n```\n<!-- output -->\n```text\nold\n```\n")
    with pytest.raises(DocBlockFailure) as info:
        _run_all(path)
    assert "-old" in str(info.value) and "+new" in str(info.value) and f"{path}:2" in str(info.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("```python\nprint(1)\n```\n<!-- output -->\nprose\n", "must be followed by a ```text block"),
        ("prose\n<!-- output -->\n```text\n1\n```\n", "not directly after a ```python block"),
        ("```python\nprint(1)\n", "never closed"),
        ("- item\n\n  ```python\n  print(1)\n  ```\n", "indented ```python block"),
    ],
)
def test_malformed_documents_are_rejected_with_their_line(tmp_path: Path, text: str, message: str) -> None:
    path = _write(tmp_path, text)
    with pytest.raises(DocsFormatError, match=re.escape(message)) as info:
        collect_blocks(path)
    assert str(info.value).startswith(f"{path}:")


def test_update_rewrites_only_the_marked_output(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "```python\nprint('a')\nprint('b')\n```\n\n<!-- output -->\n```text\nstale\n```\n\n```text\nkept\n```\n",
    )
    update(path)
    assert path.read_text(encoding="utf-8") == (
        "```python\nprint('a')\nprint('b')\n```\n\n<!-- output -->\n```text\na\nb\n```\n\n```text\nkept\n```\n"
    )
    assert _run_all(path) == ["a\nb\n"]


# --- Regenerating the marked outputs ----------------------------------------------------------


def update(path: Path) -> int:
    """Rewrite every marked ```text block of `path` with what its python block prints now."""
    blocks = collect_blocks(path)
    run = new_run(path)
    outputs: list[tuple[Block, str]] = []
    for block in blocks:
        if block.expected is None:
            run_until(run, blocks, block)
            continue
        block_unchecked = Block(block.path, block.index, block.line, block.code)
        blocks[block.index] = block_unchecked
        outputs.append((block, run_until(run, blocks, block_unchecked)))
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    changed = 0
    for block, printed in reversed(outputs):
        assert block.expected_line is not None and block.expected_end is not None
        new = [line + "\n" for line in _trim(printed).split("\n")] if _trim(printed) else []
        old = lines[block.expected_line - 1 : block.expected_end - 1]
        if old != new:
            changed += 1
            lines[block.expected_line - 1 : block.expected_end - 1] = new
    path.write_text("".join(lines), encoding="utf-8")
    return changed


def main(argv: list[str]) -> int:
    if not argv or argv[0] != "--update":
        print("usage: python tests/test_docs.py --update [docs/FILE.md ...]", file=sys.stderr)
        return 2
    os.chdir(ROOT)
    paths = [Path(a).resolve() for a in argv[1:]] or doc_files()
    for path in paths:
        try:
            changed = update(path)
        except (DocBlockFailure, DocsFormatError) as error:
            print(error, file=sys.stderr)
            return 1
        print(f"{_display(path)}: {changed} output block(s) rewritten")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main(sys.argv[1:]))
