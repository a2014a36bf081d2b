"""The term language: the IR and each pass's own terms as egglog sorts and constructors.

The layer between the IR (`nanopto.ir_terms`, which knows nothing of egglog) and the rules and
engine above it: the constructor table derived from the IR node classes (`encoding`), the terms a
pass adds (`inlining`: call sites, renamed copies, the helper terms and facts of its rules), the
codec between IR and terms (`encoding.Encoder` / `Decoder`), the bulk loader (`term_rows`), and
the same vocabulary as egglog-python classes (`language`) that every rule is declared over.
"""
