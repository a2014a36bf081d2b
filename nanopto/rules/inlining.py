"""The inlining rulesets: splice, project, discard, writeback, and retire before extraction.

docs/specification.md ("Steps at one call site", "Call-site forms", "Discarding a return value")
states every rule here. A call site is `At(site, template, pre)`: Python has already decided, per
site, what each formal stands for (an `Arg` fact per formal) and which arguments are bound to fresh
locals first (`pre`); the rules splice, substitute, rename and wire.

"Nothing" produced by a rule is `Skip()`, never `SNil()`: template bodies share the `SNil` e-class,
and a union into it would let substitution run into caller statements without end.
"""

from __future__ import annotations

from egglog import String, delete, eq, i64, ne, rewrite, rule, subsume, union, var

from nanopto.rules.patterns import sort_class
from nanopto.rules.ruleset import Rule, Ruleset, declare
from nanopto.terms import language as T
from nanopto.terms.encoding import ir_constructors
from nanopto.terms.inlining import INLINE_TERMS

site, template = var("s", i64), var("tpl", String)
pre, body, x, d = var("pre", T.SL), var("body", T.SL), var("x", T.SL), var("d", T.SL)
rets, more, rest = var("rets", T.ExL), var("more", T.ExL), var("rest", T.ExL)
lhs, r, r0, r1 = var("lhs", T.Ex), var("r", T.Ex), var("r0", T.Ex), var("r1", T.Ex)
annotated, span = var("ann", String), var("sp", String)
call_site = T.At(site, template, pre)
copied = T.SubSL(body, site)


def _splice(name: str, doc: str, site_stmt: T.St, facts: tuple[object, ...], result: T.SL) -> Rule:
    """Splice at a statement `site_stmt` holding the call site: `result` replaces it, and the
    unspliced statement is retired so it can never win on size."""
    st = var("st", T.St)
    return declare(
        name,
        rule(
            eq(st).to(site_stmt),
            eq(x).to(T.SOne(st)),
            eq(body).to(T.Body(template)),
            eq(rets).to(T.Ret(template)),
            *facts,  # type: ignore[arg-type]
        ).then(union(x).with_(result), subsume(T.SOne(site_stmt))),
        doc,
    )


def _splice_rules() -> tuple[Rule, ...]:
    assign = T.AssignStmt(lhs, call_site, annotated, span)
    return (
        _splice(
            "splice-assign",
            "lhs = f(args), f returning one value r: Pre(site); Sub(body(f)); lhs = Sub(r)",
            assign,
            (eq(rets).to(T.ExCons(r, T.ExNil())),),
            T.SCat3(pre, copied, T.SOne(T.WireAssign(lhs, T.SubEx(r, site), annotated, span))),
        ),
        declare(
            "splice-assign-tuple",
            rule(
                eq(var("st", T.St)).to(assign),
                eq(x).to(T.SOne(var("st", T.St))),
                eq(body).to(T.Body(template)),
                eq(rets).to(T.Ret(template)),
                eq(rets).to(T.ExCons(r0, T.ExCons(r1, more))),
                eq(T.TupleForm(site)).to(String("project")),
            ).then(
                union(x).with_(T.SCat(pre, copied)),
                union(lhs).with_(T.MakeTuple(T.SubExL(rets, site), "False")),
                subsume(T.SOne(assign)),
            ),
            "tmp = f(args), f returning r0, r1, ... and tmp used only as tmp[i]: Pre(site); Sub(body(f)); "
            "tmp is (Sub(r0), Sub(r1), ...) with no binding",
        ),
        _splice(
            "splice-assign-tuple-bound",
            "tmp = f(args), f returning r0, r1, ... and tmp also used whole: Pre(site); Sub(body(f)); "
            "tmp = (Sub(r0), Sub(r1), ...)",
            assign,
            (eq(rets).to(T.ExCons(r0, T.ExCons(r1, more))), eq(T.TupleForm(site)).to(String("bind"))),
            T.SCat3(
                pre, copied, T.SOne(T.WireAssign(lhs, T.MakeTuple(T.SubExL(rets, site), "False"), annotated, span))
            ),
        ),
        _splice(
            "splice-return",
            "return f(args): Pre(site); Sub(body(f)); return Sub(r0), ...",
            T.ReturnStmt(T.ExCons(call_site, T.ExNil()), span),
            (),
            T.SCat3(pre, copied, T.SOne(T.ReturnStmt(T.SubExL(rets, site), span))),
        ),
        _splice(
            "splice-discard",
            "f(args) with its value discarded: Pre(site); Sub(body(f)); Discard(Sub(r0), ...)",
            T.EvalStmt(call_site, span),
            (),
            T.SCat3(pre, copied, T.Discard(T.SubExL(rets, site), span)),
        ),
    )


SPLICE = Ruleset(
    "splice",
    "Unfold each Inline call site into the argument bindings, the substituted body and the wired result.",
    _splice_rules(),
)


