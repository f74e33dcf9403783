"""Checks a presigned S3 PUT as S3 does, with botocore's own SigV4 (an implementation independent of the
AWS SDK for JavaScript that signed it): recomputes the query-string signature of the request as received
(method, URL, and the headers the URL says are signed) and prints `valid` or `invalid`.

Usage: presigned-put-check.py URL ACCESS_KEY SECRET_KEY REGION HEADERS_JSON
"""
import datetime
import json
import sys
from unittest import mock
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from botocore.auth import S3SigV4QueryAuth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

AUTH_PARAMS = {
    "X-Amz-Algorithm",
    "X-Amz-Credential",
    "X-Amz-Date",
    "X-Amz-Expires",
    "X-Amz-SignedHeaders",
    "X-Amz-Signature",
}

url, access_key, secret_key, region, headers_json = sys.argv[1:6]
parts = urlsplit(url)
query = parse_qsl(parts.query, keep_blank_values=True)
given = dict(query)
signed_names = given["X-Amz-SignedHeaders"].split(";")
received = {k.lower(): v for k, v in json.loads(headers_json).items()}
headers = {name: received.get(name, "") for name in signed_names if name != "host"}
operation = urlencode([(k, v) for k, v in query if k not in AUTH_PARAMS])
request = AWSRequest(
    method="PUT", url=urlunsplit((parts.scheme, parts.netloc, parts.path, operation, "")), headers=headers
)
signed_at = datetime.datetime.strptime(given["X-Amz-Date"], "%Y%m%dT%H%M%SZ")
with mock.patch("botocore.auth.get_current_datetime", return_value=signed_at):
    S3SigV4QueryAuth(
        Credentials(access_key, secret_key), "s3", region, expires=int(given["X-Amz-Expires"])
    ).add_auth(request)
mine = dict(parse_qsl(urlsplit(request.url).query))
print("valid" if mine.get("X-Amz-Signature") == given["X-Amz-Signature"] else "invalid")
