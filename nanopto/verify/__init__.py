"""Verification: diagnostics, IR property verifiers, and (elsewhere in this package) the
reference interpreter and the rebinding checker that serve as oracles for passes."""

# --- Re-exports of modules written by others: enable each line when its module lands. ---------
# from nanopto.verify.interpreter import ...  # reference interpreter (the oracle)
from nanopto.verify.check_rebinding import RebindingCheckError, check_rebinding
from nanopto.verify.diagnostics import Diagnostic, Severity
from nanopto.verify.properties import (
    IRProperty,
    PropertyVerifier,
    VerifyContext,
    get_verifier,
    has_verifier,
    register_verifier,
    verify_inline_functions_eliminated,
    verify_properties,
)

# ------------------------------------------------------------------------------------------------

__all__ = [
    "Diagnostic",
    "IRProperty",
    "PropertyVerifier",
    "RebindingCheckError",
    "Severity",
    "VerifyContext",
    "check_rebinding",
    "get_verifier",
    "has_verifier",
    "register_verifier",
    "verify_inline_functions_eliminated",
    "verify_properties",
]
