"""TorchX's own schedulers, registered again beside this package's.

TorchX with the plugin API (``torchx.plugins``) uses plugin schedulers *instead of* its built-in ones as soon
as any plugin exists, and takes the first one as the default scheduler. So the plugin module registers
every built-in scheduler first, in TorchX's own order (read from ``torchx.schedulers.DEFAULT_SCHEDULER_MODULES``
of the TorchX in use, so a built-in added later is not hidden either), each delegating to TorchX.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable, Mapping


def builtin_modules() -> Mapping[str, str]:
    """TorchX's built-in scheduler names → their modules, in TorchX's order (the first is its default)."""
    from torchx.schedulers import DEFAULT_SCHEDULER_MODULES

    return DEFAULT_SCHEDULER_MODULES


def factory(name: str, module: str) -> Callable[..., Any]:
    """A factory of TorchX's built-in scheduler ``name`` (its module's ``create_scheduler``)."""

    def create(session_name: str, **kwargs: Any) -> Any:
        return importlib.import_module(module).create_scheduler(session_name, **kwargs)

    create.__doc__ = f"TorchX's ``{name}``."
    return create
