"""torchx-serverless for TorchX: the ``aws_batch``, ``aws_sagemaker`` and ``txs_local_cwd`` schedulers,
backed by the torchx-serverless HTTPS API. See docs/torchx-plugin.md."""

__version__ = "0.1.0"
