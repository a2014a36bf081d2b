"""`@pl.jit` and its family: decorated Python functions that specialize into `pl` programs.

`@pl.jit` marks an entry (an Orchestration function), `@pl.jit.inline` a helper InlineFunctions
splices into every caller, `@pl.jit.incore` a kernel (InCore) and `@pl.jit.opaque` a separate
function of no plane yet. None of them ever runs the body: the first call of an entry with a new
argument signature reads the entry's source, discovers the sub-functions it calls by name (from its
globals and closure, transitively; another `@pl.jit` entry is never pulled in), and specializes
them into one `Program` (`nanopto.jit.program`). That program is cached per signature.

* `entry(*args)` runs the lowered program (the default pipeline) on the reference interpreter,
  writing `pl.Out` / `pl.InOut` arrays in place, and returns the result.
* `entry.lower(*args)` returns the post-pass `Program`.
* `entry.compile(*args)` returns the cached `Specialization`; its `.program` is the specialized,
  pre-pass program (PyPTO reaches the same thing through `compile(...).program`).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from nanopto.ir_terms.nodes import FunctionType, Program
from nanopto.jit.program import Member, SpecializedProgram, build_program, to_user_names
from nanopto.jit.signature import ArgumentBinding, ParamSpec, bind_arguments, read_params
from nanopto.jit.source import FunctionSource, read_source
from nanopto.passes.pass_manager import PassManager
from nanopto.verify.interpreter import InterpreterError, interpret

__all__ = ["JITFunction", "Specialization", "jit"]

_DECORATORS = {
    FunctionType.Orchestration: "@pl.jit",
    FunctionType.Inline: "@pl.jit.inline",
    FunctionType.InCore: "@pl.jit.incore",
    FunctionType.Opaque: "@pl.jit.opaque",
}

_BUILTIN_CALLS = ("min", "max", "abs")


@dataclass
class Specialization:
    """One entry specialized to one argument signature: what the cache holds."""

    entry: str
    key: tuple[Any, ...]
    specialized: SpecializedProgram
    _lowered: Program | None = field(default=None, repr=False)

    @property
    def program(self) -> Program:
        """The specialized program before any pass: `@pl.program` source when printed."""
        return self.specialized.program

    @property
    def lowered(self) -> Program:
        """The program after the default pipeline (`inline-functions`)."""
        if self._lowered is None:
            self._lowered = PassManager.default().run(self.program)
        return self._lowered

    @property
    def renamed(self) -> dict[str, str]:
        """Each name the JIT alpha-rename made -> the user's name it stands for."""
        return dict(self.specialized.renamed)


