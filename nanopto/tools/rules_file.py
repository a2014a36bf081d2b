"""`--rules my_rules.py`: load a user's own passes (usually `passes.rewrite(...)` over their rules).

A rules file is the user's own Python code, so it is *imported and run*, like a plugin or a
conftest.py: it builds `Ruleset`s, wraps them in passes and lists them in a module-level `PASSES`.
That is the opposite of the program file given to `nanopto inline` / `nanopto step`, which is `pl`
source and is only ever parsed, never executed. Only pass a rules file you would run yourself.

Loading registers every pass in the process-wide pass registry, so `--pipeline` can name it
(`inline-functions,fold-mul-one{max_iterations=50}`); a rules file may not take a built-in name.
A command of the CLI unregisters its rules files' passes when it ends
(`rules_loaded_for_one_command`); `run_pipeline` in a notebook keeps them, so a later cell can
name them.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import itertools
import os
import re
import traceback
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import NoReturn, TextIO

from nanopto.ir_terms.nodes import Program
from nanopto.passes.pass_base import Pass, PassOptionError, unknown_option_message
from nanopto.passes.registry import PASS_REGISTRY, PassRegistry
from nanopto.passes.rewrite import RewriteRules
from nanopto.tools.files import Interrupted


class RulesFileError(ValueError):
    """A rules file that cannot be loaded; the message names the file (and line, when known)."""


class _ExitCalled(BaseException):
    """`os._exit(status)` called by a rules file while it loads (it would end nanopto at once)."""

    def __init__(self, status: object) -> None:
        super().__init__(f"os._exit({status!r})")


def _refuse_exit(status: int) -> NoReturn:
    raise _ExitCalled(status)


_USER_PASS_FILES: dict[str, str] = {}
"""Pass name -> the rules file that registered it, so a user pass may be re-registered (the
same file loaded twice in one process) while a built-in pass can never be replaced."""

_MODULE_NUMBERS = itertools.count()


def load_rules_file(path: str, registry: PassRegistry = PASS_REGISTRY) -> tuple[Pass, ...]:
    """Import `path`, check its `PASSES` and register each; return them in the file's order."""
    file = Path(path)
    if not file.is_file():
        raise RulesFileError(f"{path}: no such rules file" if not file.exists() else f"{path}: not a file")
    spec = importlib.util.spec_from_file_location(f"nanopto_user_rules_{next(_MODULE_NUMBERS)}", file)
    if spec is None or spec.loader is None:
        raise RulesFileError(f"{path}: cannot be imported as a Python file")
    module = importlib.util.module_from_spec(spec)
    exit_now = os._exit
    os._exit = _refuse_exit  # contained like any other failure of the user's code (docs/errors.md)
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        raise RulesFileError(f"{path}:{exc.lineno}: syntax error in the rules file: {exc.msg}") from None
    except Interrupted:
        raise
    except BaseException as exc:  # SystemExit and KeyboardInterrupt too: the user's code, not nanopto's
        line = _line_in(file, exc)
        where = f"{path}:{line}" if line else path
        message = " ".join(str(exc).split())
        if isinstance(exc, _ExitCalled | SystemExit):
            raise RulesFileError(f"{where}: the rules file tried to end nanopto ({_exit_call(exc)}); a rules file may only define PASSES") from None
        raise RulesFileError(f"{where}: the rules file raised {type(exc).__name__}{': ' + message if message else ''}") from None
    finally:
        os._exit = exit_now
    declared = getattr(module, "PASSES", None)
    if declared is None:
        raise RulesFileError(
            f"{path}: defines no PASSES; end it with e.g. "
            "`PASSES = [passes.rewrite(MY_RULES, name=\"my-rules\")]`"
        )
    if not isinstance(declared, list | tuple):
        raise RulesFileError(f"{path}: PASSES must be a list of passes, not {type(declared).__name__}")
    found: list[Pass] = []
    for i, item in enumerate(declared):
        if not isinstance(item, Pass) or not dataclasses.is_dataclass(item):
            raise RulesFileError(
                f"{path}: PASSES[{i}] is a {type(item).__name__}, not a pass; "
                "wrap a Ruleset with passes.rewrite(ruleset, name=...)"
            )
        found.append(item)
    names = [p.name for p in found]
    for name in names:
        if names.count(name) > 1:
            raise RulesFileError(f"{path}: two passes are named {name!r}")
    found = [_contained(pass_, file, str(path)) for pass_ in found]
    for pass_ in found:
        _register(pass_, str(path), registry)
    return tuple(found)


