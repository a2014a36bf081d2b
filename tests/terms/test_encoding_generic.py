"""The term codec in `ir_terms` is generic: it knows the IR and nothing of inlining."""

from __future__ import annotations

import inspect

from nanopto.terms import encoding
from nanopto.terms.encoding import Decoder, ir_constructors


def test_the_ir_encoding_has_no_inlining_terms() -> None:
    names = {c.name for c in ir_constructors()}
    assert not names & {"At", "Inst", "RVar", "RIterArg", "Arg", "Body", "Ret"}
    assert not {"At", "RVar", "RIterArg"} & set(Decoder.SPECIAL)
    source = inspect.getsource(encoding)
    assert "fresh_copy" not in source and "site_of" not in source
