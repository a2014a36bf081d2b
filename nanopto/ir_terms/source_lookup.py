"""Finding a `@pl.program` class's source lines with one parse per file.

Before Python 3.13, `inspect.getsourcelines(cls)` parses the class's whole file for every class it
is asked about, so a module of N programs costs N parses of the file. Here the file is parsed once
into a qualname -> first-line index, and each class reads its line from it. A class that records
its own first line (`__firstlineno__`, every class from 3.13 on) is left to `inspect`: only that
record tells apart two classes with one qualname. The names are PyPTO's.
"""

from __future__ import annotations

import ast
import inspect
import linecache
import sys

_CLASS_LINE_INDEX_CACHE: dict[str, tuple[list[str], dict[str, int]]] = {}
"""file -> (the lines it was indexed from, qualname -> 1-based first line)."""


class _ClassLineIndexer(ast.NodeVisitor):
    """Every class's qualname -> its first line (its first decorator's), as `inspect` finds them:
    the first definition of a qualname wins, a class in a function is `f.<locals>.C`."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {}
        self._scope: list[str] = []

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        first = min([node.lineno, *(decorator.lineno for decorator in node.decorator_list)])
        self.index.setdefault(".".join([*self._scope, node.name]), first)
        self._scope.append(node.name)
        self.generic_visit(node)
        self._scope.pop()

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self._scope += [node.name, "<locals>"]
        self.generic_visit(node)
        del self._scope[-2:]

    visit_AsyncFunctionDef = visit_FunctionDef


def _class_line_index(filename: str, lines: list[str]) -> dict[str, int]:
    """The index of `filename` as read into `lines`; built again when the lines are another list
    (linecache read the file again), whatever their size or count."""
    cached = _CLASS_LINE_INDEX_CACHE.get(filename)
    if cached is not None and cached[0] is lines:
        return cached[1]
    indexer = _ClassLineIndexer()
    indexer.visit(ast.parse("".join(lines), filename))
    _CLASS_LINE_INDEX_CACHE[filename] = (lines, indexer.index)
    return indexer.index


def _records_own_first_line(cls: type) -> bool:
    return "__firstlineno__" in vars(cls)


def _indexed_class_source_lines(cls: type) -> tuple[list[str], int] | None:
    """`cls`'s source lines and first line from the file's index, or None where the index cannot
    answer (a class that records its own line, no source file, a qualname it has not seen)."""
    if _records_own_first_line(cls):
        return None
    try:
        filename = inspect.getsourcefile(cls)
    except TypeError:
        return None
    if filename is None:
        return None
    module = sys.modules.get(cls.__module__)
    linecache.checkcache(filename)
    lines = linecache.getlines(filename, None if module is None else module.__dict__)
    if not lines:
        return None
    try:
        first = _class_line_index(filename, lines).get(cls.__qualname__)
    except SyntaxError:
        return None
    if first is None:
        return None
    return inspect.getblock(lines[first - 1 :]), first


def get_class_source_lines(cls: type) -> tuple[list[str], int]:
    """What `inspect.getsourcelines(cls)` gives, from the file's index where it can answer."""
    found = _indexed_class_source_lines(cls)
    return found if found is not None else inspect.getsourcelines(cls)


def _code_file(obj: object) -> str | None:
    """The file Python compiled `obj` from: a function's own, or that of a class's first method."""
    members = [obj] if not isinstance(obj, type) else list(vars(obj).values())
    for member in members:
        code = getattr(getattr(member, "__func__", member), "__code__", None)
        if code is not None:
            return str(code.co_filename)
    return None


def _command_line_source(filename: str) -> list[str]:
    """The program text of `python -c TEXT` (whose code Python files under `<string>`), else []."""
    argv = [str(arg) for arg in getattr(sys, "orig_argv", ())]
    if filename != "<string>" or "-c" not in argv or argv.index("-c") + 1 >= len(argv):
        return []
    return argv[argv.index("-c") + 1].splitlines(keepends=True)


def source_lines_without_inspect(obj: object) -> tuple[list[str], int, str] | None:
    """Where `inspect` finds no source (a class or function from `exec`'d text, or from
    `python -c`): its lines, first line and file, read from `linecache` (which `exec`'s caller may
    fill) or from the `-c` command line. None when neither has them."""
    filename = _code_file(obj)
    if filename is None:
        return None
    lines = linecache.getlines(filename) or _command_line_source(filename)
    if not lines:
        return None
    first: int | None
    if isinstance(obj, type):
        first = vars(obj).get("__firstlineno__")
        if first is None:
            try:
                first = _class_line_index(filename, lines).get(obj.__qualname__)
            except SyntaxError:
                return None
    else:
        code = getattr(obj, "__code__", None)
        first = None if code is None else int(code.co_firstlineno)
    if not isinstance(first, int) or not 1 <= first <= len(lines):
        return None
    return inspect.getblock(lines[first - 1 :]), first, filename

