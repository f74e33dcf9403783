"""TorchX's Python Runner (newest TorchX) with the plugin's schedulers, in process, against the local server."""

from __future__ import annotations

import getpass
import threading
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Iterator

import pytest
from torchx import specs
from torchx.runner import Runner, get_runner
from torchx.schedulers.api import Stream

from conftest import LocalServer, txs_cli
from torchx_serverless import scheduler as txs_scheduler
from torchx_serverless.client import TxsRequestError
from torchx_serverless.scheduler import TxsDryRun, TxsScheduler


@pytest.fixture()
def runner(server: LocalServer, monkeypatch: pytest.MonkeyPatch, workdir: Path) -> Iterator[Runner]:
    monkeypatch.setenv("TXS_ENDPOINT", server.url)
    monkeypatch.setenv("TXS_LOCAL_TOKEN_FILE", server.token_file)
    monkeypatch.setenv("TXS_CLI", txs_cli())
    monkeypatch.chdir(workdir)
    with get_runner() as r:
        yield r


def sh(*args: str, num_replicas: int = 1) -> specs.AppDef:
    role = specs.Role(
        name="sh", image="unused", entrypoint="sh", args=["-c", *args], num_replicas=num_replicas,
        resource=specs.Resource(cpu=1, gpu=0, memMB=64),
    )
    return specs.AppDef(name="sh", roles=[role])


def wait_terminal(runner: Runner, handle: str) -> specs.AppStatus:
    status = runner.wait(handle, wait_interval=0.2)
    assert status is not None
    return status


def test_the_plugins_schedulers_are_registered_with_torchx() -> None:
    from torchx.schedulers import get_scheduler_factories

    factories = get_scheduler_factories()
    for name, service in [("aws_batch", "aws_batch"), ("aws_sagemaker", "aws_sagemaker"), ("txs_local_cwd", "local_cwd")]:
        sched = factories[name]("torchx")
        assert isinstance(sched, TxsScheduler)
        assert (sched.backend, sched.service_scheduler) == (name, service)
    # TorchX's own schedulers stay available with the plugin installed
    assert {"local_cwd", "local_docker", "slurm", "kubernetes"} <= set(factories)
    assert not isinstance(factories["local_cwd"]("torchx"), TxsScheduler)


def test_schedule_is_idempotent_for_one_dryrun(runner: Runner) -> None:
    info = runner.dryrun(sh("echo once"), "txs_local_cwd")
    assert isinstance(info.request, TxsDryRun)
    first = runner.schedule(info)
    second = runner.schedule(info)  # a retried call: the same Idempotency-Key
    assert first == second
    apps = [a for a in runner.list("txs_local_cwd") if a.app_handle == first]
    assert len(apps) == 1
    other = runner.schedule(runner.dryrun(sh("echo once"), "txs_local_cwd"))
    assert other != first


def test_dryrun_request_is_the_services_and_reads_well(runner: Runner) -> None:
    info = runner.dryrun(sh("echo ${replica_id}", num_replicas=2), "aws_batch", cfg={"queue": "gpu"})
    native = info.request.native
    assert native["submitJob"]["jobQueue"] == "gpu"
    assert native["registerJobDefinition"]["nodeProperties"]["numNodes"] == 2
    text = repr(info)
    assert text.startswith("{") and '"registerJobDefinition"' in text and "\n" in text
    assert info.request.body["session"] == "torchx"
    sent = info.request.body["cfg"]
    assert sent["queue"] == "gpu"
    # as TorchX's aws_batch: the job is tagged with the user running TorchX
    assert sent["user"] == getpass.getuser()
    assert native["submitJob"]["tags"]["torchx.pytorch.org/user"] == getpass.getuser()
    assert "endpoint" not in sent and None not in sent.values()


