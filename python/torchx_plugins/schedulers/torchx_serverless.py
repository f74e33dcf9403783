"""torchx-serverless schedulers for TorchX's plugin API (``torchx.plugins``).

Registers TorchX's built-in schedulers first, in TorchX's order (``local_docker``, ``local_cwd``, ``slurm``,
``kubernetes``: TorchX hides its built-ins once any scheduler plugin exists, and its default scheduler is the
first registered one), then ``aws_batch``, ``aws_sagemaker`` and ``txs_local_cwd``. Installing the package
thus adds three schedulers and changes nothing else: the default stays TorchX's.

The package declares no ``torchx.schedulers`` entry points: TorchX before the plugin API replaces its whole
built-in list with those entry points, in alphabetical order (so ``aws_batch`` would become the default and
``kubernetes_mcad`` and ``lsf`` would vanish). Such TorchX versions do not see this package at all.
"""

from __future__ import annotations

from typing import Any, Callable

from torchx.plugins import register

from torchx_serverless import builtins, factories


def _plugin(name: str, make: Callable[..., Any]) -> Callable[..., Any]:
    def create(session_name: str, **kwargs: Any) -> Any:
        return make(session_name, **kwargs)

    create.__doc__ = make.__doc__
    return register.scheduler(name=name)(create)


def _register_all() -> None:
    # TorchX collects the registered functions of this module in dir() order: the attribute names sort in
    # registration order (s00_…, s01_…).
    ours = {name: getattr(factories, name) for name in factories.SCHEDULERS}
    builtin = {name: builtins.factory(name, module) for name, module in builtins.builtin_modules().items()}
    clash = sorted(builtin.keys() & ours.keys())
    for index, (name, make) in enumerate([*builtin.items(), *((n, f) for n, f in ours.items() if n not in clash)]):
        globals()[f"s{index:02d}_{name}"] = _plugin(name, make)


_register_all()
