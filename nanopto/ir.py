"""`from nanopto import ir`: the IR namespace users write tests against."""

from nanopto.ir_terms import *  # noqa: F403
from nanopto.ir_terms import __all__  # noqa: F401


def __getattr__(name: str) -> object:
    """`ir.PassManager` and `ir.OptimizationStrategy`, where PyPTO's `ir` also offers them; read
    from `nanopto.passes` on first use, so importing the IR does not load the passes."""
    if name in ("PassManager", "OptimizationStrategy"):
        from nanopto import passes

        return getattr(passes, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
