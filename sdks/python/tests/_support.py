"""What the tests share: the conformance files, a lease signer, a local stand-in for Keyward."""

from __future__ import annotations

import base64
import json
import os
import re
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, List, Optional, Tuple

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

SDK_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def conformance_file(name: str) -> str:
    """sdks/conformance/<name>, read from the repository at test time."""
    directory = os.environ.get("KEYWARD_CONFORMANCE_DIR") or os.path.join(
        os.path.dirname(SDK_DIR), "conformance"
    )
    return os.path.join(directory, name)


def load_conformance(name: str) -> Dict[str, Any]:
    with open(conformance_file(name), encoding="utf-8") as source:
        document: Dict[str, Any] = json.load(source)
    return document


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


class Signer:
    """An Ed25519 key of the tests' own, signing leases as Keyward does, to build tokens the
    conformance files do not hold (several defects at once, odd claim types)."""

    def __init__(self, kid: str = "test-key") -> None:
        self.kid = kid
        self.key = Ed25519PrivateKey.generate()
        raw = self.key.public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw
        )
        self.jwk = {"kty": "OKP", "crv": "Ed25519", "x": b64url(raw), "kid": kid, "alg": "EdDSA", "use": "sig"}

    @property
    def jwks(self) -> Dict[str, Any]:
        return {"keys": [self.jwk]}

    def sign(self, payload: Dict[str, Any], header: Optional[Dict[str, Any]] = None) -> str:
        protected = {"alg": "EdDSA", "kid": self.kid, "typ": "keyward-lease+jwt"}
        protected.update(header or {})
        signing_input = (
            b64url(json.dumps(protected).encode()) + "." + b64url(json.dumps(payload).encode())
        )
        return signing_input + "." + b64url(self.key.sign(signing_input.encode("ascii")))


NOW = 1_800_000_000


def changed(payload: Dict[str, Any], changes: Dict[str, Any]) -> Dict[str, Any]:
    """The payload with each change made: a value sets its member, ... removes it."""
    for name, value in changes.items():
        if value is ...:
            payload.pop(name, None)
        else:
            payload[name] = value
    return payload


def lease_payload(**changes: Any) -> Dict[str, Any]:
    """A valid lease's claims at NOW, changed as asked (a value of ... removes the claim)."""
    payload: Dict[str, Any] = {
        "iss": "keyward",
        "sub": "01938f2e-0000-7000-8000-000000000001",
        "jti": "01938f2e-0000-7000-8000-000000000001",
        "aud": "kw_app",
        "iat": NOW - 3600,
        "nbf": NOW - 3600,
        "exp": NOW + 86400,
        "holder": {"kind": "lock", "assetNum": "A-1"},
        "fingerprint": "fp-this-machine",
        "assetNum": "A-1",
        "product": {"crmProductId": "P-1", "productUri": "uri-1", "productName": "Modeler"},
        "limits": {
            "concurrent": 1,
            "timeDurationSeconds": None,
            "amount": 100,
            "startDate": (NOW - 86400) * 1000,
            "endDate": (NOW + 30 * 86400) * 1000,
        },
        "expBound": "offline-days",
    }
    return changed(payload, changes)


NONCE = re.compile(r"^[A-Za-z0-9_-]{8,64}$")


class Recorded:
    def __init__(self, method: str, path: str, query: Dict[str, List[str]], headers: Dict[str, str], body: bytes):
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body

    @property
    def json(self) -> Any:
        return json.loads(self.body)

    @property
    def nonce(self) -> Optional[str]:
        values = self.query.get("g_nonce")
        return values[0] if values else None

    @property
    def bearer(self) -> Optional[str]:
        value = self.headers.get("authorization", "")
        return value[len("Bearer ") :] if value.startswith("Bearer ") else None


Answer = Tuple[int, Dict[str, Any]]

#: A scripted answer that is no answer: the stub reads the call, then closes the connection.
DROP: Answer = (0, {})


