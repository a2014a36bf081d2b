"""PLACEHOLDER: being written (parser helper)."""
from nanopto.ir_terms.nodes import Program


class ParserError(ValueError):
    pass


def parse_program(source: str, filename: str = "<string>") -> Program:
    raise NotImplementedError
