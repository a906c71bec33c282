"""How the session uses HTTP against local servers: a redirect is refused, never followed (a POST
would become a GET, the credentials would go to the redirect's target); ``timeout`` bounds an
attempt as a whole, a server trickling its answer included, and ``RetryPolicy.max_elapsed`` the
call; ``close()`` cuts a retry's wait short."""

from __future__ import annotations

import json
import pickle
import socket
import threading
import time
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, List, Optional, Tuple

from keyward import (
    KeywardConnectionError,
    KeywardError,
    KeywardRedirectError,
    RetryPolicy,
    Session,
)
from keyward.retry import NO_RETRY

from ._support import StubKeyward, wait_until

TOKEN = {"access_token": "tok-1", "token_type": "Bearer", "expires_in": 3600}
BUSY = {"code": "503", "message": "the server is busy, retry later", "cause": "overloaded"}


class Redirector:
    """Answers every call with ``status`` and a Location on ``target`` (the same path), except
    the token endpoint when ``token_ok``: a token."""

    def __init__(self, target: str, status: int = 302, token_ok: bool = False) -> None:
        self.status = status
        self.token_ok = token_ok
        self.paths: List[Tuple[str, str]] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                self._serve()

            def do_GET(self) -> None:  # noqa: N802
                self._serve()

            def _serve(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                if length:
                    self.rfile.read(length)
                owner.paths.append((self.command, self.path))
                if owner.token_ok and self.path == "/oauth2/token":
                    body = json.dumps(TOKEN).encode()
                    self.send_response(200)
                    self.send_header("content-type", "application/json")
                else:
                    body = b"<html>moved</html>"
                    self.send_response(owner.status)
                    self.send_header("location", target + self.path)
                    self.send_header("x-request-id", "req-moved")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class Redirects(unittest.TestCase):
    def setUp(self) -> None:
        self.target = StubKeyward()  # records whether anything reached it
        self.addCleanup(self.target.close)

    def redirector(self, status: int, token_ok: bool = False) -> Redirector:
        redirector = Redirector(self.target.url, status, token_ok)
        self.addCleanup(redirector.close)
        return redirector

    def test_a_redirect_of_the_token_request_is_refused_naming_status_and_location(self) -> None:
        for status in (301, 302, 303, 307, 308):
            with self.subTest(status=status):
                redirector = self.redirector(status)
                session = Session(redirector.url, "kw_app", "s3cret")
                with self.assertRaises(KeywardRedirectError) as refused:
                    session.check_out("fp-this-machine", asset_num="A-1", crm_product_id="P-1")
                error = refused.exception
                self.assertIsInstance(error, KeywardError)
                self.assertEqual((error.code, error.http_status), (str(status), status))
                self.assertEqual(error.location, self.target.url + "/oauth2/token")
                self.assertEqual(error.request_id, "req-moved")
                self.assertIn(f"HTTP {status}", str(error))
                self.assertIn(self.target.url + "/oauth2/token", str(error))
                self.assertEqual(redirector.paths, [("POST", "/oauth2/token")])  # sent once, not retried
        self.assertEqual(self.target.requests, [], "the redirect's target was called")

    def test_a_runtime_call_is_not_sent_to_the_target_with_the_app_token(self) -> None:
        for status in (302, 307):
            with self.subTest(status=status):
                redirector = self.redirector(status, token_ok=True)
                session = Session(redirector.url, "kw_app", "s3cret", retry=RetryPolicy(max_attempts=4))
                with self.assertRaises(KeywardRedirectError) as refused:
                    session.check_out("fp-this-machine", asset_num="A-1", crm_product_id="P-1")
                location = refused.exception.location or ""
                self.assertTrue(location.startswith(self.target.url + "/runtime/v1/leases?g_nonce="), location)
                self.assertEqual(len([p for p in redirector.paths if p[1].startswith("/runtime/")]), 1)
        self.assertEqual(self.target.requests, [], "the Authorization header went to the redirect's target")

    def test_a_redirected_jwks_is_refused(self) -> None:
        redirector = self.redirector(301)
        with self.assertRaises(KeywardRedirectError) as refused:
            Session(redirector.url, "kw_app", "s").fetch_jwks()
        self.assertEqual(refused.exception.location, self.target.url + "/.well-known/jwks.json")
        self.assertEqual(self.target.requests, [])

    def test_the_error_survives_pickling(self) -> None:
        error = KeywardRedirectError(308, "moved", "https://elsewhere.example/oauth2/token", "Permanent Redirect", "req-9")
        copy = pickle.loads(pickle.dumps(error))
        self.assertIs(type(copy), KeywardRedirectError)
        self.assertEqual(vars(copy), vars(error))


class Trickler:
    """A server on 127.0.0.1 that answers the token endpoint at once and every other call slowly:
    the status line, then each further byte of the head (``head``) or of the body every
    ``pause`` seconds, ``size`` bytes in all, as a slow or hostile server could."""

    def __init__(self, head: bool = False, size: int = 40, pause: float = 0.1) -> None:
        self.head = head
        self.size = size
        self.pause = pause
        self.calls = 0
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(8)
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.closed = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def close(self) -> None:
        self.closed.set()
        self.listener.close()

    def _accept(self) -> None:
        while not self.closed.is_set():
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(connection,), daemon=True).start()

    def _serve(self, connection: socket.socket) -> None:
        with connection:
            request = b""
            while b"\r\n\r\n" not in request:
                chunk = connection.recv(65536)
                if not chunk:
                    return
                request += chunk
            head_end = request.index(b"\r\n\r\n") + 4
            length = 0
            for line in request[:head_end].split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            while len(request) < head_end + length:
                request += connection.recv(65536)
            try:
                if b" /oauth2/token" in request.split(b"\r\n")[0]:
                    body = json.dumps(TOKEN).encode()
                    connection.sendall(
                        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body)
                    )
                    return
                self.calls += 1
                if self.head:
                    connection.sendall(b"HTTP/1.1 200 OK\r\n")
                    slow = b"x-slow: " + b"a" * self.size + b"\r\n"
                else:
                    connection.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n" % self.size)
                    slow = b" " * self.size
                for byte in slow:
                    if self.closed.wait(self.pause):
                        return
                    connection.sendall(bytes([byte]))
            except OSError:
                return


