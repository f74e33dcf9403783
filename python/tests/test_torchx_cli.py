"""TorchX's own CLI (newest TorchX, schedulers found through the plugin API) against the local server."""

from __future__ import annotations

import json
import re
from pathlib import Path

from conftest import Torchx, handle_in


def test_run_wait_echo_then_status_describe_log(torchx: Torchx) -> None:
    run = torchx("run", "-s", "txs_local_cwd", "--wait", "utils.echo", "--msg", "hello from torchx")
    handle = handle_in(run.stdout)
    assert handle.startswith("txs_local_cwd://torchx/echo-")
    assert "job finished: SUCCEEDED" in run.stderr

    status = torchx("status", handle).stdout
    assert re.search(r"State:\s*SUCCEEDED", status)
    assert "*echo[0]:SUCCEEDED" in status

    describe = torchx("describe", handle).stdout
    assert "'entrypoint': 'echo'" in describe
    assert "'args': ['hello from torchx']" in describe
    assert "'memMB': 1024" in describe

    log = torchx("log", handle).stdout
    assert "echo/0 hello from torchx" in log


def test_log_regex_and_role_replica_path(torchx: Torchx) -> None:
    script = "for i in 1 2 3; do echo alpha-$i-r${replica_id}; echo beta-$i-r${replica_id}; done"
    run = torchx("run", "-s", "txs_local_cwd", "--wait", "utils.sh", "--num_replicas", "2", "sh", "-c", script)
    handle = handle_in(run.stdout)

    out = torchx("log", "--regex", "beta-[23]", f"{handle}/sh/1").stdout
    lines = [line for line in out.splitlines() if line.strip()]
    assert lines == ["sh/1 beta-2-r1", "sh/1 beta-3-r1"]

    replica0 = torchx("log", f"{handle}/sh/0").stdout
    assert "alpha-1-r0" in replica0 and "r1" not in replica0


def test_list_shows_the_apps_of_txs_local_cwd(torchx: Torchx) -> None:
    handle = handle_in(torchx("run", "-s", "txs_local_cwd", "--wait", "utils.echo", "--msg", "listed").stdout)
    listing = torchx("list", "-s", "txs_local_cwd").stdout
    assert handle in listing
    row = next(line for line in listing.splitlines() if handle in line)
    assert "SUCCEEDED" in row


def test_cancel_stops_a_running_app(torchx: Torchx) -> None:
    handle = handle_in(torchx("run", "-s", "txs_local_cwd", "utils.sh", "sleep", "600").stdout)
    torchx.wait_for_state(handle, ["RUNNING"])
    torchx("cancel", handle)
    status = torchx.wait_for_state(handle, ["CANCELLED"])
    assert "*sh[0]:CANCELLED" in status


def test_a_failing_app_makes_run_wait_exit_non_zero(torchx: Torchx) -> None:
    run = torchx("run", "-s", "txs_local_cwd", "--wait", "utils.sh", "sh", "-c", "echo boom >&2; exit 3", check=False)
    assert run.returncode == 1
    handle = handle_in(run.stdout)
    status = torchx("status", handle).stdout
    assert re.search(r"State:\s*FAILED", status)
    assert "exited with code 3" in status
    assert "boom" in torchx("log", "--streams", "stderr", handle).stdout


def test_replicas_run_in_the_callers_directory(torchx: Torchx, workdir: Path) -> None:
    handle = handle_in(torchx("run", "-s", "txs_local_cwd", "--wait", "utils.sh", "pwd").stdout)
    assert f"sh/0 {workdir}" in torchx("log", handle).stdout


def test_dryrun_aws_batch_prints_the_services_batch_request(torchx: Torchx) -> None:
    # Without a workspace (test_workspace.py ships one): a job with one needs job_role_arn to read it.
    out = torchx(
        "run", "--dryrun", "--workspace", "", "-s", "aws_batch", "-cfg", "queue=q",
        "dist.ddp", "-j", "2x8", "--script", "train.py",
    ).stdout
    request = json.loads(out.split("=== SCHEDULER REQUEST ===", 1)[1])
    job_def = request["registerJobDefinition"]
    assert job_def["type"] == "multinode"
    assert job_def["nodeProperties"]["numNodes"] == 2
    command = job_def["nodeProperties"]["nodeRangeProperties"][0]["container"]["command"]
    assert "--nnodes 2 --nproc_per_node 8" in command[-1]
    assert "AWS_BATCH_JOB_MAIN_NODE_PRIVATE_IPV4_ADDRESS" in command[-1]
    assert request["submitJob"]["jobQueue"] == "q"


def test_runopts_are_the_services(torchx: Torchx) -> None:
    out = torchx("runopts", "aws_batch").stdout
    assert "queue=QUEUE (str)" in out
    assert "retry_rules=RETRY_RULES (List[str], None)" in out or "retry_rules=RETRY_RULES (typing.List[str], None)" in out
    assert "endpoint=ENDPOINT (str, None)" in out
    sagemaker = torchx("runopts", "aws_sagemaker").stdout
    assert "role=ROLE (str)" in sagemaker and "output_path=OUTPUT_PATH (str)" in sagemaker


