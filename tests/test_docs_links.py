"""Every internal link and anchor in docs/*.md and README.md resolves, and every page is in the nav.

A link is internal when it has no URL scheme: `specification.md#rebinding-a-parameter`,
`docs/errors.md`, `#purpose`. Its file must exist (for a page in `docs/`, inside `docs/`, which is
all `mkdocs build` can see), and its anchor, if any, must be a heading of the target page. Anchors
are computed the way mkdocs' default Markdown `toc` extension makes them: the heading's text as
rendered (inline code kept, markup dropped), made ASCII, punctuation dropped, lowercased, runs of
spaces and hyphens turned into one hyphen, and `_1`, `_2`, ... appended to repeats.

The book cites nanopto's own pages: a citation of the source documents or of an issue number,
which a reader of the repository does not have, fails here too.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = [*sorted(DOCS.glob("*.md")), ROOT / "README.md"]

_FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,})")
_HEADING = re.compile(r"^(#{1,6})[ \t]+(?P<text>.*?)(?:[ \t]+#+)?[ \t]*$")
_CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.DOTALL)
_LINK = re.compile(r"!?\[(?P<text>(?:[^\[\]]|\[[^\]]*\])*)\]\((?P<target>[^)\s]+)(?:[ \t]+\"[^\"]*\")?\)")
_REF_DEF = re.compile(r"^[ ]{0,3}\[[^\]]+\]:[ \t]*(?P<target>\S+)")
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_CITATION = re.compile(r"\bseeds?\b|\bissues?[ -]?#?\d+", re.IGNORECASE)


@dataclass(frozen=True)
class Link:
    page: Path
    line: int
    target: str

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def _prose_lines(page: Path) -> list[tuple[int, str]]:
    """(1-based line number, text) of every line outside fenced code blocks."""
    out: list[tuple[int, str]] = []
    fence: str | None = None
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), start=1):
        match = _FENCE.match(line)
        if fence is None:
            if match:
                fence = match.group(1)
            else:
                out.append((number, line))
        elif match and match.group(1)[0] == fence[0] and len(match.group(1)) >= len(fence):
            fence = None
    return out


def _heading_text(raw: str) -> str:
    """A heading's text as Markdown renders it: code spans keep their content, a link its text,
    emphasis markers and HTML tags go."""
    text = _CODE_SPAN.sub(lambda m: m.group(2).strip(), raw)
    text = _LINK.sub(lambda m: m.group("text"), text)
    text = re.sub(r"<[^>]+>", "", text)
    return text.replace("*", "")


def slugify(text: str) -> str:
    """mkdocs' default anchor for a heading text (Python-Markdown's `toc.slugify`, separator `-`)."""
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def _unique(slug: str, seen: set[str]) -> str:
    while slug in seen or not slug:
        numbered = re.match(r"^(.*)_(\d+)$", slug)
        slug = f"{numbered.group(1)}_{int(numbered.group(2)) + 1}" if numbered else f"{slug}_1"
    seen.add(slug)
    return slug


def anchors(page: Path) -> list[str]:
    """The anchor of every heading of `page`, in order."""
    seen: set[str] = set()
    out: list[str] = []
    for _, line in _prose_lines(page):
        match = _HEADING.match(line)
        if match:
            out.append(_unique(slugify(_heading_text(match.group("text"))), seen))
    return out


def _paragraphs(page: Path) -> list[tuple[int, str]]:
    """(first line number, text) of each run of consecutive non-blank prose lines: a link's text
    and a code span may continue on the next line."""
    out: list[tuple[int, str]] = []
    previous = -1
    for number, line in _prose_lines(page):
        if not line.strip():
            continue
        if number == previous + 1 and out:
            out[-1] = (out[-1][0], out[-1][1] + "\n" + line)
        else:
            out.append((number, line))
        previous = number
    return out


def links(page: Path) -> list[Link]:
    """Every link target written in `page`'s prose (inline code spans are not prose)."""
    out: list[Link] = []
    for first, paragraph in _paragraphs(page):
        # Blank a code span out character for character (newlines kept) so line numbers stay right.
        text = _CODE_SPAN.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), paragraph)
        for m in _LINK.finditer(text):
            out.append(Link(page, first + text.count("\n", 0, m.start()), m.group("target").strip("<>")))
        for offset, line in enumerate(text.split("\n")):
            definition = _REF_DEF.match(line)
            if definition:
                out.append(Link(page, first + offset, definition.group("target")))
    return out


