"""Fixtures: a local torchx-serverless server (the repository's `npm start`, on a free port, records in
memory) and a way to run TorchX's own CLI against it.

Environment (set by python/run-tests.sh):
  TXS_PLUGIN_SITE   directory the plugin was pip-installed into (--target)
  TXS_VENDOR_DIR    the TorchX sources (default: ../shared/vendor beside the repository)
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, Iterator, List, Optional

import pytest

REPO = Path(__file__).resolve().parents[2]
VENDOR = Path(os.environ.get("TXS_VENDOR_DIR", REPO.parent / "shared" / "vendor")).resolve()
PLUGIN_SITE = os.environ.get("TXS_PLUGIN_SITE", "")
NEWEST = VENDOR / "torchx"
OLD = VENDOR / "torchx-b72ba03"


def pythonpath(torchx_dir: Path) -> str:
    """PYTHONPATH with the installed plugin and the given TorchX sources."""
    return os.pathsep.join(p for p in [PLUGIN_SITE, str(torchx_dir), str(VENDOR / "docstring_parser")] if p)


class LocalServer:
    def __init__(self, url: str, process: subprocess.Popen, data_dir: str, token_file: str) -> None:
        self.url = url
        self.process = process
        self.data_dir = data_dir
        # Where the server writes its access token (once it has one) and clients read it.
        self.token_file = token_file


#: The workspace bucket the test server names. Dry runs and offers only name it; S3 is pointed at a closed
#: loopback port, so a request to it would fail here instead of leaving the machine.
TEST_BUCKET = {
    "TXS_WORKSPACE_BUCKET": "txs-plugin-test-workspaces",
    "AWS_ENDPOINT_URL_S3": "http://127.0.0.1:9",
    "AWS_REGION": "us-east-1",
}


@pytest.fixture(scope="session")
def server() -> Iterator[LocalServer]:
    """The local server with a workspace bucket (named only, see TEST_BUCKET), so an ``aws_batch`` dry run
    can name a workspace, as it would against a server started with ``TXS_WORKSPACE_BUCKET``."""
    yield from local_server(TEST_BUCKET)


@pytest.fixture(scope="session")
def bucketless_server() -> Iterator[LocalServer]:
    """The local server without a workspace bucket: it refuses a workspace for ``aws_batch``'s jobs."""
    yield from local_server({})


def local_server(extra_env: Dict[str, str]) -> Iterator[LocalServer]:
    """`npm start` on 127.0.0.1 with a free port (PORT=0), records in memory, logs in a temp dir."""
    data_dir = tempfile.mkdtemp(prefix="txs-plugin-data-")
    token_file = os.path.join(data_dir, "local.token")
    inherited = {k: v for k, v in os.environ.items() if k not in ("TXS_WORKSPACE_BUCKET", "AWS_ENDPOINT_URL_S3")}
    env = {
        **inherited,
        **extra_env,
        "PORT": "0",
        "TXS_IN_MEMORY": "1",
        "TXS_DATA_DIR": data_dir,
        "TXS_LOCAL_TOKEN_FILE": token_file,
    }
    process = subprocess.Popen(
        [str(REPO / "node_modules" / ".bin" / "tsx"), "lib/local/main.ts"],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    url: Optional[str] = None
    seen: List[str] = []
    assert process.stdout is not None
    for line in process.stdout:
        seen.append(line)
        match = re.search(r"listening on (http://127\.0\.0\.1:\d+)", line)
        if match:
            url = match.group(1)
            break
    if url is None:
        process.kill()
        raise RuntimeError("the local server did not start:\n" + "".join(seen))
    try:
        yield LocalServer(url, process, data_dir, token_file)
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        shutil.rmtree(data_dir, ignore_errors=True)


@pytest.fixture()
def workdir(tmp_path: Path) -> Path:
    """An empty working directory for TorchX (no torchx/ folder, no .torchxconfig)."""
    d = tmp_path / "work"
    d.mkdir()
    return d


def txs_cli() -> str:
    """The repository's `txs` command line (what the plugin runs to ship a workspace), for TXS_CLI."""
    node = shutil.which("node")
    assert node, "node is needed to run txs"
    return f"{shlex.quote(node)} {shlex.quote(str(REPO / 'bin' / 'txs.js'))}"


def cli_env(server: LocalServer, home: Path, torchx_dir: Path = NEWEST, **extra: str) -> Dict[str, str]:
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("TORCHX", "TXS_", "AWS_")) and k != "PYTHONPATH"
    }
    env.update(
        {
            "PYTHONPATH": pythonpath(torchx_dir),
            "TXS_CLI": txs_cli(),
            "TXS_ENDPOINT": server.url,
            "HOME": str(home),
            "TXS_LOCAL_TOKEN_FILE": server.token_file,
            "AWS_DEFAULT_REGION": "us-east-1",
        }
    )
    env.update(extra)
    return env


class Torchx:
    """Runs `python3 -m torchx.cli.main` (TorchX's CLI) in a working directory against the server."""

    def __init__(self, server: LocalServer, cwd: Path, torchx_dir: Path = NEWEST) -> None:
        self.server = server
        self.cwd = cwd
        self.torchx_dir = torchx_dir
        self.extra_env: Dict[str, str] = {}

    def __call__(self, *args: str, check: bool = True, timeout: float = 120) -> subprocess.CompletedProcess:
        result = subprocess.run(
            [sys.executable, "-m", "torchx.cli.main", *args],
            cwd=self.cwd,
            env=cli_env(self.server, self.cwd, self.torchx_dir, **self.extra_env),
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if check and result.returncode != 0:
            raise AssertionError(
                f"torchx {' '.join(args)} exited {result.returncode}\n--- stdout\n{result.stdout}\n--- stderr\n{result.stderr}"
            )
        return result

    def wait_for_state(self, handle: str, states: List[str], timeout: float = 60) -> str:
        """Polls `torchx status` until the app is in one of ``states`` (a deadline guards a hang, not speed)."""
        deadline = time.monotonic() + timeout
        out = ""
        while time.monotonic() < deadline:
            out = self("status", handle).stdout
            if any(re.search(rf"State:\s*{s}\b", out) for s in states):
                return out
            time.sleep(0.5)
        raise AssertionError(f"{handle} never reached {states}; last status:\n{out}")


@pytest.fixture()
def torchx(server: LocalServer, workdir: Path) -> Torchx:
    return Torchx(server, workdir)


@pytest.fixture()
def torchx_old(server: LocalServer, workdir: Path) -> Torchx:
    """TorchX 0.8.0dev0 (b72ba03): schedulers from entry points only."""
    return Torchx(server, workdir, OLD)


HANDLE = re.compile(r"^(txs_local_cwd|aws_batch|aws_sagemaker)://\S+/\S+$", re.MULTILINE)


def handle_in(output: str) -> str:
    match = HANDLE.search(output)
    assert match, f"no app handle in output:\n{output}"
    return match.group(0)
