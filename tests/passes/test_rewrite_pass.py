"""User rewrite rules run as a pass: `passes.rewrite(ruleset, name=...)` and `--rules FILE.py`."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import egglog as egg
import pytest
from conftest import run_cli
from egglog import String

from nanopto import ir, passes
from nanopto.egraph import SaturationLimitError
from nanopto.passes import PassManager
from nanopto.passes.registry import PassRegistry
from nanopto.passes.rewrite import rewrite_program
from nanopto.rules import Rule, Ruleset, UserRuleError, call, const, declare, rewrite_rule, var
from nanopto.tools.rules_file import RulesFileError, load_rules_file

ROOT = Path(__file__).resolve().parents[2]
FOLD_RULES = ROOT / "nanopto" / "examples" / "rules" / "fold_mul_one.py"

SCALE = """
import nanopto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Inline)
    def scale(self, x, k):
        y = pl.mul(x, k)
        return y

    @pl.function
    def main(self, a):
        b = self.scale(a, 1)
        c = self.scale(b, a)
        return c
"""

SCALE_INLINED_AND_FOLDED = """
import nanopto.language as pl

@pl.program
class P:
    @pl.function
    def main(self, a):
        y0 = a
        b = y0
        y1 = pl.mul(b, a)
        c = y1
        return c
"""

x = var("x")
y = var("y")


def fold_pass() -> passes.Pass:
    loaded = load_rules_file(str(FOLD_RULES), registry=PassRegistry())
    assert [p.name for p in loaded] == ["fold-mul-one"]
    return loaded[0]


def test_fold_composes_with_inlining() -> None:
    """`mul(x, 1)` only exists once `scale(a, 1)` is spliced: inline first, then fold."""
    before = ir.parse_program(SCALE)
    after = PassManager([passes.inline_functions(), fold_pass()]).run(before)
    ir.assert_structural_equal(after, ir.parse_program(SCALE_INLINED_AND_FOLDED))


def test_fold_before_inlining_finds_nothing() -> None:
    """The other order folds nothing: the helper multiplies by its parameter, not by 1."""
    before = ir.parse_program(SCALE)
    ir.assert_structural_equal(fold_pass()(before), before)
    folded_then_inlined = passes.inline_functions()(fold_pass()(before))
    assert "pl.mul(a, 1)" in ir.python_print(folded_then_inlined)


def test_pipeline_names_a_registered_user_pass() -> None:
    registry = PassRegistry()
    registry.register("inline-functions", passes.InlineFunctions)
    load_rules_file(str(FOLD_RULES), registry=registry)
    manager = PassManager.from_pipeline("inline-functions,fold-mul-one{max_iterations=50}", registry)
    assert manager.pass_names == ["inline-functions", "fold-mul-one"]
    assert manager.passes[1].max_iterations == 50  # type: ignore[attr-defined]
    after = manager.run(ir.parse_program(SCALE))
    ir.assert_structural_equal(after, ir.parse_program(SCALE_INLINED_AND_FOLDED))
    with pytest.raises(ValueError, match="has no option 'depth'"):
        PassManager.from_pipeline("fold-mul-one{depth=2}", registry)


def test_trace_counts_matches_per_rule() -> None:
    program = ir.parse_program(
        """
import nanopto.language as pl

@pl.program
class P:
    @pl.function
    def main(self, a):
        b = pl.mul(a, 1)
        c = pl.mul(1, b)
        d = pl.mul(c, 1.0)
        return d
"""
    )
    fold = fold_pass()
    result = rewrite_program(program, fold.rulesets)  # type: ignore[attr-defined]
    assert result.report.matches.get("mul-x-one", 0) >= 1
    assert result.report.matches.get("mul-one-x", 0) >= 1
    text = ir.python_print(result.program)
    assert "b = a" in text and "c = b" in text
    assert "pl.mul(c, 1.0)" in text  # only the integer 1 is folded


def test_a_declared_rule_is_rendered_by_egglog_and_shown_from_itself() -> None:
    rule = rewrite_rule("mul-x-one", call("mul", x, const(1, "INDEX"), span=String("s")), x)
    assert rule.text == (
        '(rule ((= __lhs (Call "mul" (ExCons _x (ExCons (ConstInt 1 "INDEX") (ExNil ))) (ExNil ) "False" (ExNil ) (ExNil ) "s")))\n'
        "      ((union __lhs _x))\n"
        '         :name "mul-x-one")'
    )
    assert (rule.before, rule.after) == ("pl.mul(x, 1)", "x")
    built = rewrite_rule("sub-to-add", call("sub", x, y), call("add", x, call("mul", y, const(-1, built=True))), subsume=True)
    assert '(ConstInt -1 "INDEX")' in built.text and '(subsume (Call "sub"' in built.text
    assert built.after == "pl.add(x, pl.mul(y, -1))   (replacing it)"


def test_subsume_makes_a_larger_rewrite_win() -> None:
    program = ir.parse_program(
        """
