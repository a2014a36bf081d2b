"""`from nanopto import ir`: the IR namespace users write tests against."""

from nanopto.ir_terms import *  # noqa: F403
from nanopto.ir_terms import __all__  # noqa: F401
