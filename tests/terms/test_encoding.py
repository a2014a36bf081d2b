"""The egglog encoding: pinned egglog version, generated sorts, lossless round trip."""

from __future__ import annotations

from importlib import metadata
from importlib.resources import files

import pytest

from nanopto import ir
from nanopto.egglog_bindings import bindings as eb
from nanopto.egraph import roundtrip_program
from nanopto.egraph.engine import EGraphRun, StageReport
from nanopto.ir_terms import nodes as n
from nanopto.ir_terms.dtypes import DataType
from nanopto.ir_terms.parser import parse_program
from nanopto.ir_terms.schema import NODE_CLASSES, walk
from nanopto.ir_terms.types import ScalarType, TupleType
from nanopto.rules import INLINE_RULESETS, SUBST
from nanopto.terms.encoding import (
    EGGLOG_VERSION,
    DecodeError,
    Decoder,
    Encoder,
    ir_constructors,
    ir_declarations,
    ir_load_declarations,
)

EXAMPLES = sorted(p.name for p in files("nanopto.examples").iterdir() if p.name.endswith(".py") and p.name != "__init__.py")


def test_egglog_version_is_the_one_the_low_level_encoding_was_written_for() -> None:
    """`encoding.py` uses egglog's non-public `bindings` API: an upgrade must be a deliberate change."""
    assert metadata.version("egglog") == EGGLOG_VERSION


def test_every_node_class_has_a_constructor_and_a_substitution_rule() -> None:
    names = {c.name for c in ir_constructors()}
    rule_names = {r.name for r in SUBST.rules}
    for cls in NODE_CLASSES:
        if cls.__name__ in ("Param", "Function", "Program"):
            continue
        assert cls.__name__ in names
        if cls.__name__ not in ("Var", "IterArg"):
            assert f"subst-{cls.__name__}" in rule_names


def test_rules_have_unique_names_and_before_after_comments() -> None:
    seen: set[str] = set()
    for ruleset in INLINE_RULESETS:
        for rule in ruleset.rules:
            assert rule.name not in seen and rule.before and rule.after
            seen.add(rule.name)


@pytest.mark.parametrize("name", EXAMPLES)
def test_decode_of_encode_is_the_identity_on_every_example(name: str) -> None:
    source = files("nanopto.examples").joinpath(name).read_text()
    program = parse_program(source, name)
    ir.assert_structural_equal(roundtrip_program(program), program)


def _statements(program: ir.Program) -> list[n.Stmt]:
    return [node for node in walk(program) if isinstance(node, n.Stmt)]


def test_a_decoded_statement_shares_a_span_it_was_encoded_from() -> None:
    """The encoder hands the decoder each span String with its Span (`Decoder.spans`): decoding
    reuses a Span object of the program (a body and its first statement may hold two equal ones)
    instead of parsing the String again, and without them parses an equal one."""
    source = files("nanopto.examples").joinpath("bump.py").read_text()
    program = parse_program(source, "bump.py")
    for seeded in (True, False):
        encoder = Encoder()
        encoder.roots(program.function_list)
        decoder = Decoder(vars=dict(encoder.vars), spans=encoder.spans if seeded else {})
        run = EGraphRun(ir_declarations() + "\n" + ir_load_declarations(), (), label="round-tripping")
        functions = run.rewrite(program.function_list, encoder.rows, decoder, StageReport())
        decoded = n.Program(program.name, tuple(functions), span=program.span)
        ir.assert_structural_equal(decoded, program)
        pairs = list(zip(_statements(decoded), _statements(program), strict=True))
        assert pairs and all(new.span == old.span and old.span is not None for new, old in pairs)
        originals = {id(old.span) for _, old in pairs}
        assert all((id(new.span) in originals) == seeded for new, _ in pairs)


def test_the_decoder_reads_a_dag_again_once_it_has_grown() -> None:
    """Roots extracted into one DAG are decoded from one reading of it; a term added to the DAG
    after a decode (as each extraction into a shared DAG adds its own) is found by the next."""
    dag = eb.TermDag()
    f32 = dag.app("TScalar", [dag.lit(eb.String("FP32"))])
    decoder = Decoder(vars={})
    assert decoder.decode(dag, f32) == ScalarType(DataType.FP32)
    i64 = dag.app("TScalar", [dag.lit(eb.String("INT64"))])
    assert decoder.decode(dag, i64) == ScalarType(DataType.INT64)
    assert decoder.decode(dag, f32) == ScalarType(DataType.FP32)


def test_a_literal_where_a_term_belongs_and_a_term_where_a_literal_belongs_are_decode_errors() -> None:
    dag = eb.TermDag()
    name = dag.lit(eb.String("FP32"))
    with pytest.raises(DecodeError, match="expected a constructor"):
        Decoder(vars={}).decode(dag, name)
    nested = dag.app("TScalar", [dag.app("TUnknown", [])])
    with pytest.raises(DecodeError, match="expected a literal"):
        Decoder(vars={}).decode(dag, nested)


def test_each_root_of_a_dag_is_decoded_apart() -> None:
    """Roots of one DAG share its reading, not their decoded nodes: within a root a term shared
    by two parents decodes to one node; a term that a later root holds again is decoded again."""
    dag = eb.TermDag()
    f32 = dag.app("TScalar", [dag.lit(eb.String("FP32"))])
    pair = dag.app("TTuple", [dag.app("TyCons", [f32, dag.app("TyCons", [f32, dag.app("TyNil", [])])])])
    decoder = Decoder(vars={})
    first = decoder.decode(dag, pair)
    assert isinstance(first, TupleType) and first.types[0] is first.types[1]
    again = decoder.decode(dag, f32)
    assert again == first.types[0] and again is not first.types[0]