import nanopto.language as pl

@pl.program
class P:
    @pl.function
    def main(self, a, b):
        c = pl.sub(a, b)
        return c
"""
    )
    rhs = call("add", x, call("mul", y, -1))
    plain = Ruleset("sub-plain", "", (rewrite_rule("sub-to-add", call("sub", x, y), rhs),))
    retire = Ruleset("sub-retire", "", (rewrite_rule("sub-to-add", call("sub", x, y), rhs, subsume=True),))
    assert "pl.sub(a, b)" in ir.python_print(passes.rewrite(plain)(program))
    assert "pl.add(a, pl.mul(b, -1))" in ir.python_print(passes.rewrite(retire)(program))


def test_wrong_constructor_names_the_rule() -> None:
    bad = Ruleset("typos", "", (Rule("mul-one", "pl.mul(x, 1)", "x", '(rewrite (Cal "mul" x) x)'),))
    with pytest.raises(UserRuleError) as info:
        passes.rewrite(bad)
    message = str(info.value)
    assert "rule 'mul-one' of ruleset 'typos'" in message
    assert "no constructor named Cal" in message and "did you mean Call" in message


def test_wrong_arity_names_the_rule_and_the_signature() -> None:
    text = '(rewrite (Call "mul" (ExCons x (ExCons (ConstInt 1) (ExNil))) (ExNil) "False" (ExNil) (ExNil) sp) x)'
    bad = Ruleset("arity", "", (Rule("mul-one", "pl.mul(x, 1)", "x", text),))
    with pytest.raises(UserRuleError) as info:
        passes.rewrite(bad, name="fold")
    message = str(info.value)
    assert "rule 'mul-one' of ruleset 'arity'" in message
    assert "(ConstInt 1) has 1 argument, but ConstInt takes 2: (ConstInt value:i64 dtype:String)" in message


def test_egglog_type_error_names_the_rule() -> None:
    """A constructor applied to the wrong sort passes the arity check; egglog's verdict is wrapped."""
    text = '(rewrite (Call "mul" args (ExNil) "False" (ExNil) (ExNil) sp) sp)'  # a String is not an Ex
    bad = Ruleset("sorts", "", (Rule("to-span", "pl.mul(..)", "its span", text),))
    with pytest.raises(UserRuleError, match=r"rule 'to-span' of ruleset 'sorts': egglog rejects it"):
        passes.rewrite(bad)


def test_builder_errors() -> None:
    with pytest.raises(UserRuleError, match="rule 'lost'"):
        passes.rewrite(Ruleset("lost", "", (rewrite_rule("lost", call("mul", x, 1), y),)))
    with pytest.raises(ValueError, match="did you mean 'mul'"):
        call("mull", x, 1)
    with pytest.raises(ValueError, match="lowercase"):
        var("X")
    with pytest.raises(UserRuleError, match="reserved"):
        passes.rewrite(Ruleset("load", "", (rewrite_rule("r", call("mul", x, 1), x),)))
    twice = Ruleset("again", "", (rewrite_rule("r", call("mul", 1, x), x),))
    with pytest.raises(UserRuleError, match="rule 'r' is in both ruleset 'r' and 'again'"):
        passes.rewrite([Ruleset("r", "", (rewrite_rule("r", call("mul", x, 1), x),)), twice], name="both")
    with pytest.raises(UserRuleError, match="not kebab-case"):
        passes.rewrite(Ruleset("r", "", (rewrite_rule("r", call("mul", x, 1), x),)), name="Fold_Mul")


