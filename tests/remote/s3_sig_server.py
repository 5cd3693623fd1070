"""A loopback S3 look-alike that checks every request's AWS Signature V4
with botocore (an implementation independent of libztensor's and libcurl's)
and answers 403 with S3's error XML on any mismatch.

It serves objects {(bucket, key): bytes} with Range support, path-style
(`/bucket/key`) or virtual-hosted (`Host: bucket.localhost:port`). What it
requires of a signed request, as S3 does:
- Authorization `AWS4-HMAC-SHA256 Credential=AK/DATE/REGION/s3/aws4_request,
  SignedHeaders=..., Signature=...` with a known access key (else
  InvalidAccessKeyId), the server's region (else AuthorizationHeaderMalformed,
  naming the expected region), an X-Amz-Date within 15 minutes (else
  RequestTimeTooSkewed);
- host, x-amz-date and x-amz-content-sha256 signed, and range and
  x-amz-security-token whenever they are sent;
- the signature botocore computes from the decoded key (S3 canonicalises the
  key it received, not the bytes the client chose to send), else
  SignatureDoesNotMatch.
Unsigned requests are served only for buckets listed as public."""
import datetime
import http.server
import re
import threading
import urllib.parse

from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from botocore.utils import percent_encode

AUTH_RE = re.compile(r"AWS4-HMAC-SHA256 Credential=([^/]+)/(\d{8})/([^/]+)/s3/aws4_request, ?"
                     r"SignedHeaders=([a-z0-9;\-]+), ?Signature=([0-9a-f]{64})$")


def s3_error(code, message, status=403, **extra):
    fields = "".join(f"<{k}>{v}</{k}>" for k, v in extra.items())
    return status, (f'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{code}</Code>'
                    f"<Message>{message}</Message>{fields}<RequestId>T1</RequestId></Error>").encode()