def test_local_cwd_dryrun_sends_cwd_and_env_only_when_the_server_declares_them(runner: Runner, workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    info = runner.dryrun(sh("true"), "txs_local_cwd")
    assert info.request.body["cfg"]["cwd"] == str(workdir)
    declared = {opt["name"] for opts in txs_scheduler._RUNOPTS_CACHE.values() for opt in opts}
    if "env" not in declared:
        assert "env" not in info.request.body["cfg"]
    # a server that declares env (the other branch) gets the caller's environment
    endpoint = info.request.endpoint
    opts = txs_scheduler._RUNOPTS_CACHE[(endpoint, "local_cwd")]
    monkeypatch.setitem(txs_scheduler._RUNOPTS_CACHE, (endpoint, "local_cwd"),
                        [*[o for o in opts if o["name"] != "env"], {"name": "env", "type": "dict[str,str]", "default": None, "required": False, "help": ""}])
    monkeypatch.setenv("TXS_PLUGIN_MARKER", "42")
    sched = TxsScheduler("txs_local_cwd", "torchx", "local_cwd")
    cfg = sched._service_cfg({"cwd": "/given"})
    assert cfg["cwd"] == "/given"
    assert cfg["env"]["TXS_PLUGIN_MARKER"] == "42"
    assert sched._service_cfg({"env": {"A": "b"}})["env"] == {"A": "b"}
    # never to a remote endpoint: the environment may hold credentials
    remote = TxsScheduler("txs_local_cwd", "torchx", "local_cwd", endpoint="https://txs.example.com")
    monkeypatch.setitem(txs_scheduler._RUNOPTS_CACHE, ("https://txs.example.com", "local_cwd"),
                        txs_scheduler._RUNOPTS_CACHE[(endpoint, "local_cwd")])
    assert "env" not in remote._service_cfg({"cwd": "/given"})


def test_local_cwd_sends_env_and_cwd_only_through_the_servers_own_socket(
    runner: Runner, server: LocalServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    port = server.url.rsplit(":", 1)[1]
    assert (Path(server.token_file).parent / f"{port}.sock").exists()
    monkeypatch.setenv("TXS_PLUGIN_SECRET", "s3cret-env")
    proven = TxsScheduler("txs_local_cwd", "torchx", "local_cwd", endpoint=server.url.replace("127.0.0.1", "localhost"))
    handle = proven.schedule(proven.submit_dryrun(sh('echo "secret=$TXS_PLUGIN_SECRET"'), {}))
    for _ in range(200):
        described = proven.describe(handle)
        if described is not None and described.state == specs.AppState.SUCCEEDED:
            break
        time.sleep(0.05)
    assert [line.rstrip("\n") for line in proven.log_iter(handle, "sh", 0)] == ["secret=s3cret-env"]
    # The same server, when its socket is not found beside the token file: neither env nor cwd is sent,
    # and an explicit env is refused before anything is submitted.
    monkeypatch.setenv("TXS_LOCAL_TOKEN_FILE", str(tmp_path / "elsewhere.token"))
    unproven = TxsScheduler("txs_local_cwd", "torchx", "local_cwd", endpoint=server.url)
    info = unproven.submit_dryrun(sh("true"), {})
    assert "env" not in info.request.body.get("cfg", {}) and "cwd" not in info.request.body.get("cfg", {})
    with pytest.raises(TxsRequestError, match="run option `env` is sent only to your own local server"):
        unproven.submit_dryrun(sh("true"), {"env": {"A": "b"}})


def test_describe_carries_roles_replicas_msg_and_ui_url(runner: Runner) -> None:
    handle = runner.run(sh("exit 4", num_replicas=2), "txs_local_cwd")
    status = wait_terminal(runner, handle)
    assert status.state == specs.AppState.FAILED
    assert "exited with code 4" in status.msg
    assert status.ui_url and status.ui_url.startswith("file://")
    assert [r.id for r in status.roles[0].replicas] == [0, 1]
    assert status.roles[0].replicas[0].state in (specs.AppState.FAILED, specs.AppState.CANCELLED)
    app = runner.describe(handle)
    assert app is not None
    assert app.roles[0].num_replicas == 2 and app.roles[0].resource.memMB == 64
    assert app.roles[0].args == ["-c", "exit 4"]


def test_log_lines_streams_since_until(runner: Runner) -> None:
    handle = runner.run(sh("echo out-line; echo err-line >&2"), "txs_local_cwd")
    wait_terminal(runner, handle)
    combined = list(runner.log_lines(handle, "sh", 0))
    assert all(line.endswith("\n") for line in combined)
    assert {l.strip() for l in combined} == {"out-line", "err-line"}
    assert [l.strip() for l in runner.log_lines(handle, "sh", 0, streams=Stream.STDERR)] == ["err-line"]
    assert [l.strip() for l in runner.log_lines(handle, "sh", 0, streams=Stream.STDOUT)] == ["out-line"]
    future = datetime.now(timezone.utc) + timedelta(hours=1)
    assert list(runner.log_lines(handle, "sh", 0, since=future)) == []
    past = datetime.now(timezone.utc) - timedelta(hours=1)
    assert list(runner.log_lines(handle, "sh", 0, until=past)) == []


def test_log_lines_should_tail_follows_a_running_app_to_its_end(runner: Runner, workdir: Path) -> None:
    gate = workdir / "gate"
    handle = runner.run(sh(f"echo before; while [ ! -e {gate} ]; do sleep 0.1; done; echo after"), "txs_local_cwd")
    lines: list = []
    follower = threading.Thread(target=lambda: lines.extend(runner.log_lines(handle, "sh", 0, should_tail=True)))
    follower.start()
    deadline = time.monotonic() + 60
    while "before\n" not in lines and time.monotonic() < deadline:
        time.sleep(0.1)
    assert lines == ["before\n"]  # following: the app is still running
    gate.touch()
    follower.join(timeout=60)
    assert not follower.is_alive()
    assert lines == ["before\n", "after\n"]


def test_unknown_role_or_replica_is_a_clear_error(runner: Runner) -> None:
    handle = runner.run(sh("true"), "txs_local_cwd")
    with pytest.raises(ValueError, match="Unknown role 'nope'"):
        list(runner.log_lines(handle, "nope", 0))


def test_cancel_and_delete(runner: Runner) -> None:
    handle = runner.run(sh("sleep 600"), "txs_local_cwd")
    runner.cancel(handle)
    assert wait_terminal(runner, handle).state == specs.AppState.CANCELLED
    runner.cancel(handle)  # idempotent
    runner.delete(handle)
    assert runner.status(handle) is not None  # the record is kept
    runner.cancel("txs_local_cwd://torchx/no-such-app")  # an unknown app: nothing to do, as in TorchX


def test_list_pages_through_every_app(runner: Runner, monkeypatch: pytest.MonkeyPatch) -> None:
    handles = {runner.schedule(runner.dryrun(sh("true"), "txs_local_cwd")) for _ in range(3)}
    sched = runner._scheduler("txs_local_cwd")
    assert isinstance(sched, TxsScheduler)
    original = sched.client().request
    calls = []

    def small_pages(method, path, **kwargs):
        if path == "/v1/apps":
            kwargs["query"] = {**kwargs["query"], "limit": 1}
            calls.append(kwargs["query"].get("nextToken"))
        return original(method, path, **kwargs)

    monkeypatch.setattr(sched.client(), "request", small_pages)
    listed = {a.app_handle for a in sched.list()}
    assert handles <= listed
    assert len(calls) >= len(listed)


def test_runner_wait_long_polls_the_service_and_status_does_not(
    runner: Runner, workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from torchx_serverless.client import TxsClient

    sent: list = []
    original = TxsClient.request

    def recording(self: TxsClient, method: str, path: str, **kwargs: object) -> object:
        answer = original(self, method, path, **kwargs)
        if method == "GET" and path.startswith("/v1/apps/") and not path.endswith("/logs"):
            sent.append((dict(kwargs.get("query") or {}), answer.get("revision"), answer["status"]["state"]))
        return answer

    monkeypatch.setattr(TxsClient, "request", recording)
    gate = workdir / "wait-gate"
    handle = runner.run(sh(f"while [ ! -e {gate} ]; do sleep 0.02; done"), "txs_local_cwd")
    runner.status(handle)
    assert "waitFor" not in sent[-1][0]  # a plain status answers at once
    opener = threading.Timer(0.5, gate.touch)
    opener.start()
    try:
        assert wait_terminal(runner, handle).state == specs.AppState.SUCCEEDED
    finally:
        opener.cancel()
    held = [(query, revision) for query, revision, _ in sent if "waitFor" in query]
    assert held, "Runner.wait sent no long poll"
    # Each held describe asked for the change after the revision the previous describe answered.
    revisions = [revision for _, revision, _ in sent]
    for query, _ in held:
        assert query["waitFor"] in revisions
    assert sent[-1][2] == "SUCCEEDED"