def test_looping_ruleset_stops_at_the_limit() -> None:
    """Each iteration makes a Var with a new id, so the e-graph never stops growing: a limit, not
    a hang. (A rule like `x + y -> (x + y) + 0` would terminate: the e-graph closes the cycle.)"""
    text = "(rewrite (Var name ty id) (Var name ty (+ id 1)))"
    grow = Ruleset("grow", "", (Rule("bump-id", "Var(id)", "Var(id + 1)", text),))
    program = ir.parse_program(
        """
import nanopto.language as pl

@pl.program
class P:
    @pl.function
    def main(self, a, b):
        c = pl.add(a, b)
        return c
"""
    )
    started = time.perf_counter()
    with pytest.raises(SaturationLimitError) as info:
        passes.rewrite(grow, max_iterations=30)(program)
    assert time.perf_counter() - started < 30
    assert info.value.limit == "iteration"
    assert info.value.still_matching == ("grow",)


# ---------------------------------------------------------------------------------------------
# Rules files and the command line
# ---------------------------------------------------------------------------------------------


def run(*args: str) -> subprocess.CompletedProcess[str]:
    """`python -m nanopto` in a new process: a pass registry nothing was loaded into, and egglog's
    log lines, if any escaped, on the real standard error."""
    return subprocess.run(
        [sys.executable, "-m", "nanopto", *args], capture_output=True, text=True, timeout=300, cwd=ROOT
    )


def run_here(*args: str) -> subprocess.CompletedProcess[str]:
    """The command through `cli.main` in this process (tests/conftest.py `run_cli`)."""
    return run_cli(*args, cwd=ROOT)


def test_cli_inline_with_rules(tmp_path: Path) -> None:
    program = tmp_path / "prog.py"
    program.write_text(SCALE)
    done = run_here("inline", str(program), "--rules", str(FOLD_RULES))
    assert done.returncode == 0, done.stderr
    ir.assert_structural_equal(ir.parse_program(done.stdout), ir.parse_program(SCALE_INLINED_AND_FOLDED))
    piped = run_here(
        "inline", str(program), "--rules", str(FOLD_RULES), "--pipeline", "inline-functions,fold-mul-one",
        "--print-after-all",
    )
    assert piped.returncode == 0, piped.stderr
    assert "# ----- IR after inline-functions -----" in piped.stdout
    assert "# ----- IR after fold-mul-one -----" in piped.stdout
    unknown = run("inline", str(program), "--pipeline", "inline-functions,fold-mul-one")  # a fresh registry
    assert unknown.returncode == 2
    assert "no pass named 'fold-mul-one'" in unknown.stderr


def test_cli_rules_lists_user_rules() -> None:
    done = run_here("rules", "--rules", str(FOLD_RULES))
    assert done.returncode == 0, done.stderr
    assert "pass fold-mul-one:" in done.stdout
    assert "mul-x-one  pl.mul(x, 1)  where Fresh(pl.mul(x, 1)), Unwritten(x)  =>  x" in done.stdout
    assert "splice-assign" in done.stdout  # the built-in rules are still listed first


def test_cli_bad_rule_is_one_error_naming_it(tmp_path: Path) -> None:
    rules = tmp_path / "bad_rules.py"
    rules.write_text(
        "from nanopto import passes\n"
        "from nanopto.rules import Rule, Ruleset\n"
        "BAD = Ruleset('bad', 'typo', (Rule('mul-one', 'pl.mul(x, 1)', 'x', '(rewrite (Cal \"mul\" x) x)'),))\n"
        "PASSES = [passes.rewrite(BAD, name='fold-bad')]\n"
    )
    program = tmp_path / "prog.py"
    program.write_text(SCALE)
    done = run("inline", str(program), "--rules", str(rules))
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert f"{rules}:4:" in done.stderr and "rule 'mul-one' of ruleset 'bad'" in done.stderr


def test_rules_file_problems(tmp_path: Path) -> None:
    def load(text: str) -> str:
        path = tmp_path / "r.py"
        path.write_text(text)
        with pytest.raises(RulesFileError) as info:
            load_rules_file(str(path), registry=PassRegistry())
        return str(info.value)

    assert "defines no PASSES" in load("X = 1\n")
    assert "PASSES[0] is a Ruleset, not a pass" in load(
        "from nanopto.rules import Ruleset, call, rewrite_rule, var\n"
        "x = var('x')\n"
        "PASSES = [Ruleset('r', '', (rewrite_rule('r', call('mul', x, 1), x),))]\n"
    )
    assert "r.py:2: syntax error" in load("x = 1\nx = = 2\n")
    registry = PassRegistry()
    registry.register("inline-functions", passes.InlineFunctions)
    path = tmp_path / "clash.py"
    path.write_text(
        "from nanopto import passes\n"
        "from nanopto.rules import Ruleset, call, rewrite_rule, var\n"
        "x = var('x')\n"
        "PASSES = [passes.rewrite(Ruleset('r', '', (rewrite_rule('r', call('mul', x, 1), x),)), name='inline-functions')]\n"
    )
    with pytest.raises(RulesFileError, match="taken by a built-in pass"):
        load_rules_file(str(path), registry=registry)
    with pytest.raises(RulesFileError, match="no such rules file"):
        load_rules_file(str(tmp_path / "missing.py"), registry=PassRegistry())


