"""TorchX's own schedulers, re-exported through the ``torchx.schedulers`` entry-point group.

TorchX releases that predate ``torchx.plugins`` (0.8.0dev0 and older) use the entry points of that group
*instead of* their built-in schedulers as soon as one exists, and newer TorchX uses plugins instead of its
built-ins as soon as any plugin exists. These factories keep ``local_docker``, ``local_cwd``, ``slurm`` and
``kubernetes`` available with this package installed, each delegating to the TorchX in use.
"""

from __future__ import annotations

import importlib
from typing import Any

_MODULES = {
    "local_docker": "torchx.schedulers.docker_scheduler",
    "local_cwd": "torchx.schedulers.local_scheduler",
    "slurm": "torchx.schedulers.slurm_scheduler",
    "kubernetes": "torchx.schedulers.kubernetes_scheduler",
}


def _create(name: str, session_name: str, **kwargs: Any) -> Any:
    return importlib.import_module(_MODULES[name]).create_scheduler(session_name, **kwargs)


def local_docker(session_name: str, **kwargs: Any) -> Any:
    """TorchX's ``local_docker``."""
    return _create("local_docker", session_name, **kwargs)


def local_cwd(session_name: str, **kwargs: Any) -> Any:
    """TorchX's ``local_cwd``."""
    return _create("local_cwd", session_name, **kwargs)


def slurm(session_name: str, **kwargs: Any) -> Any:
    """TorchX's ``slurm``."""
    return _create("slurm", session_name, **kwargs)


def kubernetes(session_name: str, **kwargs: Any) -> Any:
    """TorchX's ``kubernetes``."""
    return _create("kubernetes", session_name, **kwargs)
