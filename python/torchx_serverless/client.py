"""HTTP client of the torchx-serverless API (docs/http-api.md).

One duty: send a request to the configured endpoint and return its JSON, or raise an exception whose
message is the service's own (never an HTTP dump). Requests to a deployed stack are SigV4-signed for
``execute-api`` with the standard AWS credential chain (botocore). Requests to a loopback endpoint are not
signed and go through the local server's own Unix socket (``<port>.sock`` beside its token file, in a
directory only its OS user can enter) when ``os.lstat`` proves it the caller's; otherwise over TCP. The local
server's token is never sent: over TCP, ``localhost`` may be another user's listener on ``[::1]``.
"""

from __future__ import annotations

import functools
import http.client
import ipaddress
import json
import os
import re
import socket
import stat
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence, Tuple, Union

#: The endpoint used when none is configured: the local server (``npm start``).
DEFAULT_ENDPOINT = "http://127.0.0.1:8080"

_EXECUTE_API_HOST = re.compile(r"^[a-z0-9]+\.execute-api\.([a-z0-9-]+)\.amazonaws\.com$", re.IGNORECASE)

# Retried: what the API marks `error.retryable` (throttling, a busy store, a same-key submission still in
# flight), and, in answers without that field (API Gateway's own throttling and timeouts), these statuses.
# A 503 the API marks not retryable (BackendNotConfigured: the server has no AWS configuration) fails at
# once: each retried submission would only leave one more FAILED record. Requests that are not idempotent by
# nature (POST /v1/apps) always carry an Idempotency-Key, so retrying them is safe.
_GATEWAY_RETRY_STATUSES = {429, 502, 503, 504}
_MAX_ATTEMPTS = 4

Query = Union[Mapping[str, Any], Sequence[Tuple[str, Any]]]


