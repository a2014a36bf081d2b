"""The inlining rulesets: splice, project, discard, writeback.

docs/specification.md ("Steps at one call site", "Call-site forms", "Discarding a return value")
states every rule here; each rule's comment is its before/after shape. A call site is
`(At site template pre)`: Python has already decided, per site, what each formal stands for
(an `Arg` fact per formal) and which arguments are bound to fresh locals first (`pre`); the rules
splice, substitute, rename and wire.

"Nothing" produced by a rule is `(Skip)`, never `(SNil)`: template bodies share the `SNil` e-class,
and a union into it would let substitution run into caller statements without end.
"""

from __future__ import annotations

from nanopto.rules.ruleset import Rule, Ruleset
from nanopto.terms.encoding import ir_constructors
from nanopto.terms.inlining import INLINE_TERMS

_CALL = "(At s tpl pre)"


def _splice(name: str, before: str, after: str, site_stmt: str, extra: str, result: str) -> Rule:
    return Rule(
        name,
        before,
        after,
        f"(rule ((= st {site_stmt}) (= x (SOne st)) (= body (Body tpl)) (= rets (Ret tpl)){extra})"
        f" ((union x {result.replace('BODY', '(SubSL body s)')}) (subsume (SOne {site_stmt}))))",
    )


def _splice_rules() -> tuple[Rule, ...]:
    copy = "Sub(body(f))"
    return (
        _splice(
            "splice-assign",
            "lhs = f(args)                       (f returns one value r)",
            f"Pre(site); {copy}; lhs = Sub(r)",
            f"(AssignStmt lhs {_CALL} ann sp)",
            " (= rets (ExCons r (ExNil)))",
            "(SCat3 pre BODY (SOne (WireAssign lhs (SubEx r s) ann sp)))",
        ),
        _splice(
            "splice-assign-tuple",
            "tmp = f(args)                       (f returns r0, r1, ...; uses are tmp[i])",
            f"Pre(site); {copy}; tmp == (Sub(r0), Sub(r1), ...)   -- no MakeTuple binding",
            f"(AssignStmt lhs {_CALL} ann sp)",
            ' (= rets (ExCons r0 (ExCons r1 more))) (= (TupleForm s) "project")',
            "(SCat pre BODY)) (union lhs (MakeTuple (SubExL rets s) \"False\")",
        ),
        _splice(
            "splice-assign-tuple-bound",
            "tmp = f(args)                       (f returns r0, r1, ...; tmp is also used whole)",
            f"Pre(site); {copy}; tmp = (Sub(r0), Sub(r1), ...)",
            f"(AssignStmt lhs {_CALL} ann sp)",
            ' (= rets (ExCons r0 (ExCons r1 more))) (= (TupleForm s) "bind")',
            "(SCat3 pre BODY (SOne (WireAssign lhs (MakeTuple (SubExL rets s) \"False\") ann sp)))",
        ),
        _splice(
            "splice-return",
            "return f(args)",
            f"Pre(site); {copy}; return Sub(r0), ...",
            f"(ReturnStmt (ExCons {_CALL} (ExNil)) sp)",
            "",
            "(SCat3 pre BODY (SOne (ReturnStmt (SubExL rets s) sp)))",
        ),
        _splice(
            "splice-discard",
            "f(args)                             (the value is discarded)",
            f"Pre(site); {copy}; Discard(Sub(r0), ...)",
            f"(EvalStmt {_CALL} sp)",
            "",
            "(SCat3 pre BODY (Discard (SubExL rets s) sp))",
        ),
    )


SPLICE = Ruleset(
    "splice",
    "Unfold each Inline call site into the argument bindings, the substituted body and the wired result.",
    _splice_rules(),
)

PROJECT = Ruleset(
    "project",
    "Tuple projection: a component of a tuple of cloned return values is that value.",
    (
        Rule(
            "project-tuple-item",
            "TupleGetItemExpr((x0, x1, ...), i)",
            "x_i",
            "(rule ((= g (TupleGetItemExpr (MakeTuple xs l) i)))"
            " ((union g (NthEx xs i)) (Projected g) (subsume (TupleGetItemExpr (MakeTuple xs l) i))))",
        ),
        Rule("nth-first", "Nth((x, ...), 0)", "x", "(rule ((= e (NthEx (ExCons x rest) 0))) ((union e x)))"),
        Rule(
            "nth-rest",
            "Nth((x, rest...), i)   i > 0",
            "Nth(rest, i - 1)",
            "(rule ((= e (NthEx (ExCons x rest) i)) (> i 0)) ((union e (NthEx rest (- i 1)))))",
        ),
    ),
)

WRITEBACK = Ruleset(
    "writeback",
    "Wire a cloned return value to its receiver, omitting the identity write-back `x = x`.",
    (
        Rule(
            "writeback-identity",
            "lhs = v      where v is the very same Var as lhs",
            "(nothing)",
            "(rule ((= x (SOne (WireAssign v v ann sp)))) ((union x (Skip))))",
        ),
        Rule(
            "wire-result",
            "lhs = v      where v is not lhs",
            "AssignStmt(lhs, v)",
            "(rule ((= x (SOne (WireAssign v e ann sp))) (!= v e)) ((union x (SOne (AssignStmt v e ann sp)))))",
        ),
        Rule(
            "writeback-tuple-identity",
            "q = tmp[i]   where tmp[i] projects to q itself (the caller's own statement)",
            "(nothing)",
            "(rule ((= x (SOne (AssignStmt v v ann sp))) (Projected v) (ProjectedRead x))"
            " ((union x (Skip)) (subsume (SOne (AssignStmt v v ann sp)))))",
        ),
    ),
)


def _discard_rules() -> tuple[Rule, ...]:
    rules = [Rule("discard-nothing", "Discard(())", "(nothing)", "(rewrite (Discard (ExNil) sp) (Skip))")]
    for c in (*ir_constructors(), *INLINE_TERMS):
        if c.sort != "Ex" or c.name in ("Keyword", "NoEx", "At"):
            continue
        pattern = f"({c.name}{''.join(f' a{i}' for i in range(len(c.args)))})"
        if c.name in ("Call", "Submit"):
            rules.append(
                Rule(
                    f"discard-keep-{c.name}",
                    f"Discard(({c.name}(...), rest...))",
                    f"EvalStmt({c.name}(...)); Discard(rest)",
                    f"(rule ((= d (Discard (ExCons x rest) sp)) (= x {pattern}))"
                    " ((union d (SCat (SOne (EvalStmt x sp)) (Discard rest sp)))))",
                )
            )
        else:
            rules.append(
                Rule(
                    f"discard-drop-{c.name}",
                    f"Discard(({c.name}(...), rest...))",
                    "Discard(rest)   -- evaluating it has no effect",
                    f"(rule ((= d (Discard (ExCons x rest) sp)) (= x {pattern})) ((union d (Discard rest sp))))",
                )
            )
    return tuple(rules)


DISCARD = Ruleset(
    "discard",
    "A discarded return value: a Call or Submit is re-emitted as an EvalStmt, anything else is dropped.",
    _discard_rules(),
)
