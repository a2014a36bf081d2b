"""PLACEHOLDER: being written (printer helper)."""
from typing import Any


def python_print(node: Any) -> str:
    raise NotImplementedError