class TxsError(Exception):
    """An error answered by the torchx-serverless API.

    Attributes:
        status: HTTP status (0 when the API was not reached)
        code: the API's error code, e.g. ``InvalidRunConfig`` or ``UnknownApp``
        details: ``[{"path", "message"}]`` naming the fields at fault
        request_id: the API's request id, for support
        retryable: whether the same request may succeed if sent again (the API's ``error.retryable``)
    """

    def __init__(
        self,
        message: str,
        *,
        status: int = 0,
        code: str = "",
        details: Optional[list] = None,
        request_id: Optional[str] = None,
        retryable: bool = False,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code
        self.details = details or []
        self.request_id = request_id
        self.retryable = retryable


class TxsRequestError(TxsError, ValueError):
    """The API refused the request as wrong (4xx): the message says what to fix, ``details`` where."""


class TxsConnectionError(TxsError, ConnectionError):
    """The API could not be reached (nothing listening, DNS, TLS, timeout)."""


def is_loopback(url: str) -> bool:
    """Whether ``url`` points at this machine (``localhost``, ``127.0.0.0/8``, ``::1``)."""
    host = urllib.parse.urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def local_token_file(url: str) -> Path:
    """Where the local server listening at ``url`` writes its access token.

    ``TXS_LOCAL_TOKEN_FILE`` overrides ``~/.txs/local/<port>.token``.
    """
    override = os.environ.get("TXS_LOCAL_TOKEN_FILE")
    if override:
        return Path(override)
    parts = urllib.parse.urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return Path.home() / ".txs" / "local" / f"{port}.token"


#: Longest socket path (bytes) every platform accepts (``sun_path`` is 108 bytes on Linux, 104 on macOS).
MAX_SOCKET_PATH_BYTES = 103


def own_socket(url: str) -> Tuple[Optional[str], str]:
    """The local server's own socket for ``url`` when it is proven the caller's, else ``(None, why)``.

    Proven means: ``url`` is a loopback ``http://`` URL, and ``os.lstat`` (which follows no symbolic link)
    shows ``<port>.sock`` beside the token file to be a socket owned by the caller, in a directory owned by
    the caller with no group or other permission bits.
    """
    parts = urllib.parse.urlsplit(url)
    if parts.scheme != "http" or not is_loopback(url):
        return None, f"{parts.scheme}://{parts.netloc} is not the local server (not a loopback http:// address)"
    getuid = getattr(os, "getuid", None)
    if getuid is None:
        return None, "this platform has no OS user ids to prove a socket is yours"
    uid = getuid()
    path = str(local_token_file(url).parent / f"{parts.port or 80}.sock")
    if len(os.fsencode(path)) > MAX_SOCKET_PATH_BYTES:
        return None, f"{path} is longer than {MAX_SOCKET_PATH_BYTES} bytes, too long for a socket"
    directory = os.path.dirname(path)
    try:
        dir_info = os.lstat(directory)
        info = os.lstat(path)
    except OSError:
        return None, f"no local server socket at {path}"
    if stat.S_ISLNK(dir_info.st_mode):
        return None, f"{path} is not proven yours: {directory} is a symbolic link"
    if not stat.S_ISDIR(dir_info.st_mode):
        return None, f"{path} is not proven yours: {directory} is not a directory"
    if dir_info.st_uid != uid:
        return None, f"{path} is not proven yours: {directory} belongs to uid {dir_info.st_uid}, not to you (uid {uid})"
    if dir_info.st_mode & 0o077:
        mode = oct(dir_info.st_mode & 0o777)[2:]
        return None, f"{path} is not proven yours: {directory} is open to other users (mode {mode}, not 700)"
    if not stat.S_ISSOCK(info.st_mode):
        return None, f"{path} is not a socket"
    if info.st_uid != uid:
        return None, f"{path} belongs to uid {info.st_uid}, not to you (uid {uid})"
    return path, ""


class _UnixHTTPConnection(http.client.HTTPConnection):
    """An HTTP connection over the Unix socket ``socket_path`` (the ``Host`` header stays the URL's)."""

    def __init__(self, host: str, *, socket_path: str, **kwargs: Any) -> None:
        super().__init__(host, **kwargs)
        self.socket_path = socket_path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            if isinstance(self.timeout, (int, float)):
                sock.settimeout(self.timeout)
            sock.connect(self.socket_path)
        except OSError:
            sock.close()
            raise
        self.sock = sock


class _UnixSocketHandler(urllib.request.HTTPHandler):
    """Sends every ``http://`` request through the Unix socket ``socket_path``."""

    def __init__(self, socket_path: str) -> None:
        super().__init__()
        self.socket_path = socket_path

    def http_open(self, req: urllib.request.Request) -> Any:
        return self.do_open(functools.partial(_UnixHTTPConnection, socket_path=self.socket_path), req)


def validate_endpoint(endpoint: str, source: str) -> str:
    """Checks that ``endpoint`` is an http(s) base URL and returns it without a trailing slash."""
    parts = urllib.parse.urlsplit(endpoint)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(
            f"endpoint `{endpoint}` (from {source}) is not an http:// or https:// URL; give the API base URL,"
            " e.g. http://127.0.0.1:8080 or https://abc123.execute-api.us-east-1.amazonaws.com/prod"
        )
    if parts.query or parts.fragment:
        raise ValueError(f"endpoint `{endpoint}` (from {source}) must not have a query or fragment")
    return endpoint.rstrip("/")


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """The API never redirects: a 3xx is an error, and credentials are never replayed to another host."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


class TxsClient:
    """A client of one torchx-serverless endpoint.

    Args:
        endpoint: API base URL including the stage, e.g. ``https://abc.execute-api.us-east-1.amazonaws.com/prod``
        sign: SigV4-sign requests; default: every endpoint that is not loopback (``TXS_SIGV4=0/1`` overrides)
        timeout: seconds per HTTP attempt
    """

    def __init__(self, endpoint: str, *, sign: Optional[bool] = None, timeout: float = 60.0) -> None:
        self.endpoint = endpoint.rstrip("/")
        if sign is None:
            flag = os.environ.get("TXS_SIGV4", "").strip().lower()
            if flag in ("1", "true", "yes", "on"):
                sign = True
            elif flag in ("0", "false", "no", "off"):
                sign = False
            else:
                sign = not is_loopback(self.endpoint)
        self.sign = sign
        self.timeout = timeout
        self._credentials: Any = None
        self._region: Optional[str] = None
        handlers: list = [_NoRedirect()]
        if is_loopback(self.endpoint):
            handlers.append(urllib.request.ProxyHandler({}))  # the local server is never behind a proxy
        self._opener = urllib.request.build_opener(*handlers)

    # ── request building ───────────────────────────────────────────────────

    def _signing_region(self) -> str:
        if self._region is None:
            host = urllib.parse.urlsplit(self.endpoint).hostname or ""
            match = _EXECUTE_API_HOST.match(host)
            region = match.group(1) if match else None
            if region is None:
                import botocore.session

                region = botocore.session.get_session().get_config_variable("region")
            if not region:
                raise TxsError(
                    f"cannot sign requests to {host}: no AWS region; set AWS_REGION (or AWS_DEFAULT_REGION)"
                )
            self._region = region
        return self._region

    def _sign(self, method: str, url: str, body: Optional[bytes], headers: dict) -> dict:
        import botocore.session
        from botocore.auth import SigV4Auth
        from botocore.awsrequest import AWSRequest

        if self._credentials is None:
            credentials = botocore.session.get_session().get_credentials()
            if credentials is None:
                raise TxsError(
                    f"cannot sign requests to {self.endpoint}: no AWS credentials found (environment,"
                    " ~/.aws/credentials, AWS_PROFILE, SSO or an instance role)"
                )
            self._credentials = credentials
        request = AWSRequest(method=method, url=url, data=body or b"", headers=headers)
        SigV4Auth(self._credentials.get_frozen_credentials(), "execute-api", self._signing_region()).add_auth(
            request
        )
        return dict(request.headers.items())

    def _headers(self, method: str, url: str, body: Optional[bytes], extra: Optional[Mapping[str, str]]) -> dict:
        headers = {"accept": "application/json", "user-agent": "torchx-serverless-plugin/0.1"}
        if body is not None:
            headers["content-type"] = "application/json"
        headers.update(extra or {})
        if self.sign:
            return self._sign(method, url, body, headers)
        return headers

    def own_server(self) -> Tuple[Optional[str], str]:
        """The proven own socket of this endpoint's local server, or ``(None, why)`` (see :py:func:`own_socket`).

        Only a server reached this way may receive the caller's environment or working directory.
        """
        if self.sign:
            return None, f"{self.endpoint} is a signed (deployed) endpoint"
        return own_socket(self.endpoint)

    def _opener_for_request(self) -> Tuple[urllib.request.OpenerDirector, Optional[str]]:
        path, _ = self.own_server()
        if path is None:
            return self._opener, None
        handlers = [_NoRedirect(), urllib.request.ProxyHandler({}), _UnixSocketHandler(path)]
        return urllib.request.build_opener(*handlers), path

    def url(self, path: str, query: Optional[Query] = None) -> str:
        """The absolute URL of ``path`` (``/v1/...``) with ``query`` (None values left out)."""
        url = self.endpoint + path
        items = list(query.items()) if isinstance(query, Mapping) else list(query or [])
        pairs = [(k, _query_value(v)) for k, v in items if v is not None]
        return url + ("?" + urllib.parse.urlencode(pairs) if pairs else "")

    # ── sending ────────────────────────────────────────────────────────────

    def request(
        self,
        method: str,
        path: str,
        *,
        query: Optional[Query] = None,
        body: Any = None,
        headers: Optional[Mapping[str, str]] = None,
    ) -> Any:
        """Sends one request (retrying what the API marks retryable) and returns the decoded JSON body.

        Raises:
            TxsError: the API answered with an error (its code and message are kept)
            TxsConnectionError: the API could not be reached
        """
        url = self.url(path, query)
        data = None if body is None else json.dumps(body, separators=(",", ":")).encode("utf-8")
        delay = 0.5
        opener, socket_path = self._opener_for_request()
        for attempt in range(1, _MAX_ATTEMPTS + 1):
            request = urllib.request.Request(
                url, data=data, method=method, headers=self._headers(method, url, data, headers)
            )
            try:
                with opener.open(request, timeout=self.timeout) as response:
                    raw = response.read()
                    return json.loads(raw) if raw else {}
            except urllib.error.HTTPError as error:
                raw = error.read()
                failure = _error_from_response(error.code, raw, self.endpoint)
                if failure.retryable and attempt < _MAX_ATTEMPTS:
                    time.sleep(_retry_after(error.headers.get("retry-after"), delay))
                    delay *= 2
                    continue
                raise failure from None
            except (urllib.error.URLError, OSError) as error:
                reason = getattr(error, "reason", error)
                if socket_path is not None:
                    reason = f"{reason} (through its socket {socket_path})"
                hint = (
                    "is the local server running? start it with `npm start`, or set the endpoint"
                    if is_loopback(self.endpoint)
                    else "check the endpoint"
                )
                raise TxsConnectionError(
                    f"cannot reach the torchx-serverless API at {self.endpoint}: {reason}; {hint}"
                    " (run option `endpoint`, TXS_ENDPOINT or `endpoint` in .torchxconfig)"
                ) from None
        raise AssertionError("unreachable")  # pragma: no cover


def _query_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _retry_after(header: Optional[str], fallback: float) -> float:
    try:
        return min(max(float(header), 0.0), 10.0) if header else fallback
    except ValueError:
        return fallback


def _error_from_response(status: int, raw: bytes, endpoint: str) -> TxsError:
    """The API's error envelope as a TxsError; a non-API answer becomes a short, readable message."""
    try:
        payload = json.loads(raw)
        error = payload["error"]
        kind = TxsRequestError if status in (400, 413, 415, 422) else TxsError
        said = error.get("retryable")
        return kind(
            str(error["message"]),
            status=status,
            code=str(error.get("code", "")),
            details=error.get("details") if isinstance(error.get("details"), list) else [],
            request_id=error.get("requestId"),
            retryable=said if isinstance(said, bool) else status in _GATEWAY_RETRY_STATUSES,
        )
    except (ValueError, KeyError, TypeError):
        payload = None
    gateway = payload.get("message") if isinstance(payload, dict) else None  # API Gateway's own answers
    if status in (401, 403):
        message = (
            f"access to {endpoint} was denied (HTTP {status}"
            + (f": {str(gateway)[:200]}" if gateway else "")
            + "): the caller's AWS identity may not invoke this API (execute-api:Invoke), the request was"
            " not signed, or the local server's access token was not accepted"
        )
    else:
        message = (
            f"{endpoint} answered HTTP {status} without an API error body; is it the torchx-serverless API"
            " v1 (include the stage in the endpoint)?"
        )
    return TxsError(message, status=status, code=f"HTTP{status}", retryable=status in _GATEWAY_RETRY_STATUSES)
