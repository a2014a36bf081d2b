"""`pl` source text -> IR, by reading Python's `ast` and never running anything.

Programs are written as decorated Python classes, but they are data, not code: the parser walks the
syntax tree, so a program cannot execute arbitrary Python while it is being read, and every error
can point at the exact source column. Literal values (module constants, `pl.static_assert`
conditions) go through `parse_static`, a closed interpreter for constant expressions.

Name binding is deliberately pre-SSA, because that is what the inliner's rebinding rules are stated
against: a function has one flat name table, assigning an already-bound name reuses its `Var`
(`t = pl.add(t, t)` on a parameter `t` assigns the parameter's own Var), and a name first bound in
a loop or branch body stays visible after it. Only loop headers (loop variables, `init_values`
iter_args, `for ... in pl.spmd(...)` variables) are scoped to their body; `x = pl.yield_(...)`
names the loop's or if's result variables, visible after the statement.

Types and expressions live in `parse_exprs`; this module holds the program, function and
statement forms.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass, field

from nanopto.gc_pause import gc_paused
from nanopto.ir_terms.dtypes import DataType
from nanopto.ir_terms.nodes import (
    AssignStmt,
    BreakStmt,
    Call,
    ConstInt,
    ContinueStmt,
    EvalStmt,
    Expr,
    ForKind,
    ForStmt,
    Function,
    FunctionType,
    IfStmt,
    IterArg,
    Keyword,
    MakeTuple,
    Param,
    ParamDirection,
    Program,
    ReturnStmt,
    ScopeStmt,
    SeqStmts,
    SliceExpr,
    Stmt,
    Submit,
    TupleGetItemExpr,
    Var,
    WhileStmt,
    YieldStmt,
)
from nanopto.ir_terms.parse_error import ParserError
from nanopto.ir_terms.parse_exprs import (
    DynamicDim,
    ExprParser,
    dotted_name,
    pl_call_name,
)
from nanopto.ir_terms.parse_static import NotStatic, is_static_value, static_eval
from nanopto.ir_terms.schema import walk
from nanopto.ir_terms.types import ArrayType, ScalarType, TupleType, Type, UnknownType

__all__ = ["DynamicDim", "ParserError", "parse_program"]

_LANGUAGE_MODULES = ("nanopto.language", "pypto.language")
_RANGE_LOOPS = {"range": ForKind.Sequential, "parallel": ForKind.Parallel, "unroll": ForKind.Unroll}
_FOR_SCOPES = ("spmd", "split_aiv")
_WITH_SCOPES = ("at", "cluster", "graph", "spmd", "scope", "manual_scope")
_DUMP_TAG_FUNCTIONS = (FunctionType.Orchestration, FunctionType.Inline)

_AUG_HINT = "write an explicit assignment: acc = acc + ..."


@dataclass
class _YieldContext:
    """What the `pl.yield_` statements of one if-branch or loop body have bound so far."""

    kind: str  # "if", "for", "while_", "while"
    carried: int = 0
    seen: bool = False
    names: tuple[str, ...] | None = None
    value_types: tuple[Type, ...] = ()
    annotation: Type | None = None
    node: ast.AST | None = None


@dataclass
class _Signature:
    name: str
    params: tuple[Param, ...]
    return_types: tuple[Type, ...]
    func_type: FunctionType
    attrs: tuple[Keyword, ...]
    node: ast.FunctionDef


@dataclass
class _FunctionState:
    names: dict[str, Var] = field(default_factory=dict)
    header_ids: set[int] = field(default_factory=set)
    loops: list[str] = field(default_factory=list)
    yields: list[_YieldContext] = field(default_factory=list)
    tmp_counter: int = 0
    func_type: FunctionType = FunctionType.Opaque


def parse_program(
    source: str,
    filename: str = "<string>",
    *,
    closure: Mapping[str, object] | None = None,
    line_offset: int = 0,
    tree: ast.Module | None = None,
) -> Program:
    """Parse the `@pl.program` class in `source` into a `Program`; never executes `source`.

    `closure` supplies Python values the source may name but does not define (what the
    `@pl.program` decorator passes from the defining module); `line_offset` shifts reported line
    numbers when `source` is an excerpt of a larger file. `tree`, when given, is the module to read
    instead of parsing `source`: a front end that assembles the `@pl.program` class from functions
    found elsewhere (`@pl.jit`) passes it with locations in `source`, so errors quote `source`.
    """
    parser = _ProgramParser(source, filename, dict(closure or {}), line_offset, tree)
    try:
        with gc_paused():  # a 5 MB file parsed in 64 s with the collector on, 17 s without
            return parser.parse()
    except ParserError:
        raise
    except RecursionError:
        raise parser.error(None, "nesting too deep", hint="split the expression or body into smaller parts") from None
    except MemoryError:
        raise parser.error(None, "out of memory while parsing this construct") from None
    except Exception as exc:  # a parser bug must still surface as a ParserError
        raise parser.error(None, f"internal parser error ({type(exc).__name__}): {exc}") from exc


class _ProgramParser(ExprParser):
    """Program, function and statement forms; expressions and types come from `ExprParser`."""

    def __init__(
        self,
        source: str,
        filename: str,
        closure: dict[str, object],
        line_offset: int,
        tree: ast.Module | None = None,
    ) -> None:
        super().__init__(source, filename, line_offset)
        self._tree = tree
        for name, value in closure.items():
            if isinstance(value, DynamicDim):
                self.bind_dynamic(name, value.name, None)
            elif is_static_value(value):
                self.constants[name] = value
        self._signatures: dict[str, _Signature] = {}
        self._fn = _FunctionState()

    # -- ExprParser hooks ---------------------------------------------------------------------

    def lookup_local(self, name: str) -> Var | None:
        return self._fn.names.get(name)

    def function_return_types(self, name: str) -> tuple[Type, ...] | None:
        sig = self._signatures.get(name)
        return None if sig is None else sig.return_types

    # -- module -------------------------------------------------------------------------------

    def parse(self) -> Program:
        if self._tree is not None:
            return self._module(self._tree)
        try:
            module = ast.parse(self.source, filename=self.file)
        except SyntaxError as exc:
            raise self._syntax_error(exc) from None
        except (ValueError, MemoryError) as exc:
            raise self.error(None, f"cannot parse source: {exc}") from None
        except RecursionError:
            raise self.error(None, "nesting too deep") from None
        return self._module(module)

    def _module(self, module: ast.Module) -> Program:
        classes: list[ast.ClassDef] = []
        for stmt in module.body:
            match stmt:
                case ast.Import():
                    self._check_import(stmt)
                case ast.ImportFrom(module="__future__"):
                    pass
                case ast.Expr(value=ast.Constant(value=str())):
                    pass  # a module docstring
                case ast.Assign() | ast.AnnAssign():
                    self._module_constant(stmt)
                case ast.ClassDef():
                    classes.append(stmt)
                case _:
                    raise self.error(
                        stmt,
                        "unsupported module-level statement",
                        hint="a pl source holds `import nanopto.language as pl`, constants and one @pl.program class",
                    )
        if len(classes) != 1:
            where = classes[1] if len(classes) > 1 else None
            raise self.error(where, f"expected exactly one @pl.program class, found {len(classes)}")
        return self._program(classes[0])

    def _syntax_error(self, exc: SyntaxError) -> ParserError:
        line = exc.lineno or 0
        col = max(0, (exc.offset or 1) - 1)
        if not line and "\0" in self.source:  # CPython reports a null byte without a location
            before = self.source[: self.source.index("\0")]
            line, col = before.count("\n") + 1, len(before) - (before.rfind("\n") + 1)
        if not 1 <= line <= len(self.lines):  # e.g. "unexpected EOF" one line past the end
            line, col = max(1, len(self.lines)), len(self.lines[-1]) if self.lines else 0
        message = exc.msg or "invalid syntax"
        hint = None
        if "not tuple" in message and "annotated" in message:
            message = "Type annotations cannot be used inline with tuple unpacking"
            hint = "Type annotations cannot be used inline with tuple unpacking; annotate each name separately"
        elif "nested" in message or "too many levels" in message:
            message = f"nesting too deep ({message})"
        return self.error_at(line, col, f"syntax error: {message}", hint)

    def _check_import(self, stmt: ast.Import) -> None:
        for alias in stmt.names:
            if alias.name not in _LANGUAGE_MODULES or alias.asname != "pl":
                raise self.error(
                    stmt,
                    f"unsupported import '{alias.name}'",
                    hint="the only import a pl source may hold is `import nanopto.language as pl`",
                )

    def _module_constant(self, stmt: ast.Assign | ast.AnnAssign) -> None:
        target = stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 else None
        if isinstance(stmt, ast.AnnAssign):
            target = stmt.target
        if not isinstance(target, ast.Name) or stmt.value is None:
            raise self.error(stmt, "a module-level assignment must bind one name to a value")
        value = stmt.value
        if pl_call_name(value) == "dynamic":
            assert isinstance(value, ast.Call)
            if len(value.args) != 1 or value.keywords or not isinstance(value.args[0], ast.Constant):
                raise self.error(value, 'pl.dynamic takes one string literal: N = pl.dynamic("N")')
            dim_name = value.args[0].value
            if not isinstance(dim_name, str):
                raise self.error(value, 'pl.dynamic takes one string literal: N = pl.dynamic("N")')
            self.bind_dynamic(target.id, dim_name, value)
            return
        try:
            self.constants[target.id] = static_eval(value, self.constants)
        except NotStatic as exc:
            raise self.error(
                exc.node,
                f"module-level '{target.id}' must be a compile-time constant: {exc.message}",
                hint="module constants may be numbers, strings, booleans and lists/tuples of them",
            ) from None
        self.dynamic.pop(target.id, None)

    # -- program and functions ----------------------------------------------------------------

    def _program(self, cls: ast.ClassDef) -> Program:
        if len(cls.decorator_list) != 1 or dotted_name(_decorator_target(cls.decorator_list[0])) != "pl.program":
            raise self.error(cls, f"class '{cls.name}' must be decorated with @pl.program")
        if cls.bases or cls.keywords:
            raise self.error(cls, "a @pl.program class takes no base classes")
        methods: list[ast.FunctionDef] = []
        for index, stmt in enumerate(cls.body):
            if isinstance(stmt, ast.FunctionDef):
                methods.append(stmt)
            elif isinstance(stmt, ast.Pass) or (
                index == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
            ):
                continue
            else:
                raise self.error(stmt, "a @pl.program class body may only hold @pl.function methods")
        for method in methods:
            if method.name in self._signatures:
                raise self.error(method, f"function '{method.name}' is defined twice")
            self.function_names.add(method.name)
            self._signatures[method.name] = _Signature(method.name, (), (), FunctionType.Opaque, (), method)
        for method in methods:
            self._signatures[method.name] = self._signature(method)
        functions = tuple(self._function(self._signatures[m.name]) for m in methods)
        return Program(cls.name, functions, span=self.span(cls))

    def _signature(self, fn: ast.FunctionDef) -> _Signature:
        self._fn = _FunctionState()
        func_type, attrs = self._decorator(fn)
        args = fn.args
        if args.posonlyargs or args.vararg or args.kwonlyargs or args.kwarg or args.defaults:
            raise self.error(fn, "a @pl.function takes plain positional parameters only")
        if not args.args or args.args[0].arg != "self":
            raise self.error(fn, f"method '{fn.name}' must take self as its first parameter")
        params: list[Param] = []
        for arg in args.args[1:]:
            if arg.arg in self._fn.names:
                raise self.error(arg, f"duplicate parameter '{arg.arg}'")
            self.check_name(arg.arg, arg)
            direction = ParamDirection.In
            ty: Type = UnknownType()
            if arg.annotation is not None:
                ty, direction = self.param_annotation(arg.annotation)
            if direction is ParamDirection.InOut and isinstance(ty, ScalarType):
                raise self.error(
                    arg,
                    "Scalar parameters cannot have InOut direction",
                    hint="pass the scalar as pl.Out[...] or return the new value",
                )
            var = Var(arg.arg, ty, span=self.span(arg))
            self._fn.names[arg.arg] = var
            params.append(Param(var, direction, span=self.span(arg)))
        returns = self.return_annotation(fn.returns) if fn.returns is not None else ()
        return _Signature(fn.name, tuple(params), returns, func_type, attrs, fn)

    def _decorator(self, fn: ast.FunctionDef) -> tuple[FunctionType, tuple[Keyword, ...]]:
        if len(fn.decorator_list) != 1:
            raise self.error(fn, f"method '{fn.name}' must be decorated with @pl.function (exactly once)")
        deco = fn.decorator_list[0]
        if dotted_name(_decorator_target(deco)) != "pl.function":
            raise self.error(deco, f"method '{fn.name}' must be decorated with @pl.function")
        if not isinstance(deco, ast.Call):
            return FunctionType.Opaque, ()
        if deco.args:
            raise self.error(deco, "@pl.function takes keyword arguments only")
        func_type = FunctionType.Opaque
        attrs: list[Keyword] = []
        for kw in deco.keywords:
            if kw.arg is None:
                raise self.error(kw.value, "**kwargs is not supported in @pl.function(...)")
            if kw.arg == "type":
                path = dotted_name(kw.value)
                member = path.rsplit(".", 1)[-1] if path and path.startswith("pl.FunctionType.") else None
                if member is None or member not in FunctionType.__members__:
                    raise self.error(kw.value, "type= must be a pl.FunctionType member, e.g. pl.FunctionType.Inline")
                func_type = FunctionType[member]
            else:
                attrs.append(Keyword(kw.arg, self.expr(kw.value), span=self.span(kw.value)))
        return func_type, tuple(attrs)

    def _function(self, sig: _Signature) -> Function:
        self._fn = _FunctionState(func_type=sig.func_type)
        for param in sig.params:
            self._fn.names[param.var.name] = param.var
        body_nodes = list(sig.node.body)
        if body_nodes and isinstance(body_nodes[0], ast.Expr) and isinstance(body_nodes[0].value, ast.Constant):
            body_nodes = body_nodes[1:]  # the docstring
        body = self._block(body_nodes, sig.node)
        return Function(
            sig.name,
            sig.params,
            body,
            sig.return_types,
            sig.func_type,
            sig.attrs,
            span=self.span(sig.node),
        )

    # -- statements ---------------------------------------------------------------------------

    def _block(self, stmts: list[ast.stmt], owner: ast.AST) -> SeqStmts:
        with self.nesting(owner):
            out: list[Stmt] = []
            for stmt in stmts:
                out.extend(self._stmt(stmt))
            span = self.span(stmts[0]) if stmts else self.span(owner)
            return SeqStmts(tuple(out), span=span)

    def _stmt(self, node: ast.stmt) -> list[Stmt]:
        match node:
            case ast.Assign():
                return self._assign(node)
            case ast.AnnAssign():
                return self._ann_assign(node)
            case ast.AugAssign():
                raise self.error(
                    node, "Augmented assignments such as acc += ... are not supported", hint=_AUG_HINT
                )
            case ast.Expr():
                return self._expr_stmt(node)
            case ast.Return():
                return [ReturnStmt(self._values(node.value), span=self.span(node))]
            case ast.If():
                return [self._if(node)]
            case ast.For():
                return [self._for(node)]
            case ast.While():
                return [self._while(node)]
            case ast.With():
                return [self._with(node)]
            case ast.Break() | ast.Continue():
                return [self._break_continue(node)]
            case ast.Pass():
                return []
            case _:
                raise self.error(node, f"unsupported statement ({type(node).__name__}) in a @pl.function body")

    def _values(self, node: ast.expr | None) -> tuple[Expr, ...]:
        if node is None:
            return ()
        if isinstance(node, ast.Tuple):
            return tuple(self.expr(e) for e in node.elts)
        return (self.expr(node),)

    def _bind(self, target: ast.Name, ty: Type) -> Var:
        """The Var an assignment to `target` writes: the bound one if any, else a new one."""
        self.check_name(target.id, target)
        existing = self._fn.names.get(target.id)
        if existing is not None:
            return existing
        var = Var(target.id, ty, span=self.span(target))
        self._fn.names[target.id] = var
        return var

    def _assign(self, node: ast.Assign) -> list[Stmt]:
        if len(node.targets) != 1:
            raise self.error(node, "chained assignment (a = b = ...) is not supported")
        target = node.targets[0]
        if pl_call_name(node.value) == "yield_":
            assert isinstance(node.value, ast.Call)
            return self._yield(node.value.args, node.value.keywords, target, None, node)
        if isinstance(target, ast.Name):
            value = self.expr(node.value)
            var = self._bind(target, self.type_of(value))
            return [AssignStmt(var, value, span=self.span(node))]
        if isinstance(target, (ast.Tuple, ast.List)):
            return self._unpack(target, node)
        if isinstance(target, ast.Subscript):
            return [self._subscript_write(target, node)]
        raise self.error(target, "unsupported assignment target")

    def _ann_assign(self, node: ast.AnnAssign) -> list[Stmt]:
        if isinstance(node.target, (ast.Tuple, ast.List)):
            raise self.error(
                node,
                "Type annotations cannot be used inline with tuple unpacking",
                hint="Type annotations cannot be used inline with tuple unpacking; annotate each name separately",
            )
        if not isinstance(node.target, ast.Name):
            raise self.error(node, "only a plain name can be annotated")
        if node.value is None:
            raise self.error(node, f"'{node.target.id}' is declared without a value")
        ty = self.type_annotation(node.annotation)
        if pl_call_name(node.value) == "yield_":
            assert isinstance(node.value, ast.Call)
            return self._yield(node.value.args, node.value.keywords, node.target, ty, node)
        value = self.expr(node.value)
        var = self._bind(node.target, ty)
        return [AssignStmt(var, value, annotated=True, span=self.span(node))]

    def _unpack(self, target: ast.Tuple | ast.List, node: ast.Assign) -> list[Stmt]:
        names: list[ast.Name] = []
        for elt in target.elts:
            if not isinstance(elt, ast.Name):
                raise self.error(elt, "tuple unpacking may only bind plain names")
            names.append(elt)
        value = self.expr(node.value)
        ty = self.type_of(value)
        if not isinstance(ty, TupleType):
            ty = TupleType(tuple(UnknownType() for _ in names))
        tmp = Var(f"ret__tmp_v{self._fn.tmp_counter}", ty, span=self.span(node))
        self._fn.tmp_counter += 1
        out: list[Stmt] = [AssignStmt(tmp, value, span=self.span(node))]
        for index, name in enumerate(names):
            elt_ty = ty.types[index] if index < len(ty.types) else UnknownType()
            var = self._bind(name, elt_ty)
            out.append(AssignStmt(var, TupleGetItemExpr(tmp, index, span=self.span(name)), span=self.span(name)))
        return out

    def _subscript_write(self, target: ast.Subscript, node: ast.Assign) -> Stmt:
        if not isinstance(target.value, ast.Name) or target.value.id not in self._fn.names:
            raise self.error(target.value, "a subscript assignment must write into a bound variable")
        var = self._fn.names[target.value.id]
        value = self.expr(node.value)
        index_nodes = target.slice.elts if isinstance(target.slice, ast.Tuple) else [target.slice]
        span = self.span(node)
        if isinstance(var.type, ArrayType):
            if len(index_nodes) != 1 or isinstance(index_nodes[0], ast.Slice):
                raise self.error(target, "an array element write takes one index: arr[i] = v")
            index = self.expr(index_nodes[0])
            call = Call("array.update_element", (var, index, value), span=span)
            return AssignStmt(var, call, span=span)
        offsets: list[Expr] = []
        for index_node in index_nodes:
            index = self.index(index_node)
            if isinstance(index, SliceExpr):
                offsets.append(index.start if index.start is not None else ConstInt(0, span=self.span(index_node)))
            else:
                offsets.append(index)
        offset_list = MakeTuple(tuple(offsets), is_list=True, span=self.span(target))
        return AssignStmt(var, Call("tensor.assemble", (var, value, offset_list), span=span), span=span)

    # -- expression statements ----------------------------------------------------------------

    def _expr_stmt(self, node: ast.Expr) -> list[Stmt]:
        value = node.value
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            return []  # a string statement is a comment
        if isinstance(value, ast.Yield):
            args = [] if value.value is None else list(_tuple_elements(value.value))
            return self._yield(args, [], None, None, node)
        special = pl_call_name(value)
        if special is not None:
            assert isinstance(value, ast.Call)
            if special == "yield_":
                return self._yield(value.args, value.keywords, None, None, node)
            if special == "static_print":
                self._static_print(value)
                return []
            if special == "static_assert":
                self._static_assert(value)
                return []
            if special == "dump_tag":
                return [self._dump_tag(value, node)]
            if special == "cond":
                raise self.error(node, "pl.cond(...) must be the first statement of a pl.while_ body")
        return [EvalStmt(self.expr(value), span=self.span(node))]

    def _static_print(self, call: ast.Call) -> None:
        if not call.args or call.keywords:
            raise self.error(call, "pl.static_print requires at least one argument (and no keywords)")
        pieces: list[str] = []
        for arg in call.args:
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                pieces.append(arg.value)
            elif isinstance(arg, ast.JoinedStr):
                text = ""
                for part in arg.values:
                    if isinstance(part, ast.Constant):
                        text += str(part.value)
                    elif isinstance(part, ast.FormattedValue):
                        text += self.describe(part.value)
                pieces.append(text)
            else:
                pieces.append(self.describe(arg))
        line = call.lineno + self.line_offset
        print(f"static_print [{self.file}:{line}]: {' '.join(pieces)}")

    def _static_assert(self, call: ast.Call) -> None:
        if not 1 <= len(call.args) <= 2:
            raise self.error(call, "pl.static_assert takes a condition and an optional message")
        message_node: ast.expr | None = call.args[1] if len(call.args) == 2 else None
        for kw in call.keywords:
            if kw.arg != "msg" or message_node is not None:
                raise self.error(call, "pl.static_assert takes a condition and an optional msg=")
            message_node = kw.value
        message = ""
        if message_node is not None:
            if not (isinstance(message_node, ast.Constant) and isinstance(message_node.value, str)):
                raise self.error(message_node, "the pl.static_assert message must be a string literal")
            message = message_node.value
        try:
            ok = static_eval(call.args[0], self.constants)
        except NotStatic as exc:
            raise self.error(
                exc.node, f"pl.static_assert condition is not a compile-time constant: {exc.message}"
            ) from None
        if not ok:
            raise self.error(call, f"static_assert failed: {message}" if message else "static_assert failed")

    def _dump_tag(self, call: ast.Call, node: ast.Expr) -> Stmt:
        if self._fn.func_type not in _DUMP_TAG_FUNCTIONS:
            raise self.error(
                node,
                "pl.dump_tag is only valid in an Orchestration or Inline function",
                hint="move the dump_tag into the orchestration function (or an Inline helper it calls)",
            )
        if len(call.args) != 1 or call.keywords or not isinstance(call.args[0], ast.Name):
            raise self.error(call, "pl.dump_tag takes exactly one variable name", hint="write pl.dump_tag(t)")
        var = self.expr(call.args[0])
        return EvalStmt(Call("dump_tag", (var,), span=self.span(call)), span=self.span(node))

    # -- yield --------------------------------------------------------------------------------

    def _yield(
        self,
        args: list[ast.expr],
        keywords: list[ast.keyword],
        target: ast.expr | None,
        annotation: Type | None,
        node: ast.stmt,
    ) -> list[Stmt]:
        if keywords:
            raise self.error(node, "pl.yield_ takes positional values only")
        if not self._fn.yields:
            raise self.error(node, "pl.yield_ is only valid inside a loop or if body")
        values = tuple(self.expr(a) for a in args)
        names: tuple[ast.Name, ...] | None = None
        if isinstance(target, ast.Name):
            names = (target,)
        elif isinstance(target, (ast.Tuple, ast.List)):
            if not all(isinstance(e, ast.Name) for e in target.elts):
                raise self.error(target, "pl.yield_ results may only bind plain names")
            names = tuple(e for e in target.elts if isinstance(e, ast.Name))
        elif target is not None:
            raise self.error(target, "pl.yield_ results may only bind plain names")
        ctx = self._fn.yields[-1]
        if names is None and ctx.carried and ctx.kind in ("for", "while_"):
            loop = "pl.while_" if ctx.kind == "while_" else "a loop"
            raise self.error(
                node,
                f"{loop} with non-empty init_values requires assignment-form pl.yield_",
                hint="bind the loop results: x_next = pl.yield_(...)",
            )
        if names is not None:
            for name in names:
                self.check_name(name.id, name)
            if len(names) != len(values):
                raise self.error(node, f"pl.yield_ yields {len(values)} value(s) into {len(names)} name(s)")
        if ctx.carried and len(values) != ctx.carried:
            raise self.error(node, f"pl.yield_ yields {len(values)} value(s) but the loop carries {ctx.carried}")
        key = None if names is None else tuple(n.id for n in names)
        if ctx.seen and key != ctx.names:
            raise self.error(node, "every pl.yield_ of one body must assign the same variables")
        if not ctx.seen:
            ctx.seen = True
            ctx.names = key
            ctx.value_types = tuple(self.type_of(v) for v in values)
            ctx.annotation = annotation
            ctx.node = node
        return [YieldStmt(values, span=self.span(node))]

    def _return_vars(self, ctx: _YieldContext, iter_args: tuple[IterArg, ...]) -> tuple[Var, ...]:
        if not ctx.names:
            return ()
        out: list[Var] = []
        for index, name in enumerate(ctx.names):
            existing = self._fn.names.get(name)
            if existing is not None and existing.id not in self._fn.header_ids:
                out.append(existing)
                continue
            ty: Type
            if ctx.annotation is not None and len(ctx.names) == 1:
                ty = ctx.annotation
            elif index < len(iter_args):
                ty = iter_args[index].type
            elif index < len(ctx.value_types):
                ty = ctx.value_types[index]
            else:
                ty = UnknownType()
            var = Var(name, ty, span=self.span(ctx.node) if ctx.node is not None else None)
            self._fn.names[name] = var
            out.append(var)
        return tuple(out)

    # -- control flow -------------------------------------------------------------------------

    def _if(self, node: ast.If) -> IfStmt:
        cond = self.expr(node.test)
        then_ctx = _YieldContext("if")
        self._fn.yields.append(then_ctx)
        then_body = self._block(node.body, node)
        self._fn.yields.pop()
        else_body: SeqStmts | None = None
        else_ctx = _YieldContext("if")
        if node.orelse:
            self._fn.yields.append(else_ctx)
            else_body = self._block(node.orelse, node.orelse[0])
            self._fn.yields.pop()
        if then_ctx.names or else_ctx.names:
            if else_body is None:
                raise self.error(
                    node, "an if whose branch yields needs an else branch yielding the same variables"
                )
            if then_ctx.names != else_ctx.names:
                raise self.error(
                    else_ctx.node or node,
                    "Both branches must yield the same variables",
                    hint=f"yield into {', '.join(then_ctx.names or ())} in both branches",
                )
        return_vars = self._return_vars(then_ctx, ())
        return IfStmt(cond, then_body, else_body, return_vars, span=self.span(node))

    def _header_scope_enter(self, names: list[tuple[str, Var]]) -> dict[str, Var | None]:
        saved: dict[str, Var | None] = {}
        for name, var in names:
            if name in saved:
                line, col = (var.span.line - self.line_offset, var.span.col) if var.span else (1, 0)
                raise self.error_at(line, col, f"'{name}' is bound twice in one loop header")
            saved[name] = self._fn.names.get(name)
            self._fn.names[name] = var
            self._fn.header_ids.add(var.id)
        return saved

    def _header_scope_exit(self, saved: dict[str, Var | None], names: list[tuple[str, Var]]) -> None:
        for _, var in names:
            self._fn.header_ids.discard(var.id)
        for name, previous in saved.items():
            if previous is None:
                self._fn.names.pop(name, None)
            else:
                self._fn.names[name] = previous

    def _for(self, node: ast.For) -> Stmt:
        if node.orelse:
            raise self.error(node, "for ... else is not supported")
        kind = pl_call_name(node.iter)
        if not isinstance(node.iter, ast.Call) or kind is None:
            raise self.error(
                node.iter,
                "a for loop must iterate over pl.range, pl.parallel, pl.unroll, pl.while_, pl.spmd or pl.split_aiv",
                hint="write `for i in pl.range(n):`",
            )
        if kind in _RANGE_LOOPS:
            return self._range_loop(node, node.iter, _RANGE_LOOPS[kind])
        if kind == "while_":
            return self._while_loop(node, node.iter)
        if kind in _FOR_SCOPES:
            return self._for_scope(node, node.iter, kind)
        raise self.error(node.iter, f"pl.{kind}(...) cannot be iterated by a for loop")

    def _init_values(self, call: ast.Call) -> tuple[list[ast.keyword], tuple[Expr, ...]]:
        rest: list[ast.keyword] = []
        inits: tuple[Expr, ...] = ()
        for kw in call.keywords:
            if kw.arg == "init_values":
                if not isinstance(kw.value, (ast.Tuple, ast.List)):
                    raise self.error(kw.value, "init_values must be a tuple: init_values=(x,)")
                inits = tuple(self.expr(e) for e in kw.value.elts)
            else:
                rest.append(kw)
        return rest, inits

    def _header_names(self, target: ast.expr) -> list[ast.Name]:
        if not isinstance(target, (ast.Tuple, ast.List)) or not all(isinstance(e, ast.Name) for e in target.elts):
            raise self.error(target, "loop-carried values are declared as a tuple of names: (a, b)")
        return [e for e in target.elts if isinstance(e, ast.Name)]

    def _iter_args(self, names: list[ast.Name], inits: tuple[Expr, ...], node: ast.AST) -> tuple[IterArg, ...]:
        if len(names) != len(inits):
            raise self.error(node, f"the loop header declares {len(names)} carried value(s) but init_values has {len(inits)}")
        out: list[IterArg] = []
        for name, init in zip(names, inits, strict=True):
            self.check_name(name.id, name)
            out.append(IterArg(name.id, self.type_of(init), init_value=init, span=self.span(name)))
        return tuple(out)

    def _range_loop(self, node: ast.For, call: ast.Call, kind: ForKind) -> ForStmt:
        rest, inits = self._init_values(call)
        if rest:
            raise self.error(rest[0].value, f"pl.{kind.value} does not take the keyword '{rest[0].arg}'")
        if not 1 <= len(call.args) <= 3 or any(isinstance(a, ast.Starred) for a in call.args):
            raise self.error(call, f"pl.{kind.value} takes 1 to 3 positional arguments: (stop), (start, stop) or (start, stop, step)")
        bounds = [self.expr(a) for a in call.args]
        span = self.span(call)
        start: Expr
        stop: Expr
        step: Expr
        if len(bounds) == 1:
            start, stop, step = ConstInt(0, span=span), bounds[0], ConstInt(1, span=span)
        elif len(bounds) == 2:
            start, stop, step = bounds[0], bounds[1], ConstInt(1, span=span)
        else:
            start, stop, step = bounds
        target = node.target
        carried: list[ast.Name] = []
        if isinstance(target, ast.Tuple) and len(target.elts) == 2 and isinstance(target.elts[0], ast.Name):
            carried = self._header_names(target.elts[1])
            target = target.elts[0]
        if not isinstance(target, ast.Name):
            raise self.error(node.target, "the loop header must be `i` or `i, (a, b)`")
        if inits and not carried:
            raise self.error(node.target, "init_values needs a header that names the carried values: for i, (a,) in ...")
        self.check_name(target.id, target)
        loop_var = Var(target.id, ScalarType(DataType.INDEX), span=self.span(target))
        iter_args = self._iter_args(carried, inits, node.target)
        _, return_vars, body = self._loop_body(node, kind.value, "for", [(target.id, loop_var)], iter_args, node.body)
        return ForStmt(loop_var, start, stop, step, body, iter_args, return_vars, kind, span=self.span(node))

    def _loop_body(
        self,
        node: ast.stmt,
        loop_kind: str,
        yield_kind: str,
        header: list[tuple[str, Var]],
        iter_args: tuple[IterArg, ...],
        body_nodes: list[ast.stmt],
        cond_node: ast.expr | None = None,
    ) -> tuple[Expr | None, tuple[Var, ...], SeqStmts]:
        """Parse a loop body with its header names in scope; also the pl.while_ condition."""
        names = header + [(a.name, a) for a in iter_args]
        cond: Expr | None = None
        saved = self._header_scope_enter_at(node, names)
        ctx = _YieldContext(yield_kind, carried=len(iter_args))
        self._fn.loops.append(loop_kind)
        self._fn.yields.append(ctx)
        try:
            if cond_node is not None:
                cond = self.expr(cond_node)
            body = self._block(body_nodes, node)
        finally:
            self._fn.yields.pop()
            self._fn.loops.pop()
        self._header_scope_exit(saved, names)
        return cond, self._return_vars(ctx, iter_args), body

    def _header_scope_enter_at(self, node: ast.AST, names: list[tuple[str, Var]]) -> dict[str, Var | None]:
        try:
            return self._header_scope_enter(names)
        except ParserError as exc:
            raise self.error(node, exc.message) from None

    def _while_loop(self, node: ast.For, call: ast.Call) -> WhileStmt:
        rest, inits = self._init_values(call)
        if call.args or rest:
            raise self.error(call, "pl.while_ takes only init_values=(...)")
        names = self._header_names(node.target)
        iter_args = self._iter_args(names, inits, node.target)
        body_nodes = list(node.body)
        first = body_nodes[0] if body_nodes else None
        if not (isinstance(first, ast.Expr) and pl_call_name(first.value) == "cond"):
            raise self.error(
                first or node,
                "the first statement of a pl.while_ body must be pl.cond(<condition>)",
                hint="start the body with pl.cond(x < n)",
            )
        cond_call = first.value
        assert isinstance(cond_call, ast.Call)
        if len(cond_call.args) != 1 or cond_call.keywords:
            raise self.error(cond_call, "pl.cond takes exactly one condition")
        cond, return_vars, body = self._loop_body(
            node, "while", "while_", [], iter_args, body_nodes[1:], cond_node=cond_call.args[0]
        )
        assert cond is not None
        return WhileStmt(cond, body, iter_args, return_vars, natural=False, span=self.span(node))

    def _while(self, node: ast.While) -> WhileStmt:
        if node.orelse:
            raise self.error(node, "while ... else is not supported")
        cond = self.expr(node.test)
        _, return_vars, body = self._loop_body(node, "while", "while", [], (), node.body)
        return WhileStmt(cond, body, (), return_vars, natural=True, span=self.span(node))

    def _break_continue(self, node: ast.Break | ast.Continue) -> Stmt:
        word = "break" if isinstance(node, ast.Break) else "continue"
        loops = self._fn.loops
        if not loops:
            raise self.error(node, f"'{word}' outside a loop")
        innermost = loops[-1]
        if innermost in ("parallel", "unroll"):
            raise self.error(
                node,
                f"'{word}' is not supported when the innermost loop is pl.{innermost}()",
                hint="break/continue need a sequential innermost loop (pl.range or while)",
            )
        if innermost in _FOR_SCOPES:
            raise self.error(node, f"'{word}' cannot leave a pl.{innermost} body")
        return BreakStmt(span=self.span(node)) if word == "break" else ContinueStmt(span=self.span(node))

    # -- scopes -------------------------------------------------------------------------------

    def _scope_arguments(self, call: ast.Call) -> tuple[tuple[Expr, ...], tuple[Keyword, ...], tuple[Var, ...]]:
        args = tuple(self.expr(a) for a in self.positional(call))
        kwargs: list[Keyword] = []
        dumps: tuple[Var, ...] = ()
        for kw in call.keywords:
            if kw.arg is None:
                raise self.error(kw.value, "**kwargs is not supported")
            if kw.arg == "dumps":
                dumps = self.dumps(kw.value)
            else:
                kwargs.append(Keyword(kw.arg, self.expr(kw.value), span=self.span(kw.value)))
        return args, tuple(kwargs), dumps

    def _for_scope(self, node: ast.For, call: ast.Call, constructor: str) -> ScopeStmt:
        if not isinstance(node.target, ast.Name):
            raise self.error(node.target, f"for ... in pl.{constructor}(...) binds one name")
        args, kwargs, dumps = self._scope_arguments(call)
        self.check_name(node.target.id, node.target)
        var = Var(node.target.id, ScalarType(DataType.INDEX), span=self.span(node.target))
        header = [(node.target.id, var)]
        saved = self._header_scope_enter_at(node, header)
        self._fn.loops.append(constructor)
        try:
            body = self._block(node.body, node)
        finally:
            self._fn.loops.pop()
        self._header_scope_exit(saved, header)
        return ScopeStmt(constructor, body, args, kwargs, var, True, dumps, span=self.span(node))

    def _with(self, node: ast.With) -> ScopeStmt:
        if len(node.items) != 1:
            raise self.error(node, "a with statement takes exactly one pl scope")
        item = node.items[0]
        constructor = pl_call_name(item.context_expr)
        if constructor not in _WITH_SCOPES or not isinstance(item.context_expr, ast.Call):
            raise self.error(
                item.context_expr,
                "a with statement must open a pl scope: "
                + ", ".join(f"pl.{name}(...)" for name in _WITH_SCOPES),
            )
        assert constructor is not None
        args, kwargs, dumps = self._scope_arguments(item.context_expr)
        var: Var | None = None
        if item.optional_vars is not None:
            if not isinstance(item.optional_vars, ast.Name):
                raise self.error(item.optional_vars, "`with ... as` binds one name")
            var = self._bind(item.optional_vars, ScalarType(DataType.TASK_ID))
        body = self._block(node.body, node)
        if constructor == "spmd":
            self._check_single_dispatch(body)
        return ScopeStmt(constructor, body, args, kwargs, var, False, dumps, span=self.span(node))

    def _check_single_dispatch(self, body: SeqStmts) -> None:
        seen = 0
        for sub in walk(body):
            if isinstance(sub, Submit) or (isinstance(sub, Call) and sub.function):
                seen += 1
                if seen > 1:
                    span = sub.span
                    raise self.error_at(
                        span.line - self.line_offset if span else 0,
                        span.col if span else 0,
                        "A dispatch body may launch one kernel",
                        "launch each kernel from its own pl.spmd scope",
                    )


def _decorator_target(node: ast.expr) -> ast.expr:
    return node.func if isinstance(node, ast.Call) else node


def _tuple_elements(node: ast.expr) -> list[ast.expr]:
    return list(node.elts) if isinstance(node, ast.Tuple) else [node]
