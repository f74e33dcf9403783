"""TorchX's Scheduler API over the torchx-serverless HTTPS API.

``TxsScheduler`` is one class for every service scheduler: it is created with the name TorchX knows it by
(``aws_batch``, ``aws_sagemaker``, ``txs_local_cwd``) and the service scheduler it drives (``aws_batch``,
``aws_sagemaker``, ``local_cwd``). Dry runs are the service's (``POST /v1/dryrun``), submissions replay the
dry run's request with an Idempotency-Key, run options are the service's (``GET /v1/schedulers``).
"""

from __future__ import annotations

import configparser
import getpass
import inspect
import logging
import os
import re
import sys
import time
import urllib.parse
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple, Type

from torchx import specs
from torchx.schedulers.api import DescribeAppResponse, ListAppResponse, Scheduler, Stream
from torchx.specs import AppDef, AppDryRunInfo, runopts
from torchx.workspace import WorkspaceMixin

from torchx_serverless.appdef import app_from_json, app_state, app_to_json, roles_statuses_from_json
from torchx_serverless.client import (
    DEFAULT_ENDPOINT,
    TxsClient,
    TxsConnectionError,
    TxsError,
    TxsRequestError,
    validate_endpoint,
)
from torchx_serverless.workspace import (
    TORCHX_WITHOUT_WORKSPACE,
    ShippedWorkspace,
    TxsWorkspaceError,
    ship_workspace,
)

logger: logging.Logger = logging.getLogger(__name__)

#: Run option (added to the service's) naming the API endpoint.
ENDPOINT_OPT = "endpoint"

#: Seconds between polls while following a running app's log.
TAIL_POLL_SECONDS = 1.0

#: Longest a describe made by TorchX's ``Runner.wait`` is held by the server for a change (seconds).
WAIT_SECONDS = 20

_TYPES: Dict[str, Type[Any]] = {
    "str": str,
    "int": int,
    "float": float,
    "bool": bool,
    "list[str]": List[str],
    "dict[str,str]": Dict[str, str],
    "list[dict[str,str]]": List[Dict[str, str]],
}

# runopts fetched per endpoint and service scheduler, once per process.
_RUNOPTS_CACHE: Dict[Tuple[str, str], List[Mapping[str, Any]]] = {}


@dataclass
class TxsDryRun:
    """The request of a torchx-serverless dry run: what ``schedule`` submits, and what the service said.

    Attributes:
        endpoint: API base URL the dry run was made against (and the app is submitted to)
        body: the RunRequest (``{scheduler, session, cfg, app}``) sent to the API
        native: the exact native request (Batch ``{registerJobDefinition, submitJob}``, SageMaker
            ``{createTrainingJob}``, local_cwd ``{replicas}``)
        text: the service's readable rendering of ``native``
        idempotency_key: sent with the submission so that a retried ``schedule`` submits once
    """

    endpoint: str
    body: Dict[str, Any]
    native: Dict[str, Any]
    text: str
    idempotency_key: str = field(default_factory=lambda: uuid.uuid4().hex)

    def __str__(self) -> str:
        return self.text


def _torchxconfig_endpoint(section: str) -> Optional[Tuple[str, str]]:
    """``endpoint`` from the ``[section]`` of the .torchxconfig files TorchX reads (first found wins)."""
    try:
        from torchx.runner.config import find_configs

        files = find_configs()
    except Exception:  # a broken TORCHXCONFIG is reported by TorchX itself
        return None
    for path in files:
        parser = configparser.ConfigParser()
        try:
            parser.read(path)
        except configparser.Error:
            continue
        if parser.has_option(section, ENDPOINT_OPT):
            value = parser.get(section, ENDPOINT_OPT).strip()
            if value:
                return value, f"[{section}] in {path}"
    return None