class JITFunction:
    """A function decorated with `@pl.jit` or one of its family; its body is never executed."""

    def __init__(self, fn: Callable[..., Any], func_type: FunctionType) -> None:
        self.fn = fn
        self.func_type = func_type
        self.decorator = _DECORATORS[func_type]
        self._source: FunctionSource | None = None
        self._params: tuple[ParamSpec, ...] | None = None
        self._cache: dict[tuple[Any, ...], Specialization] = {}
        self.__name__: str = str(getattr(fn, "__name__", "<function>"))
        self.__qualname__: str = str(getattr(fn, "__qualname__", self.__name__))
        self.__doc__ = fn.__doc__
        self.__wrapped__ = fn

    def __repr__(self) -> str:
        return f"<{self.decorator} function {self.__name__}>"

    @property
    def source(self) -> FunctionSource:
        if self._source is None:
            self._source = read_source(self.fn, self.decorator)
        return self._source

    # -- what a user calls --------------------------------------------------------------------

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Specialize to `args`, lower, and run on the reference interpreter; return the result."""
        args = self._positional(args, kwargs)
        spec, binding = self._specialize(args, "call")
        try:
            result = interpret(spec.lowered, spec.entry, *binding.values)
        except InterpreterError as exc:
            raise InterpreterError(
                to_user_names(exc.reason, spec.renamed), exc.span, exc.function, exc.call_stack
            ) from None
        return _as_callers(result, args, binding)

    def lower(self, *args: Any, **kwargs: Any) -> Program:
        """The post-pass `Program` for these arguments (the default pipeline)."""
        return self._specialize(self._positional(args, kwargs), "lower")[0].lowered

    def compile(self, *args: Any, **kwargs: Any) -> Specialization:
        """The cached specialization for these arguments; `.program` is the pre-pass program."""
        return self._specialize(self._positional(args, kwargs), "compile")[0]

    def _positional(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
        """`f(a=x)` as `f(x)`: keyword arguments by parameter name, as a Python call binds them; a
        name the entry has no parameter for, or one given twice, is a JITError at the `def`."""
        if not kwargs:
            return args
        source = self.source
        names = [a.arg for a in source.node.args.args]
        bound: dict[str, Any] = dict(zip(names, args, strict=False))
        for name, value in kwargs.items():
            if name not in names:
                raise source.error(
                    source.node, f"{self.__name__}() got an unexpected keyword argument '{name}'",
                    hint=f"its parameters are {', '.join(names) or 'none'}",
                )
            if name in bound:
                raise source.error(source.node, f"{self.__name__}() got multiple values for argument '{name}'")
            bound[name] = value
        missing = [name for name in names if name not in bound]
        if missing:
            raise source.error(source.node, f"{self.__name__}() is missing argument(s) {', '.join(missing)}")
        return tuple(bound[name] for name in names)

    @property
    def cache(self) -> dict[tuple[Any, ...], Specialization]:
        """The specializations made so far, by argument signature."""
        return dict(self._cache)

    # -- specialization -----------------------------------------------------------------------

    def _specialize(self, args: tuple[Any, ...], how: str) -> tuple[Specialization, ArgumentBinding]:
        self._check_entry(how)
        source = self.source
        if self._params is None:
            self._params = read_params(source, _namespace(self.fn))
        binding = bind_arguments(source, self._params, args)
        cached = self._cache.get(binding.key)
        if cached is not None:
            return cached, binding
        closure = _namespace(self.fn)
        discovered = tuple(self._discover())
        for fn in discovered:
            closure = {**_namespace(fn.fn), **closure}
        entry, *members = (
            Member(fn.__name__, fn.func_type, fn.source, {name: f.__name__ for f, name in _called(fn)})
            for fn in (self, *discovered)
        )
        specialized = build_program(entry, members, self._params, binding.types, closure)
        spec = Specialization(self.__name__, binding.key, specialized)
        self._cache[binding.key] = spec
        return spec, binding

    def _check_entry(self, how: str) -> None:
        if self.func_type is FunctionType.Orchestration:
            return
        source = self.source
        why = {
            FunctionType.Inline: "it is spliced into every function that calls it and has no program of its own",
            FunctionType.InCore: "it is a kernel, dispatched by an entry that calls it",
            FunctionType.Opaque: "it is a sub-function, made part of the program of an entry that calls it",
        }[self.func_type]
        verb = "called" if how == "call" else f"given to .{how}()"
        raise source.error(
            source.node,
            f"{self.decorator} function '{self.__name__}' cannot be {verb} directly from Python: {why}",
            hint=f"call it by name from a @pl.jit entry, e.g. `out = {self.__name__}(...)`, and call the entry",
        )

    def _discover(self) -> Iterator[JITFunction]:
        """The sub-functions reachable by name from this entry, transitively, each once."""
        seen: dict[str, JITFunction] = {}
        queue: list[JITFunction] = [self]
        while queue:
            current = queue.pop(0)
            for callee, _ in _called(current):
                if callee is self:
                    continue
                known = seen.get(callee.__name__)
                if known is callee:
                    continue
                if known is not None or callee.__name__ == self.__name__:
                    raise current.source.error(
                        None,
                        f"two different jit functions are named '{callee.__name__}' in the program of '{self.__name__}'",
                        hint="give each function of one program its own name",
                    )
                seen[callee.__name__] = callee
                queue.append(callee)
                yield callee


def _called(fn: JITFunction) -> Iterator[tuple[JITFunction, str]]:
    """The jit sub-functions `fn`'s body calls by name, with the name it uses."""
    namespace = _namespace(fn.fn)
    source = fn.source
    for node in ast.walk(source.node):
        if not isinstance(node, ast.Call):
            continue
        names: list[ast.Name] = []
        if isinstance(node.func, ast.Name):
            names.append(node.func)
        elif (
            isinstance(node.func, ast.Attribute)
            and node.func.attr == "submit"
            and node.args
            and isinstance(node.args[0], ast.Name)
        ):
            names.append(node.args[0])
        for name in names:
            if name.id in _BUILTIN_CALLS and name.id not in namespace:
                continue
            value = namespace.get(name.id)
            if isinstance(value, JITFunction):
                if value.func_type is FunctionType.Orchestration:
                    raise source.error(
                        name,
                        f"'{name.id}' is a @pl.jit entry: an entry does not pull another entry into its program",
                        hint=f"make '{name.id}' @pl.jit.incore or @pl.jit.opaque (or @pl.jit.inline to splice it)",
                    )
                yield value, name.id
            elif value is not None and callable(value) and name.id not in _BUILTIN_CALLS:
                raise source.error(
                    name,
                    f"'{name.id}' is not a jit function, so a jit body cannot call it",
                    hint=f"decorate '{name.id}' with @pl.jit.inline, @pl.jit.incore or @pl.jit.opaque",
                )