class Deadlines(unittest.TestCase):
    def trickler(self, **kwargs: Any) -> Trickler:
        trickler = Trickler(**kwargs)
        self.addCleanup(trickler.close)
        return trickler

    def timed_check_out(self, session: Session) -> Tuple[float, Optional[BaseException]]:
        started = time.monotonic()
        try:
            session.check_out("fp-this-machine", asset_num="A-1", crm_product_id="P-1")
        except (KeywardError, KeywardConnectionError) as error:
            return time.monotonic() - started, error
        return time.monotonic() - started, None

    def test_a_body_trickled_a_byte_at_a_time_times_out_at_the_timeout(self) -> None:
        # 40 bytes, one each 0.1 s: each read is quick, the answer takes 4 s.
        trickler = self.trickler()
        took, error = self.timed_check_out(Session(trickler.url, "kw_app", "s", timeout=0.8, retry=NO_RETRY))
        self.assertIsInstance(error, KeywardConnectionError)
        self.assertIn("timed out", str(error))
        self.assertGreaterEqual(took, 0.75)
        self.assertLess(took, 1.6, "the timeout bounded each read, not the call")

    def test_a_head_trickled_a_byte_at_a_time_times_out_at_the_timeout(self) -> None:
        trickler = self.trickler(head=True)
        took, error = self.timed_check_out(Session(trickler.url, "kw_app", "s", timeout=0.8, retry=NO_RETRY))
        self.assertIsInstance(error, KeywardConnectionError)
        self.assertLess(took, 1.6, "the timeout bounded each read, not the call")

    def test_max_elapsed_bounds_the_retried_call_as_a_whole(self) -> None:
        # Attempts of up to 0.6 s each and waits: the call ends within max_elapsed all the same.
        trickler = self.trickler()
        policy = RetryPolicy(max_attempts=10, initial_backoff=0.05, max_backoff=0.05, max_elapsed=1.5)
        took, error = self.timed_check_out(Session(trickler.url, "kw_app", "s", timeout=0.6, retry=policy))
        self.assertIsInstance(error, KeywardConnectionError)
        self.assertGreaterEqual(trickler.calls, 2)
        self.assertLess(took, 1.5 + 0.4)

    def test_an_answer_in_time_is_read_whole(self) -> None:
        trickler = self.trickler(size=5, pause=0.02)  # five spaces: not JSON, but all of it read
        took, error = self.timed_check_out(Session(trickler.url, "kw_app", "s", timeout=2, retry=NO_RETRY))
        self.assertIsInstance(error, KeywardError)
        self.assertEqual((error.code, error.message), ("200", "unexpected answer"))  # type: ignore[union-attr]


