"""TorchX's workspace through the plugin: ``aws_batch`` and ``aws_sagemaker`` ship it with the ``txs`` command
(packed, uploaded once by content) and name it in the request; ``txs_local_cwd`` takes none, as TorchX's
``local_cwd``."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
from torchx import specs
from torchx.runner import get_runner
from torchx.workspace import WorkspaceMixin

from conftest import LocalServer, Torchx, txs_cli
from torchx_serverless.factories import aws_batch, aws_sagemaker, txs_local_cwd
from torchx_serverless.workspace import TxsWorkspaceError, ship_directory, txs_command


#: aws_batch's run options for a job with a workspace: it reads its archive from S3 with its job role.
BATCH_CFG = {"queue": "q", "job_role_arn": "arn:aws:iam::123456789012:role/txs-job"}
BATCH_CLI_CFG = ",".join(f"{k}={v}" for k, v in BATCH_CFG.items())


def stored_archives(server: LocalServer) -> set:
    archives = Path(server.data_dir) / "workspaces" / "archives"
    return {p.name for p in archives.glob("*.tar.gz")} if archives.exists() else set()


def echo_app() -> specs.AppDef:
    role = specs.Role(
        name="echo", image="python:3.11", entrypoint="python", args=["train.py"],
        resource=specs.Resource(cpu=1, gpu=0, memMB=512),
    )
    return specs.AppDef(name="echo", roles=[role])


@pytest.fixture()
def env(server: LocalServer, monkeypatch: pytest.MonkeyPatch, workdir: Path) -> Path:
    monkeypatch.setenv("TXS_ENDPOINT", server.url)
    monkeypatch.setenv("TXS_LOCAL_TOKEN_FILE", server.token_file)
    monkeypatch.setenv("TXS_CLI", txs_cli())
    monkeypatch.setenv("XDG_CACHE_HOME", str(workdir.parent / "cache"))
    monkeypatch.chdir(workdir)
    return workdir


def test_the_image_schedulers_take_torchx_workspaces_and_txs_local_cwd_does_not() -> None:
    assert isinstance(aws_batch("s"), WorkspaceMixin)
    assert isinstance(aws_sagemaker("s"), WorkspaceMixin)
    # TorchX's runner gives a WorkspaceMixin the current directory by default; local_cwd jobs run there.
    assert not isinstance(txs_local_cwd("s"), WorkspaceMixin)


def test_a_dryrun_with_a_workspace_uploads_it_once_and_names_it_in_the_request(
    env: Path, server: LocalServer, capsys: pytest.CaptureFixture
) -> None:
    code = env / "code"
    code.mkdir()
    (code / "train.py").write_text("print('edited')\n")
    with get_runner() as runner:
        first = runner.dryrun(echo_app(), "aws_batch", cfg=BATCH_CFG, workspace=str(code))
        sha256 = first.request.body["workspace"]["sha256"]
        assert f"{sha256}.tar.gz" in stored_archives(server)
        # The run replays the dry run's body (the same archive); the role's image is left as it is.
        assert first.request.body["app"]["roles"][0]["image"] == "python:3.11"
        said = capsys.readouterr().err
        assert f"workspace: packing {code}" in said and f"uploaded workspace {sha256}" in said

        again = runner.dryrun(echo_app(), "aws_batch", cfg=BATCH_CFG, workspace=str(code))
        assert again.request.body["workspace"]["sha256"] == sha256
        assert "uploaded workspace" not in capsys.readouterr().err

        (code / "train.py").write_text("print('edited again')\n")
        second = runner.dryrun(echo_app(), "aws_batch", cfg=BATCH_CFG, workspace=str(code))
        assert second.request.body["workspace"]["sha256"] != sha256


def test_a_sha256_workspace_names_a_stored_archive_without_running_txs(
    env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TXS_CLI", str(env / "no-such-txs"))
    sha256 = "ab" * 32
    with get_runner() as runner:
        info = runner.dryrun(echo_app(), "aws_batch", cfg=BATCH_CFG, workspace=f"sha256:{sha256}")
    assert info.request.body["workspace"] == {"sha256": sha256}


def test_no_workspace_sends_none_and_never_runs_txs(env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TXS_CLI", str(env / "no-such-txs"))
    with get_runner() as runner:
        info = runner.dryrun(echo_app(), "aws_batch", cfg=BATCH_CFG, workspace=None)
    assert "workspace" not in info.request.body


def test_roles_with_different_workspaces_are_refused(env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = echo_app()
    other = specs.Role(name="other", image="python:3.11", entrypoint="true", resource=specs.Resource(1, 0, 64))
    for role, name in [(app.roles[0], "a"), (other, "b")]:
        (env / name).mkdir()
        role.workspace = specs.Workspace.from_str(str(env / name))
    app.roles.append(other)
    scheduler = aws_batch("torchx")
    with pytest.raises(TxsWorkspaceError, match="have different workspaces"):
        scheduler.submit_dryrun(app, {"queue": "q"})
    # Refused before anything is packed: the txs command is never run.
    monkeypatch.setenv("TXS_CLI", str(env / "no-such-txs"))
    with pytest.raises(TxsWorkspaceError, match="have different workspaces"):
        scheduler.build_workspaces(app.roles, {"queue": "q"})


def test_a_missing_txs_is_an_error_naming_how_to_install_it_or_run_without_a_workspace(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("TXS_CLI", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(TxsWorkspaceError) as raised:
        txs_command()
    assert "npm install -g torchx-serverless" in str(raised.value)
    assert '--workspace ""' in str(raised.value)
    monkeypatch.setenv("TXS_CLI", str(tmp_path / "nowhere" / "txs"))
    with pytest.raises(TxsWorkspaceError, match="cannot run"):
        ship_directory(str(tmp_path), "http://127.0.0.1:1")


def test_a_directory_txs_refuses_is_an_error_with_txs_words(env: Path, server: LocalServer) -> None:
    (env / "leak").symlink_to("/etc/passwd")
    with pytest.raises(TxsWorkspaceError) as raised:
        ship_directory(str(env), server.url)
    assert "symlink leak points outside the workspace" in str(raised.value)


def test_torchx_run_ships_the_current_directory_by_default_and_not_with_an_empty_workspace(
    torchx: Torchx, workdir: Path
) -> None:
    (workdir / "train.py").write_text("print('from the workspace')\n")
    before = stored_archives(torchx.server)
    run = torchx("run", "--dryrun", "-s", "aws_batch", "-cfg", BATCH_CLI_CFG, "utils.echo")
    assert f"workspace: packing {workdir}" in run.stderr
    assert len(stored_archives(torchx.server) - before) == 1

    torchx.extra_env = {"TXS_CLI": str(workdir / "no-such-txs")}
    off = torchx("run", "--dryrun", "--workspace", "", "-s", "aws_batch", "-cfg", BATCH_CLI_CFG, "utils.echo")
    assert "workspace: packing" not in off.stderr
    assert "=== SCHEDULER REQUEST ===" in off.stdout


def test_torchx_run_without_txs_fails_and_says_how_to_go_on(torchx: Torchx, tmp_path: Path) -> None:
    empty = tmp_path / "empty-path"
    empty.mkdir()
    torchx.extra_env = {"TXS_CLI": "", "PATH": str(empty)}
    run = torchx("run", "--dryrun", "-s", "aws_batch", "-cfg", BATCH_CLI_CFG, "utils.echo", check=False)
    assert run.returncode != 0
    assert "npm install -g torchx-serverless" in run.stderr
    assert "=== SCHEDULER REQUEST ===" not in run.stdout


def test_the_txs_command_line_names_the_scheduler_the_workspace_is_for(
    env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    argv_file = env.parent / "txs-argv"
    recorder = env.parent / "txs-recorder"
    recorder.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > {shlex.quote(str(argv_file))}\nexec {txs_cli()} "$@"\n')
    recorder.chmod(0o755)
    monkeypatch.setenv("TXS_CLI", str(recorder))
    (env / "train.py").write_text("print(1)\n")
    with get_runner() as runner:
        runner.dryrun(echo_app(), "aws_batch", cfg=BATCH_CFG, workspace=str(env))
    argv = argv_file.read_text().splitlines()
    assert argv[0] == "workspace"
    assert argv[argv.index("--scheduler") + 1] == "aws_batch"
    assert argv.index("--scheduler") < argv.index("--")


def test_a_workspace_the_service_refuses_is_refused_before_upload_and_says_how_to_run_without_one_in_torchx(
    bucketless_server: LocalServer, workdir: Path
) -> None:
    # This local server has no workspace bucket, and aws_batch jobs fetch their workspace from S3.
    (workdir / "train.py").write_text("print(1)\n")
    run = Torchx(bucketless_server, workdir)("run", "-s", "aws_batch", "-cfg", BATCH_CLI_CFG, "utils.echo", check=False)
    assert run.returncode != 0
    assert "TxsWorkspaceError" in run.stderr
    assert "this local server has no workspace bucket" in run.stderr
    assert 'torchx run --workspace "" runs without a workspace' in run.stderr
    # Refused at the offer, which names aws_batch: nothing was uploaded.
    assert stored_archives(bucketless_server) == set()