def _namespace(fn: Callable[..., Any]) -> dict[str, object]:
    """The names `fn`'s body can see: its module's globals and its closure's cells."""
    namespace: dict[str, object] = dict(getattr(fn, "__globals__", {}))
    code = getattr(fn, "__code__", None)
    cells = getattr(fn, "__closure__", None) or ()
    if code is not None:
        for name, cell in zip(code.co_freevars, cells, strict=False):
            try:
                namespace[name] = cell.cell_contents
            except ValueError:  # a cell not yet filled
                continue
    return {k: v for k, v in namespace.items() if not k.startswith("__")}


def _as_callers(result: Any, args: tuple[Any, ...], binding: ArgumentBinding) -> Any:
    """A returned array that is an argument's buffer comes back as the caller's own object."""
    by_id = {id(v): a for v, a in zip(binding.values, args, strict=True) if v is not a}
    if isinstance(result, tuple):
        return tuple(by_id.get(id(r), r) for r in result)
    return by_id.get(id(result), result)


# ---------------------------------------------------------------------------------------------
# The decorators
# ---------------------------------------------------------------------------------------------


class _Jit:
    """`pl.jit`: `@pl.jit` marks an entry; `.inline`, `.incore`, `.opaque` mark sub-functions.

    PyPTO's decorators also take options (`@pl.jit.incore(level=...)`, `auto_scope=`); nanopto
    models none of them, so a decorator written with options is an error at the function's `def`
    rather than an option silently ignored.
    """

    def __call__(self, fn: Callable[..., Any] | None = None, /, **options: object) -> Any:
        return _decorate(fn, FunctionType.Orchestration, options)

    def inline(self, fn: Callable[..., Any] | None = None, /, **options: object) -> Any:
        return _decorate(fn, FunctionType.Inline, options)

    def incore(self, fn: Callable[..., Any] | None = None, /, **options: object) -> Any:
        return _decorate(fn, FunctionType.InCore, options)

    def opaque(self, fn: Callable[..., Any] | None = None, /, **options: object) -> Any:
        return _decorate(fn, FunctionType.Opaque, options)

    def __repr__(self) -> str:
        return "pl.jit"


def _decorate(fn: Callable[..., Any] | None, func_type: FunctionType, options: dict[str, object]) -> Any:
    if fn is not None and not options:
        return JITFunction(fn, func_type)

    def with_options(inner: Callable[..., Any]) -> JITFunction:
        marked = JITFunction(inner, func_type)
        if options:
            names = ", ".join(f"{k}=" for k in options)
            raise marked.source.error(
                None,
                f"{marked.decorator}({names}...) takes options nanopto does not model",
                hint=f"write {marked.decorator} without arguments",
            )
        return marked

    return with_options if fn is None else with_options(fn)


jit = _Jit()
"""The `@pl.jit` decorator family."""