class TxsScheduler(Scheduler):
    """A TorchX scheduler whose every call is a torchx-serverless API request.

    Args:
        backend: the name TorchX knows this scheduler by (the scheme of its app handles)
        session_name: TorchX's session name (sent as the app's session)
        service_scheduler: the service's scheduler name
        endpoint: API base URL; default: ``TXS_ENDPOINT``, then ``endpoint`` under ``[backend]`` in
            .torchxconfig, then the local server ``http://127.0.0.1:8080``
    """

    def __init__(
        self,
        backend: str,
        session_name: str,
        service_scheduler: str,
        endpoint: Optional[str] = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(backend, session_name)
        self.service_scheduler = service_scheduler
        self._endpoint_arg = endpoint
        self._clients: Dict[str, TxsClient] = {}
        # Apps this instance submitted with an `endpoint` run option: later calls (TorchX's --wait,
        # status, logs) carry no run options but must reach the same API.
        self._app_endpoints: Dict[str, str] = {}
        # The revision of each app's last describe: TorchX's wait loop asks for the next one (a long poll).
        self._revisions: Dict[str, str] = {}

    # ── endpoint and client ────────────────────────────────────────────────

    def endpoint(self, cfg: Optional[Mapping[str, Any]] = None) -> str:
        """The API base URL: run option ``endpoint``, else TXS_ENDPOINT, else .torchxconfig, else local."""
        candidates: List[Tuple[Optional[str], str]] = [
            ((cfg or {}).get(ENDPOINT_OPT), "run option `endpoint`"),
            (self._endpoint_arg, "scheduler parameter `endpoint`"),
            (os.environ.get("TXS_ENDPOINT"), "TXS_ENDPOINT"),
        ]
        for value, source in candidates:
            if value:
                return validate_endpoint(str(value), source)
        from_file = _torchxconfig_endpoint(self.backend)
        if from_file:
            return validate_endpoint(*from_file)
        return DEFAULT_ENDPOINT

    def client(self, cfg: Optional[Mapping[str, Any]] = None) -> TxsClient:
        """The client of :py:meth:`endpoint` (one per endpoint)."""
        url = self.endpoint(cfg)
        if url not in self._clients:
            self._clients[url] = TxsClient(url)
        return self._clients[url]

    def _app_cfg(self, app_id: str) -> Optional[Dict[str, Any]]:
        endpoint = self._app_endpoints.get(app_id)
        return {ENDPOINT_OPT: endpoint} if endpoint else None

    def _app_path(self, app_id: str, suffix: str = "") -> str:
        return (
            f"/v1/apps/{urllib.parse.quote(self.service_scheduler, safe='')}/"
            f"{urllib.parse.quote(app_id, safe='')}{suffix}"
        )

    # ── run options ────────────────────────────────────────────────────────

    def _service_runopts(self, cfg: Optional[Mapping[str, Any]] = None) -> List[Mapping[str, Any]]:
        client = self.client(cfg)
        key = (client.endpoint, self.service_scheduler)
        if key not in _RUNOPTS_CACHE:
            payload = client.request("GET", "/v1/schedulers")
            for entry in payload.get("schedulers", []):
                _RUNOPTS_CACHE[(client.endpoint, entry.get("name"))] = list(entry.get("runOpts") or [])
            if key not in _RUNOPTS_CACHE:
                names = ", ".join(str(s.get("name")) for s in payload.get("schedulers", []))
                raise specs.UnknownSchedulerException(self.service_scheduler) from TxsError(
                    f"the API at {client.endpoint} has no scheduler `{self.service_scheduler}` (it has: {names})"
                )
        return _RUNOPTS_CACHE[key]

    def _run_opts(self) -> runopts:
        opts = runopts()
        try:
            service_opts = self._service_runopts()
        except (TxsConnectionError, specs.UnknownSchedulerException) as error:
            # Listing every scheduler's options (`torchx runopts`) must not fail because one API is down
            # or does not enable this scheduler; submitting still reports the error.
            logger.warning("%s; run options of `%s` are unknown", error.__cause__ or error, self.backend)
            service_opts = []
        for opt in service_opts:
            type_name = str(opt.get("type", "str")).replace(" ", "").lower()
            default = None if opt.get("required") else opt.get("default")
            if opt.get("name") == "user" and type_name == "str" and not opt.get("required"):
                # TorchX tags jobs with the user running TorchX; the service's default is its own OS user.
                default = _local_user() or default
            type_ = _TYPES.get(type_name, str)
            if default is not None and not runopts.is_type(default, type_):
                # A default of another type than the option declares is dropped: TorchX would raise.
                default = None
            opts.add(
                str(opt["name"]),
                type_=type_,
                help=str(opt.get("help", "")),
                default=default,
                required=bool(opt.get("required")),
            )
        opts.add(
            ENDPOINT_OPT,
            type_=str,
            default=None,
            help="torchx-serverless API base URL, e.g. https://abc123.execute-api.us-east-1.amazonaws.com/prod"
            " (default: TXS_ENDPOINT, else http://127.0.0.1:8080, the local server). Requests are SigV4-signed"
            " with your AWS credentials unless the endpoint is loopback.",
        )
        return opts

    def _declares(self, name: str, cfg: Mapping[str, Any]) -> bool:
        return any(opt.get("name") == name for opt in self._service_runopts(cfg))

    def _service_cfg(self, cfg: Mapping[str, Any]) -> Dict[str, Any]:
        out = {k: v for k, v in cfg.items() if k != ENDPOINT_OPT and v is not None}
        if self.service_scheduler != "local_cwd" and "env" not in out:
            return out
        # The caller's directory and environment (it may hold credentials) go only to a server proven to
        # run as the caller: the local server reached through its own socket. Never over TCP, never off
        # this machine; an explicit `env` for any other server is refused before anything is sent.
        client = self.client(cfg)
        socket_path, why = client.own_server()
        if socket_path is None:
            if "env" in out:
                raise TxsRequestError(
                    f"run option `env` is sent only to your own local server, and {client.endpoint} is not"
                    f" proven to be yours: {why}; run against the local server you started (npm start) as this"
                    " user, or remove `env` from the run options",
                    code="EnvNotSent",
                )
            if self.service_scheduler == "local_cwd":
                logger.warning(
                    "%s is not proven to be your own local server (%s): your environment and working"
                    " directory are not sent; the job runs with the server's",
                    client.endpoint,
                    why,
                )
            return out
        if self.service_scheduler == "local_cwd":
            # The server runs the replicas; give them the caller's directory and environment as
            # TorchX's local_cwd does, where the server accepts them.
            if "cwd" not in out and self._declares("cwd", cfg):
                out["cwd"] = os.getcwd()
            if "env" not in out and self._declares("env", cfg):
                out["env"] = dict(os.environ)
        return out

    def _validate(self, app: AppDef, scheduler: str, cfg: Any) -> None:
        # local_cwd runs roles without a resource, as TorchX's local_cwd does; the AWS schedulers keep
        # TorchX's check (a role needs a resource).
        if self.service_scheduler != "local_cwd":
            super()._validate(app, scheduler, cfg)

    # ── errors ─────────────────────────────────────────────────────────────

    def _raise(self, error: TxsError, cfg: Optional[Mapping[str, Any]] = None) -> None:
        cfg_paths = [
            str(d.get("path", ""))
            for d in error.details
            if isinstance(d, Mapping) and (str(d.get("path", "")).startswith("cfg.") or d.get("path") == "cfg")
        ]
        if error.code == "InvalidRunConfig" or cfg_paths:
            # TorchX users know invalid run options as InvalidRunConfigException naming the option.
            path = cfg_paths[0] if cfg_paths else ""
            exc = specs.InvalidRunConfigException.__new__(specs.InvalidRunConfigException)
            Exception.__init__(exc, error.message)
            exc.cfg_key = str(path).removeprefix("cfg.")  # type: ignore[attr-defined]
            raise exc from None
        if error.code == "UnknownScheduler":
            raise specs.UnknownSchedulerException(self.service_scheduler) from error
        if any(str(d.get("path", "")).startswith("workspace") for d in error.details if isinstance(d, Mapping)):
            # The service's advice names txs; a TorchX user turns the workspace off with TorchX's flag.
            raise TxsWorkspaceError(
                f"{error.message} {TORCHX_WITHOUT_WORKSPACE}",
                status=error.status,
                code=error.code,
                details=error.details,
                request_id=error.request_id,
            ) from None
        raise error

    def _call(self, method: str, path: str, cfg: Optional[Mapping[str, Any]] = None, **kwargs: Any) -> Any:
        try:
            return self.client(cfg).request(method, path, **kwargs)
        except TxsError as error:
            if isinstance(error, TxsConnectionError) or error.code == "UnknownApp":
                raise
            self._raise(error, cfg)

    # ── submit ─────────────────────────────────────────────────────────────

    def _workspace_ref(self, app: AppDef, cfg: Mapping[str, Any]) -> Optional[Dict[str, str]]:
        """The run request's ``workspace``: none here (``txs_local_cwd`` runs in the caller's directory, as
        TorchX's ``local_cwd``, which has no workspace either)."""
        return None

    def _submit_dryrun(self, app: AppDef, cfg: Mapping[str, Any]) -> AppDryRunInfo[TxsDryRun]:
        body = {
            "scheduler": self.service_scheduler,
            "session": self.session_name,
            "cfg": self._service_cfg(cfg),
            "app": app_to_json(app),
        }
        workspace = self._workspace_ref(app, cfg)
        if workspace is not None:
            body["workspace"] = workspace
        response = self._call("POST", "/v1/dryrun", cfg, body=body)
        request = TxsDryRun(
            endpoint=self.client(cfg).endpoint,
            body=body,
            native=response.get("request", {}),
            text=str(response.get("text", "")),
        )
        return AppDryRunInfo(request, lambda r: r.text)

    def schedule(self, dryrun_info: AppDryRunInfo[TxsDryRun]) -> str:
        """Submits the dry run's app; the same ``dryrun_info`` never submits twice."""
        request: TxsDryRun = dryrun_info.request
        cfg = {ENDPOINT_OPT: request.endpoint}
        response = self._call(
            "POST", "/v1/apps", cfg, body=request.body, headers={"Idempotency-Key": request.idempotency_key}
        )
        app_id = str(response["appId"])
        self._app_endpoints[app_id] = request.endpoint
        return app_id

    # ── describe / list ────────────────────────────────────────────────────

    def describe(self, app_id: str) -> Optional[DescribeAppResponse]:
        """The app's status from the service.

        Called by TorchX's ``Runner.wait`` (``torchx run --wait``), it is a long poll: the service answers
        as soon as the app changes since the previous describe (within milliseconds on the local server),
        or after ``WAIT_SECONDS`` unchanged, so a change is not left waiting for TorchX's next poll. A
        server that does not hold requests (the deployed API) answers at once, and TorchX's own
        ``wait_interval`` paces the polls. Any other describe (``torchx status``) answers at once.
        """
        seen = self._revisions.get(app_id)
        query = {"waitFor": seen, "waitSeconds": WAIT_SECONDS} if seen and _inside_runner_wait() else None
        try:
            record = self._call("GET", self._app_path(app_id), self._app_cfg(app_id), query=query)
        except TxsError as error:
            if error.code == "UnknownApp":
                return None
            raise
        revision = record.get("revision")
        if isinstance(revision, str) and revision:
            self._revisions[app_id] = revision
        status = record.get("status") or {}
        app = record.get("app")
        return DescribeAppResponse(
            app_id=str(record.get("appId", app_id)),
            state=app_state(status.get("state")),
            num_restarts=int(status.get("numRestarts", 0)),
            msg=str(status.get("msg") or record.get("reason") or ""),
            structured_error_msg=str(status.get("structuredErrorMsg") or specs.NONE),
            ui_url=status.get("uiUrl"),
            roles_statuses=roles_statuses_from_json(status.get("roles") or []),
            roles=app_from_json(app).roles if isinstance(app, Mapping) else [],
        )

    def list(self, cfg: Optional[Mapping[str, Any]] = None) -> List[ListAppResponse]:
        """Every app of this scheduler the caller owns, newest first (all pages)."""
        apps: List[ListAppResponse] = []
        token: Optional[str] = None
        while True:
            page = self._call(
                "GET",
                "/v1/apps",
                cfg,
                query={"scheduler": self.service_scheduler, "limit": 100, "nextToken": token},
            )
            for summary in page.get("apps", []):
                apps.append(
                    ListAppResponse(
                        app_id=str(summary["appId"]),
                        state=app_state(summary.get("state")),
                        app_handle=f"{self.backend}://{summary.get('session', self.session_name)}/{summary['appId']}",
                    )
                )
            token = page.get("nextToken")
            if not token:
                return apps

    # ── cancel / delete ────────────────────────────────────────────────────

    def _cancel_existing(self, app_id: str) -> None:
        self._call("POST", self._app_path(app_id, "/cancel"), self._app_cfg(app_id))

    def delete(self, app_id: str) -> None:
        """Deletes the app from the scheduler's data plane (Batch: its job definition), cancelling it if live."""
        if self.exists(app_id):
            self._delete_existing(app_id)

    def _delete_existing(self, app_id: str) -> None:
        self._call("DELETE", self._app_path(app_id), self._app_cfg(app_id))

    # ── logs ───────────────────────────────────────────────────────────────

    def log_iter(
        self,
        app_id: str,
        role_name: str,
        k: int = 0,
        regex: Optional[str] = None,
        since: Optional[datetime] = None,
        until: Optional[datetime] = None,
        should_tail: bool = False,
        streams: Optional[Stream] = None,
    ) -> Iterable[str]:
        """Lines (each ending in ``\\n``) of replica ``k`` of ``role_name``; follows the app with ``should_tail``.

        ``regex`` is applied here with Python's ``re.search``, as TorchX does, so patterns mean what they
        mean in TorchX.
        """
        pattern = re.compile(regex) if regex else None
        query: Dict[str, Any] = {
            "role": role_name,
            "replica": k,
            "since": _iso(since),
            "until": _iso(until),
            "streams": Stream(streams).value if streams is not None else None,
            "limit": 1000,
        }
        # Fail before the first line (as TorchX's schedulers do) when the app, role or replica is unknown.
        first = self._call("GET", self._app_path(app_id, "/logs"), self._app_cfg(app_id), query=query)
        return self._log_lines(app_id, query, first, pattern, should_tail)

    def _log_lines(
        self,
        app_id: str,
        query: Dict[str, Any],
        page: Mapping[str, Any],
        pattern: Optional[re.Pattern],
        should_tail: bool,
    ) -> Iterable[str]:
        while True:
            for line in page.get("lines", []):
                if pattern is None or pattern.search(line):
                    yield line + "\n"
            token = page.get("nextToken")
            if not token:
                return
            if page.get("caughtUp"):
                if not should_tail:
                    return
                time.sleep(TAIL_POLL_SECONDS)
            page = self._call(
                "GET", self._app_path(app_id, "/logs"), self._app_cfg(app_id), query={**query, "nextToken": token}
            )


class TxsWorkspaceScheduler(WorkspaceMixin[None], TxsScheduler):
    """A scheduler that runs images (``aws_batch``, ``aws_sagemaker``) and takes TorchX's workspace.

    TorchX's ``Runner`` gives role[0] the ``workspace`` of ``torchx run`` (the current directory unless
    ``--workspace`` says otherwise; ``--workspace ""`` for none) and calls ``build_workspaces``. There, instead
    of TorchX's Docker build and push, the ``txs`` command packs the directory and uploads the archive unless
    the service holds it (:py:func:`~torchx_serverless.workspace.ship_workspace`); the dry run and the run
    request name it (``workspace: {sha256}``), and the job unpacks it over the role's image and starts there.
    The role's image is left as it is.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # What build_workspaces shipped, per TorchX Workspace, until the dry run names it.
        self._shipped: Dict[Any, ShippedWorkspace] = {}

    def build_workspaces(self, roles: List[specs.Role], cfg: Mapping[str, Any]) -> None:
        """TorchX's ``build_workspaces``, refusing roles with different workspaces before anything is shipped."""
        _one_workspace(roles)
        super().build_workspaces(roles, cfg)

    def caching_build_workspace_and_update_role(
        self, role: specs.Role, cfg: Mapping[str, Any], build_cache: Dict[object, object]
    ) -> None:
        """Packs and uploads ``role.workspace`` (once per workspace in one ``build_workspaces`` call)."""
        workspace = getattr(role, "workspace", None)
        if not workspace:
            return
        key = ("torchx-serverless workspace", workspace)
        shipped = build_cache.get(key)
        if not isinstance(shipped, ShippedWorkspace):
            shipped = ship_workspace(workspace, self.client(cfg).endpoint, self.service_scheduler)
            build_cache[key] = shipped
        self._shipped[workspace] = shipped

    def _workspace_ref(self, app: AppDef, cfg: Mapping[str, Any]) -> Optional[Dict[str, str]]:
        """``{"sha256"}`` of the workspace of the app's roles; shipped now if ``build_workspaces`` was not called.

        Raises:
            TxsWorkspaceError: roles have different workspaces (a request carries one, for the whole app).
        """
        workspace = _one_workspace(app.roles)
        if workspace is None:
            return None
        shipped = self._shipped.pop(workspace, None) or ship_workspace(
            workspace, self.client(cfg).endpoint, self.service_scheduler
        )
        return {"sha256": shipped.sha256}


def _one_workspace(roles: Iterable[specs.Role]) -> Any:
    """The one workspace the roles have (None: none has one).

    Raises:
        TxsWorkspaceError: roles have different workspaces (a request carries one, for the whole app).
    """
    workspaces: List[Any] = []
    for role in roles:
        workspace = getattr(role, "workspace", None)
        if workspace and workspace not in workspaces:
            workspaces.append(workspace)
    if len(workspaces) > 1:
        raise TxsWorkspaceError(
            f"the roles have different workspaces ({'; '.join(map(str, workspaces))}), and a torchx-serverless"
            " app runs in one: give the roles the same workspace, or only role[0] (torchx run --workspace DIR)",
            code="InvalidWorkspace",
        )
    return workspaces[0] if workspaces else None


def _inside_runner_wait() -> bool:
    """Whether this call comes from TorchX's ``Runner.wait`` (the loop of ``torchx run --wait``).

    TorchX's Scheduler API has no "wait for a change" call: its wait loop describes, then sleeps. Only
    there may a describe be held by the server; a plain status must answer at once.
    """
    try:
        from torchx.runner.api import Runner
    except ImportError:  # pragma: no cover - TorchX without a Runner
        return False
    target = getattr(inspect.unwrap(Runner.wait), "__code__", None)
    frame = sys._getframe(1)
    for _ in range(16):
        if frame is None:
            return False
        if frame.f_code is target:
            return True
        frame = frame.f_back
    return False


def _local_user() -> Optional[str]:
    try:
        return getpass.getuser()
    except Exception:  # no login name in this environment
        return None


def _iso(value: Optional[datetime]) -> Optional[str]:
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.astimezone()  # a naive datetime is local time, as in TorchX
    return value.isoformat()