def test_cli_looping_rules_stop_with_one_error(tmp_path: Path) -> None:
    rules = tmp_path / "loop_rules.py"
    rules.write_text(
        "from nanopto import passes\n"
        "from nanopto.rules import Rule, Ruleset\n"
        "GROW = Ruleset('grow', 'never saturates', (Rule('bump-id', 'Var(id)', 'Var(id + 1)',\n"
        "    '(rewrite (Var name ty id) (Var name ty (+ id 1)))'),))\n"
        "PASSES = [passes.rewrite(GROW, name='grow')]\n"
    )
    program = tmp_path / "prog.py"
    program.write_text(SCALE)
    done = run_here("inline", str(program), "--rules", str(rules), "--pipeline", "inline-functions,grow{max_iterations=25}")
    assert done.returncode == 2, done.stderr
    assert "nanopto: error:" in done.stderr and "iteration limit (25)" in done.stderr
    assert "rulesets still matching: grow" in done.stderr


def test_scalar_arithmetic_and_comparisons_have_builders() -> None:
    """`x * 1` is the BinaryExpr a program's `n * 1` parses to, not the call `pl.mul(n, 1)`."""
    from nanopto.rules import binary

    x = var("x")
    ruleset = Ruleset(
        "scalar-folds",
        "n * 1 is n; 0 + n is n; n < n is False.",
        (
            rewrite_rule("mul-one", binary("*", x, 1), x),
            rewrite_rule("zero-add", binary("+", 0, x), x),
            rewrite_rule("lt-self", binary("<", x, x), False),
        ),
    )
    assert [r.before for r in ruleset.rules] == ["(x * 1)", "(0 + x)", "(x < x)"]
    program = ir.parse_program(
        "import nanopto.language as pl\n\n@pl.program\nclass P:\n    @pl.function\n"
        "    def main(self, n: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:\n"
        "        m = 0 + n * 1\n        b = m < m\n        return m\n"
    )
    main = ir.python_print(passes.rewrite(ruleset, name="scalar-folds")(program).functions["main"])
    assert "m = n\n" in main and "b = False\n" in main
    with pytest.raises(ValueError, match="no operator '<>'"):
        binary("<>", x, x)


SUB_PROGRAM = """
import nanopto.language as pl

@pl.program
class P:
    @pl.function
    def main(self, n: pl.Scalar[pl.INDEX], m: pl.Scalar[pl.INDEX]) -> pl.Scalar[pl.INDEX]:
        k = n - m + 1
        return k
"""


@pytest.mark.parametrize(
    ("rules", "expected"),
    [
        (
            # Commutativity that retires what it matched retires both orders: nothing left to extract.
            "from nanopto import passes\n"
            "from nanopto.rules import Ruleset, binary, rewrite_rule, var\n"
            "x, y = var('x'), var('y')\n"
            "SUB = Ruleset('sub-comm', '', (rewrite_rule('sub-comm', binary('-', x, y), binary('-', y, x), subsume=True),))\n"
            "PASSES = [passes.rewrite(SUB)]\n",
            "rules.py:4: ruleset(s) sub-comm: after the rules ran, a function body had no term left to extract; "
            "every form of it was retired by 'sub-comm'",
        ),
        (
            "from egglog import String, rewrite\n"
            "from nanopto import passes\n"
            "from nanopto.rules import Ruleset, call, declare, var\n"
            "x = var('x')\n"
            "BAD = Ruleset('bad-sort', '', (declare('to-string', rewrite(call('mul', x, 1)).to(String('one'))),))\n"
            "PASSES = [passes.rewrite(BAD)]\n",
            "rules.py:5: the rules file raised ConvertError: Cannot convert String(\"one\") of type String to Ex",
        ),
        (
            "from egglog import String, i64, rewrite\n"
            "from nanopto import passes\n"
            "from nanopto.rules import Ruleset, declare, var\n"
            "from nanopto.terms.language import ConstInt\n"
            "c, d = var('c', i64), var('d', String)\n"
            "GROW = Ruleset('grow', '', (declare('bump', rewrite(ConstInt(c, d)).to(ConstInt(c + 1, d))),))\n"
            "PASSES = [passes.rewrite(GROW, max_iterations=30)]\n",
            "rules.py:6: saturation stopped at the iteration limit (30) before reaching a fixpoint; "
            "rulesets still matching: grow (rules: bump)",
        ),
    ],
    ids=["unextractable-after-subsume", "sort-error", "never-terminates"],
)
def test_a_mistake_in_a_rule_is_the_users_error_naming_the_rule(tmp_path: Path, rules: str, expected: str) -> None:
    """Exit 2, one line naming the rule, and none of egglog's own log lines."""
    program, path = tmp_path / "prog.py", tmp_path / "rules.py"
    program.write_text(SUB_PROGRAM)
    path.write_text(rules)
    done = run("inline", str(program), "--rules", str(path))
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("nanopto: error: ") and done.stderr.count("\n") == 1, done.stderr
    assert expected in done.stderr