class SigV4Server:
    def __init__(self, objects, secrets, region="us-east-1", public=(), skew_seconds=0, redirects=None):
        """objects: {(bucket, key): bytes}; secrets: {access key: (secret,
        session token or None)}; skew_seconds: the server's clock offset."""
        self.objects = dict(objects)
        self.secrets = dict(secrets)
        self.region = region
        self.public = set(public)
        self.skew = skew_seconds
        self.redirects = dict(redirects or {})  # bucket: (Location, its region), answered 301
        self.log = []  # (method, raw path, host, signed headers or None, status)
        self.headers = []  # every request's headers, {lower-case name: value}
        self.lock = threading.Lock()
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                try:
                    outer.serve(self)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @property
    def endpoint(self):
        return f"http://127.0.0.1:{self.port}"

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()

    def bucket_key(self, h):
        """(bucket, key, canonical path) of the request, path-style or
        virtual-hosted by the Host header."""
        raw = h.path.split("?")[0]
        host = h.headers.get("Host", "")
        hostname = host.rsplit(":", 1)[0]
        if hostname.endswith(".localhost"):
            bucket = hostname[: -len(".localhost")]
            key = urllib.parse.unquote(raw[1:], errors="strict")
            canonical = "/" + percent_encode(key, safe="/~")
        else:
            bucket, _, rest = raw[1:].partition("/")
            bucket = urllib.parse.unquote(bucket)
            key = urllib.parse.unquote(rest, errors="strict")
            canonical = "/" + percent_encode(bucket, safe="") + "/" + percent_encode(key, safe="/~")
        return bucket, key, canonical

    def check_signature(self, h, canonical_path):
        """None when the request is correctly signed, else (status, body)."""
        auth = h.headers.get("Authorization")
        m = AUTH_RE.match(auth or "")
        if not m:
            return s3_error("AccessDenied", "Malformed or missing Authorization")
        ak, date, region, signed, sig = m.groups()
        if ak not in self.secrets:
            return s3_error("InvalidAccessKeyId", "The AWS Access Key Id you provided does not exist in our records.",
                            AWSAccessKeyId=ak)
        if region != self.region:
            return s3_error("AuthorizationHeaderMalformed",
                            f"The authorization header is malformed; the region '{region}' is wrong; "
                            f"expecting '{self.region}'", status=400, Region=self.region)
        secret, token = self.secrets[ak]
        names = signed.split(";")
        required = {"host", "x-amz-date", "x-amz-content-sha256"}
        if "Range" in h.headers:
            required.add("range")
        if "X-Amz-Security-Token" in h.headers or token:
            required.add("x-amz-security-token")
        if not required <= set(names) or names != sorted(names):
            return s3_error("AccessDenied", f"SignedHeaders {signed} must hold {sorted(required)}")
        if token is not None and h.headers.get("X-Amz-Security-Token") != token:
            return s3_error("InvalidToken", "The provided token is malformed or otherwise invalid.", status=400)
        amz_date = h.headers.get("X-Amz-Date", "")
        try:
            when = datetime.datetime.strptime(amz_date, "%Y%m%dT%H%M%SZ")
        except ValueError:
            return s3_error("AccessDenied", "bad X-Amz-Date")
        now = datetime.datetime.utcnow() + datetime.timedelta(seconds=self.skew)
        if abs((now - when).total_seconds()) > 900 or date != amz_date[:8]:
            return s3_error("RequestTimeTooSkewed",
                            "The difference between the request time and the current time is too large.",
                            RequestTime=amz_date, ServerTime=now.strftime("%Y-%m-%dT%H:%M:%SZ"))
        if h.headers.get("X-Amz-Content-SHA256") != "UNSIGNED-PAYLOAD":
            return s3_error("AccessDenied", "x-amz-content-sha256 must be UNSIGNED-PAYLOAD on a GET")
        headers = {n: h.headers.get(n, "") for n in names}
        req = AWSRequest(method=h.command, url=f"http://{h.headers.get('Host', '')}{canonical_path}",
                         headers=headers)
        req.context["timestamp"] = amz_date
        signer = S3SigV4Auth(Credentials(ak, secret, token), "s3", self.region)
        canonical = signer.canonical_request(req)
        expected = signer.signature(signer.string_to_sign(req, canonical), req)
        if expected != sig:
            return s3_error("SignatureDoesNotMatch",
                            "The request signature we calculated does not match the signature you provided.",
                            AWSAccessKeyId=ak, CanonicalRequest=canonical)
        return None

    def serve(self, h):
        try:
            bucket, key, canonical = self.bucket_key(h)
        except UnicodeDecodeError:
            status, body = s3_error("InvalidURI", "Couldn't parse the specified URI.", status=400)
            return self.reply(h, status, body, None)
        signed = "Authorization" in h.headers
        if bucket in self.redirects:
            location, region = self.redirects[bucket]
            status, body = s3_error("PermanentRedirect", "The bucket you are attempting to access must be "
                                    "addressed using the specified endpoint.", status=301, Endpoint=location)
            return self.reply(h, status, body, signed, {"Location": location, "x-amz-bucket-region": region})
        denied = None
        if signed:
            denied = self.check_signature(h, canonical)
        elif bucket not in self.public:
            denied = s3_error("AccessDenied", "Access Denied")
        if denied:
            return self.reply(h, denied[0], denied[1], signed)
        data = self.objects.get((bucket, key))
        if data is None:
            status, body = s3_error("NoSuchKey", "The specified key does not exist.", status=404, Key=key)
            return self.reply(h, status, body, signed)
        a, b = 0, len(data) - 1
        m = re.match(r"bytes=(\d*)-(\d*)$", h.headers.get("Range", ""))
        if m:
            if m.group(1) == "":
                a = max(0, len(data) - int(m.group(2)))
            else:
                a, b = int(m.group(1)), min(int(m.group(2) or b), b)
        body = data[a:b + 1]
        self.reply(h, 206 if m else 200, body, signed,
                   {"Content-Range": f"bytes {a}-{b}/{len(data)}", "ETag": '"e1"'} if m else {"ETag": '"e1"'})

    def reply(self, h, status, body, signed, headers=None):
        with self.lock:
            self.log.append((h.command, h.path, h.headers.get("Host"), signed, status))
            self.headers.append({k.lower(): v for k, v in h.headers.items()})
        h.send_response(status)
        for k, v in (headers or {}).items():
            h.send_header(k, v)
        if status >= 400:
            h.send_header("Content-Type", "application/xml")
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.write(body)