def test_a_missing_required_run_option_is_reported_by_torchx(torchx: Torchx) -> None:
    run = torchx("run", "--dryrun", "-s", "aws_batch", "utils.echo", check=False)
    assert "Invalid scheduler configuration: Required run option: queue" in run.stderr
    assert "Traceback" not in run.stderr


def test_a_run_option_the_service_rejects_is_an_invalid_run_config(torchx: Torchx) -> None:
    run = torchx("run", "--dryrun", "-s", "aws_batch", "-cfg", "queue=q,timeout=5", "utils.echo", check=False)
    assert "Invalid scheduler configuration:" in run.stderr
    assert "timeout" in run.stderr
    assert "Traceback" not in run.stderr and '"error"' not in run.stderr


def test_an_unknown_app_is_not_found(torchx: Torchx) -> None:
    run = torchx("status", "txs_local_cwd://torchx/no-such-app", check=False)
    assert run.returncode == 1
    assert "does not exist" in run.stderr
    assert "Traceback" not in run.stderr


def test_the_endpoint_comes_from_torchxconfig(torchx: Torchx, workdir: Path) -> None:
    (workdir / ".torchxconfig").write_text(f"[aws_batch]\nendpoint = {torchx.server.url}\nqueue = from-config\n")
    torchx.extra_env = {"TXS_ENDPOINT": ""}
    out = torchx("run", "--dryrun", "--workspace", "", "-s", "aws_batch", "utils.echo").stdout
    assert '"jobQueue": "from-config"' in out


def test_dryrun_aws_sagemaker_takes_the_instance_type_from_torchx_named_resource(torchx: Torchx) -> None:
    out = torchx(
        "run", "--dryrun", "-s", "aws_sagemaker",
        "-cfg", "role=arn:aws:iam::123456789012:role/sm-exec,output_path=s3://bucket/out",
        # SageMaker pulls images from ECR only (TorchX's default image is on ghcr.io: a 400 naming the image)
        "dist.ddp", "-j", "2x4", "-h", "aws_g5.12xlarge", "--script", "train.py",
        "--image", "123456789012.dkr.ecr.us-east-1.amazonaws.com/train:1",
    ).stdout
    request = json.loads(out.split("=== SCHEDULER REQUEST ===", 1)[1])
    config = request["createTrainingJob"]["ResourceConfig"]
    assert (config["InstanceType"], config["InstanceCount"]) == ("ml.g5.12xlarge", 2)
    assert request["createTrainingJob"]["RoleArn"] == "arn:aws:iam::123456789012:role/sm-exec"


def test_status_and_list_find_the_endpoint_in_torchxconfig_too(torchx: Torchx, workdir: Path) -> None:
    handle = handle_in(torchx("run", "-s", "txs_local_cwd", "--wait", "utils.echo").stdout)
    (workdir / ".torchxconfig").write_text(f"[txs_local_cwd]\nendpoint = {torchx.server.url}\n")
    torchx.extra_env = {"TXS_ENDPOINT": ""}
    assert re.search(r"State:\s*SUCCEEDED", torchx("status", handle).stdout)
    assert handle in torchx("list", "-s", "txs_local_cwd").stdout


def test_the_endpoint_run_option_wins_over_txs_endpoint(torchx: Torchx) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}"
    torchx.extra_env = {"TXS_ENDPOINT": dead}
    run = torchx("run", "-s", "txs_local_cwd", "-cfg", f"endpoint={torchx.server.url}", "--wait", "utils.echo")
    assert handle_in(run.stdout).startswith("txs_local_cwd://torchx/echo-")
    # without the option, the (dead) TXS_ENDPOINT is used and the error says how to fix it
    failed = torchx("run", "-s", "txs_local_cwd", "utils.echo", check=False)
    assert failed.returncode != 0
    assert f"cannot reach the torchx-serverless API at {dead}" in failed.stderr
    assert "npm start" in failed.stderr


def test_a_run_on_a_server_without_aws_fails_at_once_and_leaves_one_record(torchx: Torchx, monkeypatch) -> None:
    from torchx_serverless.client import TxsClient

    monkeypatch.setenv("TXS_LOCAL_TOKEN_FILE", torchx.server.token_file)
    client = TxsClient(torchx.server.url)

    def aws_batch_records() -> int:
        return len(client.request("GET", "/v1/apps", query={"scheduler": "aws_batch", "limit": 100})["apps"])

    before = aws_batch_records()
    # No workspace: this is about the submission failing, not about shipping code.
    run = torchx("run", "--workspace", "", "-s", "aws_batch", "-cfg", "queue=q", "utils.echo", check=False)
    assert run.returncode != 0
    assert "AWS_REGION" in run.stderr  # the server's fix, not an HTTP dump
    assert aws_batch_records() == before + 1
