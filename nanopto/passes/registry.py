"""The pass registry: pass names to factories, so pipelines and strategies are written as text.

A strategy lists pass *names* and resolves them when it is built, so a pass module registered
after this one (InlineFunctions, say) still lands in its place in the Default pipeline.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

from nanopto.passes.pass_base import PASS_NAME, Pass, PassOptionError, unknown_option_message

PassFactory = Callable[..., Pass]


class UnknownPassError(KeyError):
    """No pass is registered under the requested name (`pass_name`, when it came from a lookup)."""

    def __init__(self, message: str, pass_name: str | None = None) -> None:
        super().__init__(message)
        self.pass_name = pass_name

    def __str__(self) -> str:  # KeyError would repr the message
        return str(self.args[0])


class PassRegistry:
    """Names to pass factories; a factory is called with the pass's options as keywords."""

    def __init__(self) -> None:
        self._factories: dict[str, PassFactory] = {}

    def register(self, name: str, factory: PassFactory, *, replace: bool = False) -> PassFactory:
        if not PASS_NAME.match(name):
            raise ValueError(f"pass name {name!r} is not kebab-case (e.g. 'inline-functions')")
        if name in self._factories and not replace:
            raise ValueError(f"a pass named {name!r} is already registered; pass replace=True to override")
        self._factories[name] = factory
        return factory

    def get(self, name: str, **options: object) -> Pass:
        """Build the pass `name` with `options`; unknown names and options are readable errors."""
        factory = self._factories.get(name)
        if factory is None:
            known = ", ".join(sorted(self._factories)) or "none"
            raise UnknownPassError(f"no pass named {name!r} is registered (registered: {known})", name)
        try:
            signature = inspect.signature(factory)
        except ValueError:  # a factory without an inspectable signature: let the call decide
            signature = None
        if signature is not None:
            _check_option_names(name, signature, options)
            try:
                signature.bind(**options)
            except TypeError as exc:
                raise PassOptionError(f"bad options for pass {name!r}: {exc}") from None
        pass_ = factory(**options)
        if pass_.name != name:
            raise ValueError(f"factory registered as {name!r} built a pass named {pass_.name!r}")
        return pass_

    def unregister(self, name: str) -> None:
        """Forget `name` (a rules file's pass when the command that loaded it ends)."""
        self._factories.pop(name, None)

    def factory(self, name: str) -> PassFactory | None:
        """The factory registered under `name`, if any (to put it back after a command)."""
        return self._factories.get(name)

    def names(self) -> list[str]:
        """Registered names, in registration order."""
        return list(self._factories)

    def __contains__(self, name: object) -> bool:
        return name in self._factories


def _check_option_names(name: str, signature: inspect.Signature, options: dict[str, object]) -> None:
    """An option the pass does not have: its name, the options it has, and the closest one."""
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    params = signature.parameters.values()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return  # the factory takes any keyword (a rules file's pass): it checks its own
    known = [p.name for p in params if p.kind in kinds]
    unknown = [key for key in options if key not in known]
    if unknown:
        raise PassOptionError(unknown_option_message(name, unknown, known))


PASS_REGISTRY = PassRegistry()
"""The process-wide registry that pass modules register into at import time."""


def register_pass(name: str, factory: PassFactory, *, replace: bool = False) -> PassFactory:
    """Register `factory` (typically the Pass subclass itself) under `name`."""
    return PASS_REGISTRY.register(name, factory, replace=replace)


def get_pass(name: str, **options: object) -> Pass:
    """Build the registered pass `name` with keyword `options`."""
    return PASS_REGISTRY.get(name, **options)


def list_passes() -> list[str]:
    """The names of all registered passes, in registration order."""
    return PASS_REGISTRY.names()
