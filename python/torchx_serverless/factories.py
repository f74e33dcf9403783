"""Scheduler factories, one per scheduler name TorchX shows: ``aws_batch``, ``aws_sagemaker``, ``txs_local_cwd``.

The ``torchx_plugins.schedulers`` namespace module registers them with ``@register.scheduler()``.
"""

from __future__ import annotations

from typing import Any

from torchx_serverless.scheduler import TxsScheduler, TxsWorkspaceScheduler

#: TorchX scheduler name → the torchx-serverless scheduler it drives.
SCHEDULERS = {
    "aws_batch": "aws_batch",
    "aws_sagemaker": "aws_sagemaker",
    "txs_local_cwd": "local_cwd",
}


def aws_batch(session_name: str, **kwargs: Any) -> TxsScheduler:
    """AWS Batch through torchx-serverless (ships TorchX's workspace, by default the current directory)."""
    return TxsWorkspaceScheduler("aws_batch", session_name, "aws_batch", **kwargs)


def aws_sagemaker(session_name: str, **kwargs: Any) -> TxsScheduler:
    """Amazon SageMaker training jobs through torchx-serverless (ships TorchX's workspace, as aws_batch)."""
    return TxsWorkspaceScheduler("aws_sagemaker", session_name, "aws_sagemaker", **kwargs)


def txs_local_cwd(session_name: str, **kwargs: Any) -> TxsScheduler:
    """The torchx-serverless local server's ``local_cwd`` (``npm start``): jobs run on the server's machine."""
    return TxsScheduler("txs_local_cwd", session_name, "local_cwd", **kwargs)