def test_a_rule_whose_computation_fails_is_the_users_error_naming_the_rule(tmp_path: Path) -> None:
    """A sum the rule computes overflows an i64 (it has no condition keeping its operands small)."""
    program, path = tmp_path / "prog.py", tmp_path / "rules.py"
    overflowing = "        j = pl.const(9223372036854775807, pl.INT64) + pl.const(1, pl.INT64)\n"
    program.write_text(SUB_PROGRAM.replace("        return k\n", overflowing + "        return k\n"))
    path.write_text(
        "from egglog import String, i64, rewrite\n"
        "from nanopto import passes\n"
        "from nanopto.rules import Ruleset, binary, declare, var\n"
        "from nanopto.terms.language import ConstInt\n"
        "a, b, d = var('a', i64), var('b', i64), var('d', String)\n"
        "FOLD = Ruleset('fold', '', (\n"
        "    declare('fold-sub', rewrite(binary('-', ConstInt(a, d), ConstInt(b, d))).to(ConstInt(a - b, d))),\n"
        "    declare('fold-add', rewrite(binary('+', ConstInt(a, d), ConstInt(b, d))).to(ConstInt(a + b, d))),\n"
        "))\n"
        "PASSES = [passes.rewrite(FOLD)]\n"
    )
    done = run("inline", str(program), "--rules", str(path))
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("nanopto: error: ") and done.stderr.count("\n") == 1, done.stderr
    assert f"{path}:8: ruleset(s) fold: rule 'fold-add' computes (+ _a _b), and egglog's + failed" in done.stderr


DOUBLED = """
import nanopto.language as pl

@pl.program
class P:
    @pl.function
    def main(self, a: pl.Tensor[[4], pl.FP32]) -> pl.Tensor[[4], pl.FP32]:
        y = pl.mul(a, 2)
        return y
"""


def test_extraction_honours_a_cost_a_rule_sets() -> None:
    """`pl.mul(a, 2)` is the smaller term, so it stays under a plain rewrite; priced at 1000 by the
    rule (egglog-python's `set_cost`), it loses to the larger `pl.add(a, a)`."""
    x = var("x")
    doubled, summed = call("mul", x, 2), call("add", x, x)
    plain = Ruleset("plain", "", (declare("mul-two", egg.rewrite(doubled).to(summed)),))
    priced = Ruleset(
        "priced",
        "",
        (declare("mul-two", egg.rule(doubled).then(egg.union(doubled).with_(summed), egg.set_cost(doubled, 1000))),),
    )
    before = ir.parse_program(DOUBLED)
    expected = ir.parse_program(DOUBLED.replace("pl.mul(a, 2)", "pl.add(a, a)"))
    ir.assert_structural_equal(passes.rewrite(plain)(before), before)
    ir.assert_structural_equal(passes.rewrite(priced)(before), expected)
    assert priced.rules[0].after.endswith("cost of pl.mul(x, 2) = 1000")


def test_a_cost_set_on_what_no_constructor_builds_is_refused_naming_the_rule() -> None:
    priced = Rule("price", "x", "x", '(rule ((= e (Var n t i))) ((set (cost_table_Nothing e) 5)))')
    with pytest.raises(UserRuleError, match="rule 'price' of ruleset 'bad': cost_table_Nothing sets the cost of no constructor"):
        passes.rewrite(Ruleset("bad", "", (priced,)))