class InterruptedWaits(unittest.TestCase):
    def setUp(self) -> None:
        self.stub = StubKeyward()
        self.addCleanup(self.stub.close)
        policy = RetryPolicy(max_retry_after=60, max_elapsed=120)
        self.session = Session(self.stub.url, "kw_app", "s", timeout=5, retry=policy)
        self.lease = self.session.check_out("fp-this-machine", asset_num="A-1", crm_product_id="P-1")

    def test_close_cuts_a_heartbeats_retry_after_wait_short(self) -> None:
        # The heartbeat thread waits out "Retry-After: 8"; closing the session does not.
        self.stub.script = [(503, BUSY, {"retry-after": "8"})]
        errors: List[BaseException] = []
        self.lease.start_heartbeats(on_error=errors.append, interval=0.05)
        self.assertTrue(wait_until(lambda: len(self.stub.runtime_requests("/heartbeat")) == 1))
        time.sleep(0.2)  # into the wait
        started = time.monotonic()
        self.session.close()
        self.assertLess(time.monotonic() - started, 2.0, "close() waited for the retry")
        self.assertEqual(len(self.stub.runtime_requests("/heartbeat")), 1)
        self.assertEqual(len(self.stub.runtime_requests("/check-in")), 1)
        self.assertIsNotNone(self.lease.checked_in)
        self.assertEqual([getattr(e, "code", None) for e in errors], ["503"])

    def test_close_cuts_another_threads_wait_short_and_ends_retrying(self) -> None:
        self.stub.script = [(503, BUSY, {"retry-after": "8"})]
        failures: List[BaseException] = []

        def consume() -> None:
            try:
                self.lease.consume(1)
            except KeywardError as error:
                failures.append(error)

        worker = threading.Thread(target=consume)
        worker.start()
        self.assertTrue(wait_until(lambda: len(self.stub.runtime_requests("/consume")) == 1))
        time.sleep(0.2)
        started = time.monotonic()
        self.session.close()
        worker.join(5)
        self.assertLess(time.monotonic() - started, 2.0)
        self.assertEqual([getattr(e, "http_status", None) for e in failures], [503])
        self.assertEqual(len(self.stub.runtime_requests("/consume")), 1)
        # Closed: a call is sent once, without waiting for a retry.
        self.stub.script = [(503, BUSY, {"retry-after": "8"})]
        started = time.monotonic()
        with self.assertRaises(KeywardError):
            self.session.check_out("fp-this-machine", asset_num="A-1", crm_product_id="P-1")
        self.assertLess(time.monotonic() - started, 2.0)

    def test_stopping_heartbeats_cuts_the_wait_short(self) -> None:
        self.stub.script = [(429, {"code": "429", "message": "too many requests", "cause": ""}, {"retry-after": "8"})]
        self.lease.start_heartbeats(interval=0.05)
        self.assertTrue(wait_until(lambda: len(self.stub.runtime_requests("/heartbeat")) == 1))
        time.sleep(0.2)
        started = time.monotonic()
        self.lease.stop_heartbeats()
        self.assertLess(time.monotonic() - started, 2.0)
        self.lease.check_in()


if __name__ == "__main__":
    unittest.main()