def _problem(link: Link) -> str | None:
    """Why `link` does not resolve, or None when it does (or is external)."""
    if _SCHEME.match(link.target):
        return None
    path, _, anchor = link.target.partition("#")
    target = (link.page.parent / path).resolve() if path else link.page
    if not target.exists():
        return f"no file {path}"
    if link.page.parent == DOCS and DOCS not in target.parents:
        return f"{path} is outside docs/, where mkdocs cannot see it"
    if anchor:
        if target.suffix != ".md":
            return f"an anchor into {path}, which is not a Markdown page"
        if anchor not in anchors(target):
            return f"no heading with the anchor #{anchor} in {target.relative_to(ROOT)}"
    return None


ALL_LINKS = [link for page in PAGES for link in links(page)]


@pytest.mark.parametrize("link", ALL_LINKS, ids=lambda link: f"{link.where}:{link.target}")
def test_internal_link_resolves(link: Link) -> None:
    problem = _problem(link)
    assert problem is None, f"{link.where}: the link ({link.target}) does not resolve: {problem}"


def test_the_book_links_to_its_specification() -> None:
    """Guards the collector: if it stopped finding links, every link test would pass vacuously."""
    targets = {link.target.partition("#")[0] for link in ALL_LINKS}
    assert "specification.md" in targets
    assert "docs/specification.md" in targets


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_no_citation_of_documents_a_reader_does_not_have(page: Path) -> None:
    found = [
        f"{page.relative_to(ROOT)}:{number}: {match.group(0)!r}"
        for number, line in _prose_lines(page)
        for match in _CITATION.finditer(line)
    ]
    assert not found, "cite docs/specification.md#<section> instead:\n" + "\n".join(found)


def nav_pages() -> list[str]:
    """The page of every nav entry of mkdocs.yml (`- Title: page.md` or `- page.md`)."""
    text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    nav = text.split("\nnav:\n", 1)[1]
    pages: list[str] = []
    for line in nav.splitlines():
        if line and not line.startswith((" ", "-", "#")):
            break  # the next top-level key
        match = re.match(r"^\s*-\s+(?:.*:\s+)?(?P<page>[^\s:]+\.md)\s*$", line)
        if match:
            pages.append(match.group("page"))
    return pages


def test_every_docs_page_is_in_the_mkdocs_nav() -> None:
    in_nav = nav_pages()
    missing = sorted(page.name for page in DOCS.glob("*.md") if page.name not in in_nav)
    assert not missing, f"pages in docs/ but not in the mkdocs.yml nav: {missing}"
    absent = [page for page in in_nav if not (DOCS / page).exists()]
    assert not absent, f"nav entries in mkdocs.yml with no page in docs/: {absent}"


@pytest.mark.parametrize("page", sorted(DOCS.glob("*.md")), ids=lambda page: page.name)
def test_anchors_match_python_markdown(page: Path) -> None:
    """Where Python-Markdown is installed (it comes with mkdocs), its own heading ids agree with
    `anchors`: the check above computes what mkdocs would."""
    markdown = pytest.importorskip("markdown")
    html = markdown.markdown(page.read_text(encoding="utf-8"), extensions=["toc", "tables", "fenced_code"])
    assert re.findall(r'<h[1-6] id="([^"]+)"', html) == anchors(page)


# --- Citations of the book from the code --------------------------------------------------------

CODE = ROOT / "nanopto"
_CODE_CITATION = re.compile(r"docs/(?P<page>[A-Za-z0-9_-]+\.md)(?:#(?P<anchor>[A-Za-z0-9_-]+))?")
_CONTINUATION = re.compile(r"\"\s*\n\s*[rbfu]?\"|\n\s*#\s*|\n\s*")
_TITLES = re.compile(r'^(?:,\s*|\s*\()(?P<titles>"[^"\n]+"(?:\s*,\s*"[^"\n]+")*)')


@dataclass(frozen=True)
class Citation:
    """One `docs/<page>.md`, `docs/<page>.md#anchor` or `docs/<page>.md, "Section title"` written
    in nanopto's code (a docstring, a comment or a message)."""

    source: Path
    line: int
    page: str
    anchor: str | None
    titles: tuple[str, ...]

    @property
    def where(self) -> str:
        return f"{self.source.relative_to(ROOT)}:{self.line}"


