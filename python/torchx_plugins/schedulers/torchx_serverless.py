"""torchx-serverless schedulers for TorchX's plugin API (``torchx.plugins``, TorchX after 0.8).

Registers ``local_docker``, ``local_cwd``, ``slurm``, ``kubernetes`` (TorchX's own, which newer TorchX
hides once any scheduler plugin exists), then ``aws_batch``, ``aws_sagemaker`` and ``txs_local_cwd``, in
that order (the first is TorchX's default scheduler).

This package also declares the same schedulers as ``torchx.schedulers`` entry points for older TorchX.
Newer TorchX reads that group too, unless ``TORCHX_PLUGINS_SOURCE`` turns entry points off; registering
here as well would make TorchX warn about every name on every command, so this module registers only when
TorchX will not read this package's entry points.
"""

from __future__ import annotations

import os
from importlib import metadata
from typing import Any, Callable

from torchx.plugins import register

from torchx_serverless import builtins, factories

_ENTRYPOINT_SOURCE = 2  # torchx.plugins' PluginSource.ENTRYPOINT bit of TORCHX_PLUGINS_SOURCE


def _entry_points_deliver_these() -> bool:
    try:
        sources = int(os.environ.get("TORCHX_PLUGINS_SOURCE", "3"))
    except ValueError:
        return False
    if not sources & _ENTRYPOINT_SOURCE:
        return False
    group = metadata.entry_points()
    eps = group.select(group="torchx.schedulers") if hasattr(group, "select") else group.get("torchx.schedulers", ())
    return any(ep.value.startswith("torchx_serverless.") for ep in eps)


def _plugin(name: str, factory: Callable[..., Any]) -> Callable[..., Any]:
    def create(session_name: str, **kwargs: Any) -> Any:
        return factory(session_name, **kwargs)

    create.__doc__ = factory.__doc__
    return register.scheduler(name=name)(create)


if not _entry_points_deliver_these():
    # Attribute names sort in registration order (TorchX scans dir(module)).
    s0_local_docker = _plugin("local_docker", builtins.local_docker)
    s1_local_cwd = _plugin("local_cwd", builtins.local_cwd)
    s2_slurm = _plugin("slurm", builtins.slurm)
    s3_kubernetes = _plugin("kubernetes", builtins.kubernetes)
    s4_aws_batch = _plugin("aws_batch", factories.aws_batch)
    s5_aws_sagemaker = _plugin("aws_sagemaker", factories.aws_sagemaker)
    s6_txs_local_cwd = _plugin("txs_local_cwd", factories.txs_local_cwd)
