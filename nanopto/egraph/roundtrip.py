"""The lossless-encoding property: a program through an e-graph with no rules comes back unchanged."""

from __future__ import annotations

from nanopto.egraph.engine import EGraphRun, StageReport
from nanopto.ir_terms import nodes as n
from nanopto.terms.encoding import Decoder, Encoder, ir_declarations, ir_load_declarations


def roundtrip_program(program: n.Program) -> n.Program:
    """Encode every function body into one e-graph, extract each, decode: the identity on IR."""
    encoder = Encoder()
    encoder.roots(program.function_list)
    run = EGraphRun(ir_declarations() + "\n" + ir_load_declarations(), (), label="round-tripping")
    functions = run.rewrite(program.function_list, encoder.rows, Decoder(vars=dict(encoder.vars)), StageReport())
    return n.Program(program.name, tuple(functions), span=program.span)