def _retire_site_statements() -> tuple[Rule, ...]:
    """Once its `At` term is deleted, the statement that held a spliced call site has no term;
    deleting it too spares extraction a row that could never be chosen, at every site."""
    copied_body = eq(var("c", T.SL)).to(T.SubSL(T.Body(template), site))
    returned = T.ExCons(call_site, T.ExNil())
    return (
        declare(
            "retire-spliced-assign",
            rule(eq(var("st", T.St)).to(T.AssignStmt(lhs, call_site, annotated, span)), copied_body).then(
                delete(T.AssignStmt(lhs, call_site, annotated, span))
            ),
            "lhs = f(args) whose body was copied: the statement, which holds only the retired call site",
        ),
        declare(
            "retire-spliced-eval",
            rule(eq(var("st", T.St)).to(T.EvalStmt(call_site, span)), copied_body).then(
                delete(T.EvalStmt(call_site, span))
            ),
            "f(args) whose body was copied: the statement, which holds only the retired call site",
        ),
        declare(
            "retire-spliced-return",
            rule(eq(var("st", T.St)).to(T.ReturnStmt(returned, span)), copied_body).then(
                delete(T.ReturnStmt(returned, span)), delete(returned)
            ),
            "return f(args) whose body was copied: the statement and its list, which hold only the retired call site",
        ),
    )


RETIRE = Ruleset(
    "retire",
    "Run once after saturation, before extraction: delete what extraction could never choose but would cost.",
    (
        declare(
            "retire-spliced-call",
            rule(eq(var("a", T.Ex)).to(call_site), eq(var("c", T.SL)).to(T.SubSL(T.Body(template), site))).then(
                delete(call_site)
            ),
            "a call site whose body was copied: its At term, held only by the site statement the splice retired",
        ),
        *_retire_site_statements(),
    ),
)
"""Extraction costs every extractable row on each of its passes; a spliced site's `At` term (and,
through it, the retired statement) is one of them at every site (deleting them took a sixth of
extraction's time at flat-10000: 1,199 -> 981 ms in one interleaved run). The marker of a splice is the copy of the template's body it made for the site."""

_g, _e, _i = var("g", T.Ex), var("e", T.Ex), var("i", i64)
_xs, _item, _flag = var("xs", T.ExL), var("x", T.Ex), var("l", String)

PROJECT = Ruleset(
    "project",
    "Tuple projection: a component of a tuple of cloned return values is that value.",
    (
        declare(
            "project-tuple-item",
            rule(eq(_g).to(T.TupleGetItemExpr(T.MakeTuple(_xs, _flag), _i))).then(
                union(_g).with_(T.NthEx(_xs, _i)),
                T.Projected(_g),
                subsume(T.TupleGetItemExpr(T.MakeTuple(_xs, _flag), _i)),
            ),
            "a component of a tuple of cloned return values is that value",
        ),
        declare("nth-first", rewrite(T.NthEx(T.ExCons(_item, rest), 0)).to(_item)),
        declare("nth-rest", rewrite(T.NthEx(T.ExCons(_item, rest), _i)).to(T.NthEx(rest, _i - 1), _i > 0)),
    ),
)

_v = var("v", T.Ex)

WRITEBACK = Ruleset(
    "writeback",
    "Wire a cloned return value to its receiver, omitting the identity write-back `x = x`.",
    (
        declare(
            "writeback-identity",
            rewrite(T.SOne(T.WireAssign(_v, _v, annotated, span))).to(T.Skip()),
            "lhs = v where v is the very same Var as lhs: nothing",
        ),
        declare(
            "wire-result",
            rewrite(T.WireAssign(_v, _e, annotated, span)).to(T.AssignStmt(_v, _e, annotated, span), ne(_v).to(_e)),
            "lhs = v where v is not lhs: an assignment",
        ),
        declare(
            "writeback-tuple-identity",
            rule(
                eq(x).to(T.SOne(T.AssignStmt(_v, _v, annotated, span))), T.Projected(_v), T.ProjectedRead(x)
            ).then(union(x).with_(T.Skip()), subsume(T.SOne(T.AssignStmt(_v, _v, annotated, span)))),
            "q = tmp[i] where tmp[i] projects to q itself (the caller's own statement): nothing",
        ),
    ),
)


def _discard_rules() -> tuple[Rule, ...]:
    rules = [declare("discard-nothing", rewrite(T.Discard(T.ExNil(), span)).to(T.Skip()))]
    for c in (*ir_constructors(), *INLINE_TERMS):
        if c.sort != "Ex" or c.name in ("Keyword", "NoEx", "At"):
            continue
        pattern = getattr(T, c.name)(*[var(f"a{i}", sort_class(a)) for i, a in enumerate(c.args)])
        matched = eq(d).to(T.Discard(T.ExCons(_item, rest), span))
        if c.name in ("Call", "Submit"):
            rules.append(
                declare(
                    f"discard-keep-{c.name}",
                    rule(matched, eq(_item).to(pattern)).then(
                        union(d).with_(T.SCat(T.SOne(T.EvalStmt(_item, span)), T.Discard(rest, span)))
                    ),
                    f"a discarded {c.name} is still evaluated",
                )
            )
        else:
            rules.append(
                declare(
                    f"discard-drop-{c.name}",
                    rule(matched, eq(_item).to(pattern)).then(union(d).with_(T.Discard(rest, span))),
                    f"evaluating a discarded {c.name} has no effect",
                )
            )
    return tuple(rules)


DISCARD = Ruleset(
    "discard",
    "A discarded return value: a Call or Submit is re-emitted as an EvalStmt, anything else is dropped.",
    _discard_rules(),
)