class StubKeyward:
    """Keyward's token endpoint and runtime, as far as a session sees them, on 127.0.0.1.

    Tokens are tok-1, tok-2 …, each valid until ``revoke_tokens``; a runtime call with another
    token answers 60000. ``script`` holds answers forced on the next runtime calls, in order:
    (status, document), (status, document, headers), or DROP.
    """

    def __init__(self) -> None:
        self.requests: List[Recorded] = []
        self.issued = 0
        self.valid_tokens: set = set()
        self.expires_in = 3600
        self.token_refusal: Optional[Answer] = None
        self.script: List[Answer] = []
        self.interval = 10
        self.revoked: set = set()
        self.lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                self._serve()

            def do_GET(self) -> None:  # noqa: N802
                self._serve()

            def _serve(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                url = urllib.parse.urlsplit(self.path)
                recorded = Recorded(
                    self.command,
                    url.path,
                    urllib.parse.parse_qs(url.query),
                    {k.lower(): v for k, v in self.headers.items()},
                    body,
                )
                status, headers, payload = stub.answer(recorded)
                if status == 0:  # DROP: as a connection lost before the answer
                    self.close_connection = True
                    return
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def revoke_tokens(self) -> None:
        with self.lock:
            self.valid_tokens.clear()

    def runtime_requests(self, suffix: str = "") -> List[Recorded]:
        with self.lock:
            return [r for r in self.requests if r.path.startswith("/runtime/") and r.path.endswith(suffix)]

    def token_requests(self) -> List[Recorded]:
        with self.lock:
            return [r for r in self.requests if r.path == "/oauth2/token"]

    def answer(self, request: Recorded) -> Tuple[int, Dict[str, str], bytes]:
        with self.lock:
            self.requests.append(request)
            routed = self._route(request)
        status, document = routed[0], routed[1]
        extra: Dict[str, str] = routed[2] if len(routed) > 2 else {}
        if isinstance(document, bytes):
            return status, {"content-type": "text/html", **extra}, document
        headers = {"content-type": "application/json", "x-request-id": "req-1", **extra}
        return status, headers, json.dumps(document).encode()

    def _route(self, request: Recorded) -> Tuple[Any, ...]:
        if request.path == "/oauth2/token":
            if self.token_refusal is not None:
                return self.token_refusal
            self.issued += 1
            token = f"tok-{self.issued}"
            self.valid_tokens.add(token)
            return 200, {"access_token": token, "token_type": "Bearer", "expires_in": self.expires_in, "scope": "auth_runtime"}
        if request.path == "/.well-known/jwks.json":
            return 200, {"keys": [{"kty": "OKP", "crv": "Ed25519", "x": "A" * 43, "kid": "k1"}]}
        if not request.path.startswith("/runtime/v1/leases"):
            return 404, b"<html>not here</html>"
        if request.bearer not in self.valid_tokens:
            return 299, {"code": "60000", "message": "application token check failed", "cause": "token unknown"}
        if self.script:
            return self.script.pop(0)
        parts = request.path.split("/")
        if len(parts) == 4:  # /runtime/v1/leases
            return 200, envelope(
                {
                    "leaseId": "0193aaaa-0000-7000-8000-000000000001",
                    "status": "granted",
                    "assetNum": request.json.get("assetNum", "A-member"),
                    "expiresAt": 1_800_000_050_000,
                    "heartbeatIntervalSeconds": self.interval,
                    "product": {"crmProductId": "P-1", "productUri": None, "productName": "Modeler"},
                    "limits": {"concurrent": 1, "timeDurationSeconds": None, "amount": 100, "startDate": None, "endDate": None},
                    "offlineLease": None,
                }
            )
        lease_id, action = parts[4], parts[5]
        if lease_id in self.revoked and action in ("heartbeat", "consume"):
            return 299, {"code": "90009", "message": "revoked: the asset was disabled", "cause": "asset disabled"}
        if action == "heartbeat":
            return 200, envelope({"leaseId": lease_id, "expiresAt": 1_800_000_100_000, "heartbeatIntervalSeconds": self.interval, "usedSeconds": 12})
        if action == "consume":
            amount = request.json["amount"]
            return 200, envelope({"consumed": amount, "limit": 100, "remaining": 100 - amount})
        if action == "check-in":
            return 200, envelope({"usedSeconds": 15, "seatFreeAt": 1_800_000_000_000})
        return 404, b"no"


def envelope(data: Any) -> Dict[str, Any]:
    return {"code": 0, "message": "success", "data": data}


def wait_until(condition: Callable[[], bool], timeout: float = 5.0) -> bool:
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.01)
    return condition()
