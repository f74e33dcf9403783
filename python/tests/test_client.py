"""The HTTP client: the local server's own socket (never its token), SigV4 signing, retries and error messages (a recording server on 127.0.0.1:0)."""

from __future__ import annotations

import json
import os
import socketserver
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterator, List, Tuple

import pytest

from torchx_serverless.client import (
    TxsClient,
    TxsConnectionError,
    TxsError,
    TxsRequestError,
    is_loopback,
    local_token_file,
    own_socket,
)


class Recorder:
    def __init__(self) -> None:
        self.requests: List[Tuple[str, str, dict, bytes]] = []
        self.replies: List[Tuple[int, dict, bytes]] = []
        #: How each request arrived: "tcp" or "socket" (the own Unix socket).
        self.via: List[str] = []


def _handler(rec: Recorder, via: str) -> type:
    class Handler(BaseHTTPRequestHandler):
        def _handle(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else b""
            rec.requests.append((self.command, self.path, {k.lower(): v for k, v in self.headers.items()}, body))
            rec.via.append(via)
            status, headers, payload = rec.replies.pop(0) if rec.replies else (200, {}, b'{"ok": true}')
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_POST = do_DELETE = _handle

        def log_message(self, *args: object) -> None:
            pass

    return Handler


def _serve(httpd: socketserver.BaseServer) -> threading.Thread:
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    return thread


@pytest.fixture()
def recorder() -> Iterator[Tuple[Recorder, str]]:
    rec = Recorder()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(rec, "tcp"))
    _serve(httpd)
    try:
        yield rec, f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


class _UnixHTTPServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


@pytest.fixture()
def own_socket_dir(recorder, tmp_path: Path) -> Iterator[Path]:
    """The recorder also listens, as the local server does, on ``<port>.sock`` in ``~/.txs/local`` (0700)."""
    rec, url = recorder
    directory = tmp_path / ".txs" / "local"
    directory.mkdir(parents=True, mode=0o700)
    httpd = _UnixHTTPServer(str(directory / f"{url.rsplit(':', 1)[1]}.sock"), _handler(rec, "socket"))
    _serve(httpd)
    try:
        yield directory
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ["TXS_SIGV4", "TXS_LOCAL_TOKEN_FILE", "AWS_PROFILE", "AWS_SESSION_TOKEN"]:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))


def test_loopback_is_recognised() -> None:
    assert is_loopback("http://127.0.0.1:8080") and is_loopback("http://localhost:1") and is_loopback("http://[::1]:8")
    assert not is_loopback("https://abc.execute-api.us-east-1.amazonaws.com/prod")
    assert not is_loopback("http://10.0.0.1:8080")


def test_loopback_requests_never_carry_the_local_token_over_tcp(recorder, tmp_path: Path, monkeypatch) -> None:
    rec, url = recorder
    port = url.rsplit(":", 1)[1]
    token_file = tmp_path / ".txs" / "local" / f"{port}.token"
    assert local_token_file(url) == token_file
    token_file.parent.mkdir(parents=True, mode=0o700)
    token_file.write_text("s3cret\n")
    client = TxsClient(url.replace("127.0.0.1", "localhost"))
    client.request("GET", "/v1/schedulers")
    override = tmp_path / "other.token"
    override.write_text("other")
    monkeypatch.setenv("TXS_LOCAL_TOKEN_FILE", str(override))
    client.request("GET", "/v1/schedulers")
    assert rec.via == ["tcp", "tcp"]
    assert [r[2].get("authorization") for r in rec.requests] == [None, None]
    assert client.own_server()[0] is None