def load_rules_files(paths: Sequence[str] | None, registry: PassRegistry = PASS_REGISTRY) -> tuple[Pass, ...]:
    """Every pass of every rules file, in command-line order."""
    loaded: list[Pass] = []
    for path in paths or ():
        loaded += load_rules_file(path, registry)
    return tuple(loaded)


@contextmanager
def rules_loaded_for_one_command(registry: PassRegistry = PASS_REGISTRY) -> Iterator[None]:
    """The passes rules files register inside this block are unregistered when it ends (what the
    registry held under those names before comes back), so a command's `--rules` do not outlive
    it: after `cli.main([..., "--rules", "f.py"])` in a notebook or a test, a later command
    naming `f.py`'s pass without `--rules` is the same error it is in a fresh process."""
    before = dict(_USER_PASS_FILES)
    previous = {name: registry.factory(name) for name in before}
    _SCOPES.append(set())
    try:
        yield
    finally:
        for name in _SCOPES.pop():
            factory = previous.get(name)
            if factory is None:
                registry.unregister(name)
                _USER_PASS_FILES.pop(name, None)
            else:
                registry.register(name, factory, replace=True)
                _USER_PASS_FILES[name] = before[name]


_SCOPES: list[set[str]] = []
"""The names registered inside each open `rules_loaded_for_one_command` block, innermost last."""


def _contained(pass_: Pass, file: Path, path: str) -> Pass:
    """`pass_` with its `run` contained: a Python pass of the rules file runs the user's code when
    the pipeline runs it, so `sys.exit`, `os._exit`, `raise KeyboardInterrupt` and any other
    exception there are the user's failure (docs/errors.md#whose-mistake-the-exit-code-says),
    located in the rules file. A pass `passes.rewrite` made runs nanopto's code, which reports a
    mistake in a rule itself."""
    cls = type(pass_)
    if isinstance(pass_, RewriteRules) or cls.__dict__.get("_contained_from") is not None:
        return pass_
    user_run = cls.run

    def run(self: Pass, program: Program) -> Program:
        exit_now = os._exit
        os._exit = _refuse_exit
        try:
            return user_run(self, program)
        except Interrupted:
            raise
        except BaseException as exc:  # the user's code, not nanopto's: SystemExit and KeyboardInterrupt too
            line = _line_in(file, exc)
            where = f"{path}:{line}" if line else path
            if isinstance(exc, _ExitCalled | SystemExit):
                raise RulesFileError(f"{where}: pass {self.name!r} tried to end nanopto ({_exit_call(exc)}) while it ran") from None
            message = " ".join(str(exc).split())
            raise RulesFileError(f"{where}: pass {self.name!r} raised {type(exc).__name__}{': ' + message if message else ''}") from None
        finally:
            os._exit = exit_now

    namespace = {"run": run, "_contained_from": path, "__module__": cls.__module__, "__qualname__": cls.__qualname__, "__doc__": cls.__doc__}
    contained = type(cls.__name__, (cls,), namespace)
    made: Pass = object.__new__(contained)
    for name in (f.name for f in dataclasses.fields(pass_)):
        object.__setattr__(made, name, getattr(pass_, name))
    return made


def _exit_call(exc: BaseException) -> str:
    return str(exc) if isinstance(exc, _ExitCalled) else f"sys.exit({exc.code!r})" if isinstance(exc, SystemExit) else type(exc).__name__


