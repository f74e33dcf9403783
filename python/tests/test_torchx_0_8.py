"""TorchX 0.8.0dev0 (b72ba03, before torchx.plugins): the plugin registers through `torchx.schedulers`
entry points. That release uses the entry points *instead of* its built-in schedulers once any exist, so
the package's entry points also name TorchX's local_docker, local_cwd, slurm and kubernetes."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import OLD, Torchx, cli_env, handle_in


def test_0_8_finds_the_schedulers_through_entry_points(torchx_old: Torchx) -> None:
    code = (
        "import json; from torchx.schedulers import get_scheduler_factories as f; "
        "fs = f(); s = fs['aws_batch']('torchx'); "
        "print(json.dumps([sorted(fs), type(s).__module__, s.service_scheduler, type(fs['local_cwd']('torchx')).__module__]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=torchx_old.cwd, capture_output=True, text=True, check=True,
        env=cli_env(torchx_old.server, torchx_old.cwd, OLD),
    ).stdout
    names, module, service, local = json.loads(out)
    assert names == ["aws_batch", "aws_sagemaker", "kubernetes", "local_cwd", "local_docker", "slurm", "txs_local_cwd"]
    assert module == "torchx_serverless.scheduler" and service == "aws_batch"
    assert local == "torchx.schedulers.local_scheduler"  # TorchX's own local_cwd, not the plugin's


def test_0_8_runs_waits_logs_and_lists(torchx_old: Torchx) -> None:
    run = torchx_old("run", "-s", "txs_local_cwd", "--wait", "utils.echo", "--msg", "from torchx 0.8")
    handle = handle_in(run.stdout)
    assert "echo/0 from torchx 0.8" in torchx_old("log", handle).stdout
    assert "SUCCEEDED" in torchx_old("status", handle).stdout
    assert handle in torchx_old("list", "-s", "txs_local_cwd").stdout


def test_0_8_dryrun_aws_batch_prints_the_services_request(torchx_old: Torchx) -> None:
    out = torchx_old(
        "run", "--dryrun", "-s", "aws_batch", "-cfg", "queue=q", "dist.ddp", "-j", "2x8", "--script", "train.py"
    ).stdout
    request = json.loads(out.split("=== SCHEDULER REQUEST ===", 1)[1])
    assert request["submitJob"]["jobQueue"] == "q"
    assert request["registerJobDefinition"]["nodeProperties"]["numNodes"] == 2
