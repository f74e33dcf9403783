"""Newest TorchX: how the plugin's schedulers are found (entry points and the torchx_plugins namespace)."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import NEWEST, Torchx, cli_env

PROBE = (
    "import json; from torchx import plugins; from torchx.schedulers import get_scheduler_factories as f;"
    "fs = f(); errs = plugins.registry().load_errors(plugins.PluginType.SCHEDULER);"
    "print(json.dumps([list(fs), [e.error for e in errs], fs['txs_local_cwd'].__module__]))"
)


def probe(torchx: Torchx, **env: str) -> list:
    out = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=torchx.cwd, capture_output=True, text=True, check=True,
        env=cli_env(torchx.server, torchx.cwd, NEWEST, **env),
    )
    assert "WARNING" not in out.stderr, out.stderr
    return json.loads(out.stdout)


def test_by_default_the_entry_points_deliver_every_name_once(torchx: Torchx) -> None:
    names, errors, _ = probe(torchx)
    assert sorted(names) == ["aws_batch", "aws_sagemaker", "kubernetes", "local_cwd", "local_docker", "slurm", "txs_local_cwd"]
    assert errors == []  # no name registered through both channels


def test_namespace_only_registration_keeps_torchx_default_first(torchx: Torchx) -> None:
    names, errors, module = probe(torchx, TORCHX_PLUGINS_SOURCE="1")
    assert names == ["local_docker", "local_cwd", "slurm", "kubernetes", "aws_batch", "aws_sagemaker", "txs_local_cwd"]
    assert errors == [] and module == "torchx_plugins.schedulers.torchx_serverless"


def test_entry_points_only_still_work(torchx: Torchx) -> None:
    names, errors, _ = probe(torchx, TORCHX_PLUGINS_SOURCE="2")
    assert "txs_local_cwd" in names and errors == []