SHIPPED_RULES = Path(__file__).resolve().parent.parent / "examples" / "rules"
"""The rules files shipped with nanopto (`nanopto/examples/rules`)."""


def shipped_rules_defining(pass_name: str) -> str | None:
    """The shipped rules file that names a pass `pass_name` (read as text, never run), as a path
    relative to the working directory when it can be."""
    for file in sorted(SHIPPED_RULES.glob("*.py")):
        if re.search(rf"name=[\"']{re.escape(pass_name)}[\"']", file.read_text(encoding="utf-8")):
            relative = os.path.relpath(file)
            return str(file) if relative.startswith("..") else relative
    return None


def _line_in(file: Path, exc: BaseException) -> int | None:
    """The innermost line of the rules file in the exception's traceback."""
    target = str(file.resolve())
    lines = [f.lineno for f in traceback.extract_tb(exc.__traceback__) if str(Path(f.filename).resolve()) == target]
    return lines[-1] if lines else None


def _register(pass_: Pass, path: str, registry: PassRegistry) -> None:
    name = pass_.name
    if name in registry and name not in _USER_PASS_FILES:
        raise RulesFileError(f"{path}: the pass name {name!r} is taken by a built-in pass; pick another")
    options = {f.name for f in dataclasses.fields(pass_)}

    def make(**given: object) -> Pass:
        unknown = sorted(set(given) - options)
        if unknown:
            raise PassOptionError(unknown_option_message(name, unknown, sorted(options), f" (from {path})"))
        made: Pass = dataclasses.replace(pass_, **given)
        return made

    registry.register(name, make, replace=True)
    _USER_PASS_FILES[name] = path
    if _SCOPES:
        _SCOPES[-1].add(name)


def _squash(text: str) -> str:
    return re.sub(r"\s{2,}", "  ", text.strip())


def pass_summary(pass_: Pass) -> str:
    """One line saying what a pass does: its docstring's first line, or for a pass `rewrite` made
    (whose class has only the signature dataclasses writes), the rulesets it runs."""
    if isinstance(pass_, RewriteRules) and pass_.rulesets:
        rulesets = "; ".join(f"{r.name}: {r.doc}" if r.doc else r.name for r in pass_.rulesets)
        rules = sum(len(r.rules) for r in pass_.rulesets)
        return f"rewrite rules ({rules} rule{'s' * (rules != 1)}) from ruleset {rulesets}"
    cls = type(pass_)
    doc = (cls.__doc__ or "").strip()
    if not doc or doc.startswith(f"{cls.__name__}("):  # the signature dataclasses puts there
        return f"a Python pass ({cls.__name__})"
    return doc.splitlines()[0]


def describe_user_passes(path: str, passes: Sequence[Pass], out: TextIO) -> None:
    """`nanopto rules --rules FILE`: each pass of the file with its rulesets and rules."""
    out.write(f"\nuser passes from {path} ({len(passes)}):\n")
    for pass_ in passes:
        if not isinstance(pass_, RewriteRules):
            doc = (type(pass_).__doc__ or "").strip().splitlines()
            out.write(f"\n  pass {pass_.name}: a Python pass{': ' + doc[0] if doc else ''}\n")
            continue
        out.write(f"\n  pass {pass_.name}:\n")
        for ruleset in pass_.rulesets:
            out.write(f"  {ruleset.name}: {ruleset.doc}\n")
            width = max((len(r.name) for r in ruleset.rules), default=0)
            for rule in ruleset.rules:
                out.write(f"      {rule.name:<{width}}  {_squash(rule.before)}  =>  {_squash(rule.after)}\n")


__all__ = [
    "Interrupted",
    "RulesFileError",
    "describe_user_passes",
    "load_rules_file",
    "load_rules_files",
    "pass_summary",
    "shipped_rules_defining",
]
