"""Checks SigV4-signed `execute-api` requests as API Gateway's IAM authorization does, with botocore's own
SigV4 (an implementation independent of the AWS SDK for JavaScript that signed them): for each request, one
JSON line on stdin, recomputes the signature of the request as received (method, raw path and query, the
headers the Authorization header says are signed, the body) at the time it names, and prints one line:
`valid`, or `invalid` and why.

Input line: {"method", "url", "headers": {name: value}, "body": base64, "secretKey", "region"}
"""
import base64
import datetime
import json
import re
import sys
from unittest import mock

from botocore.auth import SigV4Auth, _host_from_url
from botocore.awsrequest import AWSRequest
from botocore.compat import HTTPHeaders
from botocore.credentials import Credentials

AUTHORIZATION = re.compile(
    r"^AWS4-HMAC-SHA256 Credential=(?P<key>[^/]+)/(?P<date>\d{8})/(?P<region>[^/]+)/execute-api/aws4_request, "
    r"SignedHeaders=(?P<signed>[^,]+), Signature=(?P<signature>[0-9a-f]{64})$"
)


class AsSigned(SigV4Auth):
    """SigV4 over exactly the headers the request says it signed, as API Gateway checks it."""

    def __init__(self, signed_names, *args):
        super().__init__(*args)
        self.signed_names = signed_names

    def headers_to_sign(self, request):
        headers = HTTPHeaders()
        for name in self.signed_names:
            headers[name] = _host_from_url(request.url) if name == "host" else request.headers[name]
        return headers


def check(line: str) -> str:
    given = json.loads(line)
    received = {k.lower(): v for k, v in given["headers"].items()}
    match = AUTHORIZATION.match(received.get("authorization", ""))
    if match is None:
        return "invalid: no SigV4 Authorization header for execute-api"
    if match["region"] != given["region"]:
        return f"invalid: signed for region {match['region']}"
    signed_names = match["signed"].split(";")
    headers = {name: received.get(name, "") for name in signed_names if name != "host"}
    request = AWSRequest(
        method=given["method"],
        url=given["url"],
        headers=headers,
        data=base64.b64decode(given["body"]),
    )
    signed_at = datetime.datetime.strptime(received.get("x-amz-date", ""), "%Y%m%dT%H%M%SZ")
    with mock.patch("botocore.auth.get_current_datetime", return_value=signed_at):
        credentials = Credentials(match["key"], given["secretKey"])
        AsSigned(signed_names, credentials, "execute-api", given["region"]).add_auth(request)
    mine = AUTHORIZATION.match(request.headers["Authorization"])
    if mine is None or mine["signature"] != match["signature"]:
        return "invalid: the request signature we calculated does not match the signature you provided"
    return "valid"


for line in sys.stdin:
    try:
        print(check(line), flush=True)
    except Exception as error:  # a malformed request is invalid, never a crash of the checker
        print(f"invalid: {error!r}", flush=True)