def test_loopback_requests_go_through_the_own_socket_when_it_is_proven(recorder, own_socket_dir: Path) -> None:
    rec, url = recorder
    client = TxsClient(url.replace("127.0.0.1", "localhost"))
    assert client.own_server() == (str(own_socket_dir / f"{url.rsplit(':', 1)[1]}.sock"), "")
    assert client.request("POST", "/v1/dryrun", body={"scheduler": "local_cwd"}) == {"ok": True}
    assert rec.via == ["socket"]
    method, path, headers, body = rec.requests[-1]
    assert (method, path, json.loads(body)) == ("POST", "/v1/dryrun", {"scheduler": "local_cwd"})
    assert "authorization" not in headers
    assert headers["host"] == url.replace("http://127.0.0.1", "localhost")


def test_a_socket_not_proven_the_callers_is_not_used(recorder, own_socket_dir: Path) -> None:
    rec, url = recorder
    sock = own_socket_dir / f"{url.rsplit(':', 1)[1]}.sock"
    client = TxsClient(url)
    own_socket_dir.chmod(0o770)  # the directory opened to the group
    assert "open to other users" in own_socket(url)[1]
    own_socket_dir.chmod(0o700)
    os.lchown(sock, os.getuid() + 4242, -1)  # the socket is another user's
    assert "belongs to uid" in own_socket(url)[1]
    os.lchown(sock, os.getuid(), -1)
    assert own_socket(url)[0] == str(sock)
    # A symbolic link in place of the socket, or of its directory, proves nothing.
    real = own_socket_dir.parent / "real"
    own_socket_dir.rename(real)
    own_socket_dir.mkdir(mode=0o700)
    (own_socket_dir / sock.name).symlink_to(real / sock.name)
    assert own_socket(url) == (None, f"{sock} is not a socket")
    (own_socket_dir / sock.name).unlink()
    own_socket_dir.rmdir()
    own_socket_dir.symlink_to(real)
    assert "is a symbolic link" in own_socket(url)[1]
    client.request("GET", "/v1/schedulers")
    assert rec.via == ["tcp"]
    assert own_socket("https://localhost:8080")[0] is None
    assert own_socket("http://10.0.0.1:8080")[0] is None


def test_signed_requests_use_sigv4_for_execute_api(recorder, monkeypatch) -> None:
    rec, url = recorder
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-1")
    monkeypatch.setenv("TXS_SIGV4", "1")
    client = TxsClient(url + "/prod")
    assert client.sign
    client.request("POST", "/v1/dryrun", body={"scheduler": "aws_batch"})
    method, path, headers, body = rec.requests[-1]
    assert (method, path, json.loads(body)) == ("POST", "/prod/v1/dryrun", {"scheduler": "aws_batch"})
    assert headers["authorization"].startswith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/")
    assert "/eu-west-1/execute-api/aws4_request" in headers["authorization"]
    assert "x-amz-date" in headers


def test_deployed_endpoints_are_signed_by_default_and_loopback_is_not() -> None:
    assert TxsClient("https://abc123.execute-api.us-east-1.amazonaws.com/prod").sign
    assert TxsClient("https://txs.example.com").sign
    assert not TxsClient("http://127.0.0.1:8080").sign


def test_signing_without_credentials_says_what_to_do(recorder, monkeypatch) -> None:
    _, url = recorder
    for name in ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"]:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("TXS_SIGV4", "1")
    with pytest.raises(TxsError, match="no AWS credentials found"):
        TxsClient(url).request("GET", "/v1/schedulers")


def test_api_errors_keep_the_services_code_and_message(recorder) -> None:
    rec, url = recorder
    envelope = {"error": {"code": "ValidationFailed", "message": "Invalid request: scheduler: is required",
                          "details": [{"path": "scheduler", "message": "is required"}], "requestId": "r-1"}}
    rec.replies.append((400, {"content-type": "application/json"}, json.dumps(envelope).encode()))
    with pytest.raises(TxsRequestError) as caught:
        TxsClient(url).request("POST", "/v1/dryrun", body={})
    assert str(caught.value) == "Invalid request: scheduler: is required"
    assert caught.value.code == "ValidationFailed" and caught.value.request_id == "r-1"
    assert isinstance(caught.value, ValueError)


