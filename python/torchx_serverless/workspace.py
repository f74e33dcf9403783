"""TorchX's workspace (``torchx run --workspace``, by default the current directory) shipped to the service.

TorchX's own ``aws_batch`` built a Docker image of the workspace and pushed it. Here the ``txs`` command packs
the directory into the service's content-addressed archive and uploads it unless the service holds it
already (``txs workspace --json --scheduler NAME DIR``: the same packing and upload as ``txs run``); the run request then
names the archive by its SHA-256 (``workspace: {sha256}``) and the job unpacks it over the role's image.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from typing import Any, List, Optional

from torchx_serverless.client import TxsError

#: ``--workspace sha256:<hex>``: an archive the service holds, named by its SHA-256 (``txs run``'s spelling).
_STORED = re.compile(r"^sha256:([0-9a-f]{64})$")

#: Environment variable naming the ``txs`` command (a path, or a command line such as ``npx txs``).
TXS_CLI_ENV = "TXS_CLI"

#: TorchX's way to run without a workspace, added to a refusal whose advice names ``txs``'s own flag.
TORCHX_WITHOUT_WORKSPACE = '(with torchx: torchx run --workspace "" runs without a workspace)'

_INSTALL_HINT = (
    "install it with `npm install -g torchx-serverless` (Node.js 20 or newer), or set {env} to its path;"
    ' or run without a workspace: torchx run --workspace "" ...'
)


class TxsWorkspaceError(TxsError, RuntimeError):
    """The workspace could not be packed or uploaded: ``txs`` is missing, or it refused the directory."""


@dataclass(frozen=True)
class ShippedWorkspace:
    """A workspace archive the service holds.

    Attributes:
        sha256: the archive's SHA-256 (its name; the run request's ``workspace.sha256``)
        size: bytes of the archive (None for one named by ``sha256:<hex>``)
        file_count: regular files in it (None likewise)
        uploaded: whether this call sent it (False: the service held it already)
    """

    sha256: str
    size: Optional[int]
    file_count: Optional[int]
    uploaded: bool


def txs_command() -> List[str]:
    """The ``txs`` command line: ``TXS_CLI`` (split as a shell would), else ``txs`` on ``PATH``.

    Raises:
        TxsWorkspaceError: neither names a command, with how to install ``txs`` or run without a workspace.
    """
    configured = os.environ.get(TXS_CLI_ENV, "").strip()
    if configured:
        return shlex.split(configured)
    found = shutil.which("txs")
    if found:
        return [found]
    raise TxsWorkspaceError(
        "shipping the workspace needs the `txs` command, and it is not on PATH; "
        + _INSTALL_HINT.format(env=TXS_CLI_ENV),
        code="TxsNotFound",
    )


def ship_directory(
    directory: str, endpoint: str, scheduler: Optional[str] = None, command: Optional[List[str]] = None
) -> ShippedWorkspace:
    """Packs ``directory`` and uploads it to the API at ``endpoint`` unless it holds the archive already.

    ``scheduler`` (the service's name of the run's scheduler) is passed as ``txs workspace --scheduler``, so
    a service that cannot ship the archive to that scheduler's jobs refuses it before anything is uploaded.

    ``txs``'s lines on stderr (which directory it packs, progress on a large tree, the upload) are passed on
    to this process's stderr as they come.

    Raises:
        TxsWorkspaceError: ``txs`` cannot be run, or refused the directory (missing, over the size limit,
            a symlink out of the tree, ...) or the upload; the message is ``txs``'s own.
    """
    named = [] if scheduler is None else ["--scheduler", scheduler]
    argv = [*(command or txs_command()), "workspace", "--json", "--endpoint", endpoint, *named, "--", directory]
    try:
        process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    except OSError as error:
        raise TxsWorkspaceError(
            f"cannot run `{argv[0]}` to ship the workspace ({error.strerror or error}); "
            + _INSTALL_HINT.format(env=TXS_CLI_ENV),
            code="TxsNotFound",
        ) from None
    said: List[str] = []
    assert process.stderr is not None and process.stdout is not None
    for line in process.stderr:
        said.append(line)
        sys.stderr.write(line)
    out = process.stdout.read()
    code = process.wait()
    if code != 0:
        words = "".join(said).strip() or f"exit status {code}"
        raise TxsWorkspaceError(
            f"cannot ship the workspace {directory}:\n{words}\n{TORCHX_WITHOUT_WORKSPACE}", code="WorkspaceRefused"
        )
    try:
        answer: Any = json.loads(out)
        return ShippedWorkspace(
            sha256=str(answer["sha256"]),
            size=int(answer["size"]),
            file_count=int(answer["fileCount"]),
            uploaded=bool(answer.get("uploaded")),
        )
    except (ValueError, KeyError, TypeError):
        raise TxsWorkspaceError(
            f"`{' '.join(argv[:-2])}` did not answer the workspace's summary as JSON (got {out[:200]!r});"
            " is it torchx-serverless's txs?",
            code="WorkspaceRefused",
        ) from None


def ship_workspace(workspace: Any, endpoint: str, scheduler: Optional[str] = None) -> ShippedWorkspace:
    """Ships a TorchX ``Workspace``: one directory as it is, or several projects (or one mapped to a
    sub-directory) merged into a temporary directory first, as TorchX's own ``WorkspaceMixin`` does.

    ``--workspace sha256:<hex>`` (as in ``txs run``) names an archive the service holds already, e.g. an
    earlier run's: nothing is packed or uploaded, and a service that no longer holds it refuses the run.
    ``scheduler`` is passed on to :py:func:`ship_directory`.
    """
    if workspace.is_unmapped_single_project():
        stored = _STORED.match(str(workspace))
        if stored:
            return ShippedWorkspace(sha256=stored.group(1), size=None, file_count=None, uploaded=False)
        return ship_directory(os.path.abspath(os.path.expanduser(str(workspace))), endpoint, scheduler)
    with tempfile.TemporaryDirectory(prefix="txs-workspace-") as merged:
        workspace.merge_into(merged)
        return ship_directory(merged, endpoint, scheduler)