def code_citations(source: Path) -> list[Citation]:
    """Every citation of a docs page in one Python file. A section named by its title may run on
    to the next line, in a docstring, a comment or an implicitly joined string literal."""
    text = source.read_text(encoding="utf-8")
    out: list[Citation] = []
    for match in _CODE_CITATION.finditer(text):
        tail = _CONTINUATION.sub(" ", text[match.end() : match.end() + 240])
        titles = _TITLES.match(tail)
        found = tuple(re.findall(r'"([^"]+)"', titles.group("titles"))) if titles else ()
        line = text.count("\n", 0, match.start()) + 1
        out.append(Citation(source, line, match.group("page"), match.group("anchor"), found))
    return out


def _heading_texts(page: Path) -> list[str]:
    return [
        _heading_text(match.group("text")).strip()
        for _, line in _prose_lines(page)
        if (match := _HEADING.match(line))
    ]


def citation_problem(citation: Citation) -> str | None:
    """Why a citation from the code does not lead to a section of the book, or None."""
    page = DOCS / citation.page
    if not page.is_file():
        return f"there is no page docs/{citation.page}"
    if citation.anchor is not None and citation.anchor not in anchors(page):
        return f"docs/{citation.page} has no heading with the anchor #{citation.anchor}"
    headings = [" ".join(h.lower().split()) for h in _heading_texts(page)]
    for title in citation.titles:
        wanted = " ".join(title.lower().split()).rstrip(".")
        # A section may be cited by its full title or by the start of it, cut at a word boundary.
        if not any(h == wanted or h.startswith(wanted + " ") or h.startswith(wanted + ",") for h in headings):
            return f'docs/{citation.page} has no section titled "{title}"'
    return None


CODE_CITATIONS = [c for source in sorted(CODE.rglob("*.py")) for c in code_citations(source)]


@pytest.mark.parametrize("citation", CODE_CITATIONS, ids=lambda c: f"{c.where}:{c.page}")
def test_every_citation_of_the_docs_from_the_code_resolves(citation: Citation) -> None:
    problem = citation_problem(citation)
    assert problem is None, f"{citation.where}: cites docs/{citation.page} {citation.titles or ''}: {problem}"


def test_the_code_citation_collector_reads_each_form(tmp_path: Path) -> None:
    """Guards the collector: each written form is read, and a wrong section is reported."""
    source = tmp_path / "cites.py"
    source.write_text(
        '"""See docs/specification.md#purpose and docs/specification.md, "Meaning\n'
        '    under aliasing"."""\n'
        '# (docs/specification.md ("Steps at one call site", "Call-site forms"))\n'
        'MESSAGE = "see docs/specification.md, \\"No such section\\"" + "docs/nowhere.md"\n'
        'OTHER = ("(docs/errors.md, "\n    "Unknown heading)")\n'
        'X = "docs/specification.md#not-an-anchor"\n',
        encoding="utf-8",
    )
    found = code_citations(source)
    assert [(c.line, c.page, c.anchor, c.titles) for c in found] == [
        (1, "specification.md", "purpose", ()),
        (1, "specification.md", None, ("Meaning under aliasing",)),
        (3, "specification.md", None, ("Steps at one call site", "Call-site forms")),
        (4, "specification.md", None, ()),
        (4, "nowhere.md", None, ()),
        (5, "errors.md", None, ()),
        (7, "specification.md", "not-an-anchor", ()),
    ]
    problems = [citation_problem(c) for c in found]
    assert problems[:4] == [None, None, None, None]
    assert problems[4] == "there is no page docs/nowhere.md"
    assert problems[6] == "docs/specification.md has no heading with the anchor #not-an-anchor"
    assert citation_problem(Citation(source, 1, "specification.md", None, ("No such section",))) == (
        'docs/specification.md has no section titled "No such section"'
    )


def test_the_code_cites_the_book() -> None:
    """If the collector stopped finding citations, the test above would pass vacuously."""
    assert sum(bool(c.titles) for c in CODE_CITATIONS) >= 20
    assert {c.page for c in CODE_CITATIONS} >= {"specification.md", "errors.md"}
