"""Verification: diagnostics, IR property verifiers, the rebinding checker and the reference
interpreter, the oracles a pass is checked against. This package imports only the IR."""

from nanopto.verify.check_rebinding import RebindingCheckError, check_rebinding
from nanopto.verify.diagnostics import Diagnostic, DiagnosticSeverity, Severity
from nanopto.verify.equivalence import NotEquivalentError, assert_equivalent
from nanopto.verify.interpreter import InterpreterError, interpret, values_equal
from nanopto.verify.properties import (
    IRProperty,
    IRPropertySet,
    PropertyVerifier,
    PropertyVerifierRegistry,
    VerifyContext,
    get_verifier,
    has_verifier,
    register_verifier,
    verify_inline_functions_eliminated,
    verify_properties,
)

__all__ = [
    "Diagnostic",
    "DiagnosticSeverity",
    "IRProperty",
    "IRPropertySet",
    "InterpreterError",
    "NotEquivalentError",
    "PropertyVerifier",
    "PropertyVerifierRegistry",
    "RebindingCheckError",
    "Severity",
    "VerifyContext",
    "assert_equivalent",
    "check_rebinding",
    "get_verifier",
    "has_verifier",
    "interpret",
    "register_verifier",
    "values_equal",
    "verify_inline_functions_eliminated",
    "verify_properties",
]