def test_a_non_api_answer_is_summarised_not_dumped(recorder) -> None:
    rec, url = recorder
    rec.replies.append((404, {"content-type": "text/html"}, b"<html>" + b"x" * 5000 + b"</html>"))
    with pytest.raises(TxsError) as caught:
        TxsClient(url).request("GET", "/v1/schedulers")
    assert "<html>" not in str(caught.value) and len(str(caught.value)) < 300
    assert "include the stage" in str(caught.value)


def test_throttling_and_in_flight_submissions_are_retried_with_the_same_key(recorder) -> None:
    rec, url = recorder
    rec.replies += [
        (503, {"retry-after": "0"}, json.dumps({"error": {"code": "BackendError", "message": "throttled", "retryable": True}}).encode()),
        (409, {"retry-after": "0"}, json.dumps({"error": {"code": "IdempotencyInProgress", "message": "wait", "retryable": True}}).encode()),
        (201, {}, b'{"appId": "a-1"}'),
    ]
    out = TxsClient(url).request("POST", "/v1/apps", body={"x": 1}, headers={"Idempotency-Key": "k-1"})
    assert out == {"appId": "a-1"}
    assert [r[2]["idempotency-key"] for r in rec.requests] == ["k-1", "k-1", "k-1"]


def test_a_503_the_api_marks_not_retryable_fails_at_once_with_the_fix(recorder) -> None:
    rec, url = recorder
    said = {"code": "BackendNotConfigured", "message": "batch:SubmitJob needs an AWS region: set AWS_REGION", "retryable": False}
    rec.replies.append((503, {}, json.dumps({"error": said}).encode()))
    with pytest.raises(TxsError, match="set AWS_REGION") as caught:
        TxsClient(url).request("POST", "/v1/apps", body={}, headers={"Idempotency-Key": "k"})
    assert caught.value.code == "BackendNotConfigured" and caught.value.retryable is False
    assert len(rec.requests) == 1


def test_a_gateway_503_without_the_apis_word_is_retried(recorder) -> None:
    rec, url = recorder
    rec.replies += [(503, {"retry-after": "0"}, b'{"message": "Service Unavailable"}'), (200, {}, b'{"ok": 1}')]
    assert TxsClient(url).request("GET", "/v1/schedulers") == {"ok": 1}
    assert len(rec.requests) == 2


def test_an_idempotency_conflict_is_not_retried(recorder) -> None:
    rec, url = recorder
    rec.replies.append((422, {}, json.dumps({"error": {"code": "IdempotencyConflict", "message": "other body"}}).encode()))
    with pytest.raises(TxsRequestError, match="other body"):
        TxsClient(url).request("POST", "/v1/apps", body={}, headers={"Idempotency-Key": "k"})
    assert len(rec.requests) == 1


def test_an_unreachable_local_server_says_to_start_it() -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(TxsConnectionError, match="npm start"):
        TxsClient(f"http://127.0.0.1:{port}").request("GET", "/v1/schedulers")


def test_redirects_are_not_followed_so_the_token_stays_here(recorder, tmp_path: Path, monkeypatch) -> None:
    rec, url = recorder
    token = tmp_path / "t.token"
    token.write_text("s3cret")
    monkeypatch.setenv("TXS_LOCAL_TOKEN_FILE", str(token))
    rec.replies.append((302, {"location": url + "/elsewhere"}, b""))
    with pytest.raises(TxsError, match="HTTP 302"):
        TxsClient(url).request("GET", "/v1/schedulers")
    assert [r[1] for r in rec.requests] == ["/v1/schedulers"]


def test_loopback_requests_bypass_proxies(recorder, monkeypatch) -> None:
    rec, url = recorder
    monkeypatch.setenv("http_proxy", "http://127.0.0.1:9")  # nothing listens on the discard port
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.delenv("NO_PROXY", raising=False)
    assert TxsClient(url).request("GET", "/v1/schedulers") == {"ok": True}
