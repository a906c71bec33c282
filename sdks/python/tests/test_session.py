"""The session and its leases against a local stand-in for Keyward (http.server): the token,
nonces, the retry after 60000, refusals and network failures, the heartbeat thread, check-in on
leaving a block."""

from __future__ import annotations

import base64
import socket
import threading
import unittest
import urllib.parse
from datetime import datetime, timezone
from typing import List

from keyward import (
    CheckIn,
    Consumption,
    Heartbeat,
    Jwks,
    KeywardAuthError,
    KeywardConnectionError,
    KeywardError,
    Session,
)

from ._support import NONCE, StubKeyward, wait_until

LEASE_ID = "0193aaaa-0000-7000-8000-000000000001"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class StubTest(unittest.TestCase):
    def setUp(self) -> None:
        self.stub = StubKeyward()
        self.addCleanup(self.stub.close)
        self.clock = Clock()
        self.session = Session(self.stub.url, "kw_app", "s3cret:/+", clock=self.clock, timeout=5)

    def check_out(self, **fields: object):  # type: ignore[no-untyped-def]
        return self.session.check_out("fp-this-machine", asset_num="A-1", crm_product_id="P-1", **fields)  # type: ignore[arg-type]


class Tokens(StubTest):
    def test_client_credentials_with_basic_authentication(self) -> None:
        self.check_out()
        [request] = self.stub.token_requests()
        self.assertEqual(request.method, "POST")
        basic = base64.b64decode(request.headers["authorization"][len("Basic ") :]).decode()
        self.assertEqual(basic, "kw_app:" + urllib.parse.quote("s3cret:/+", safe=""))
        self.assertEqual(request.headers["content-type"], "application/x-www-form-urlencoded")
        self.assertEqual(urllib.parse.parse_qs(request.body.decode()), {"grant_type": ["client_credentials"], "scope": ["auth_runtime"]})

    def test_the_token_is_reused_and_renewed_before_it_expires(self) -> None:
        self.stub.expires_in = 100  # a short life: renewed at 90%
        lease = self.check_out()
        self.clock.now += 89
        lease.heartbeat()
        self.assertEqual(len(self.stub.token_requests()), 1)
        self.clock.now += 1.5
        lease.heartbeat()
        self.assertEqual(len(self.stub.token_requests()), 2)
        self.assertEqual([r.bearer for r in self.stub.runtime_requests()], ["tok-1", "tok-1", "tok-2"])

    def test_a_long_token_is_renewed_a_minute_early(self) -> None:
        self.stub.expires_in = 3600
        lease = self.check_out()
        self.clock.now += 3539
        lease.heartbeat()
        self.assertEqual(len(self.stub.token_requests()), 1)
        self.clock.now += 2
        lease.heartbeat()
        self.assertEqual(len(self.stub.token_requests()), 2)

    def test_every_call_carries_a_fresh_nonce_and_the_bearer_token(self) -> None:
        lease = self.check_out()
        for _ in range(3):
            lease.heartbeat()
        lease.consume(1)
        lease.check_in()
        requests = self.stub.runtime_requests()
        self.assertEqual(len(requests), 6)
        nonces = [r.nonce for r in requests]
        for nonce in nonces:
            self.assertRegex(nonce or "", NONCE)
        self.assertEqual(len(set(nonces)), len(nonces))
        self.assertTrue(all(r.bearer == "tok-1" for r in requests))

    def test_60000_on_an_older_token_gets_a_new_token_and_retries_once(self) -> None:
        lease = self.check_out()
        self.stub.revoke_tokens()  # the server forgot the token before its expiry
        answer = lease.heartbeat()
        self.assertEqual(answer.used_seconds, 12)
        beats = self.stub.runtime_requests("/heartbeat")
        self.assertEqual([r.bearer for r in beats], ["tok-1", "tok-2"])
        self.assertNotEqual(beats[0].nonce, beats[1].nonce)
        self.assertEqual(len(self.stub.token_requests()), 2)

    def test_a_second_60000_is_the_callers(self) -> None:
        lease = self.check_out()
        refusal = (299, {"code": "60000", "message": "application token check failed", "cause": "c"})
        self.stub.script = [refusal, refusal]
        with self.assertRaises(KeywardError) as refused:
            lease.heartbeat()
        self.assertEqual(refused.exception.code, "60000")
        self.assertEqual(len(self.stub.runtime_requests("/heartbeat")), 2)
        self.assertFalse(lease.ended.is_set())

    def test_60000_on_a_token_just_obtained_is_not_retried(self) -> None:
        self.stub.script = [(299, {"code": "60000", "message": "application token check failed", "cause": "scope"})]
        with self.assertRaises(KeywardError) as refused:
            self.check_out()
        self.assertEqual(refused.exception.code, "60000")
        self.assertEqual(len(self.stub.runtime_requests()), 1)
        self.assertEqual(len(self.stub.token_requests()), 1)

    def test_a_refused_token_request_is_an_auth_error(self) -> None:
        self.stub.token_refusal = (401, {"error": "invalid_client", "error_description": "client authentication failed"})
        with self.assertRaises(KeywardAuthError) as refused:
            self.check_out()
        self.assertIsInstance(refused.exception, KeywardError)
        self.assertEqual(refused.exception.code, "invalid_client")
        self.assertEqual(refused.exception.message, "client authentication failed")
        self.assertEqual(refused.exception.http_status, 401)
        self.assertEqual(self.stub.runtime_requests(), [])


class Refusals(StubTest):
    def test_a_299_answer_is_a_keyward_error_with_code_message_and_cause(self) -> None:
        self.stub.script = [(299, {"code": "90005", "message": "all 1 seats of the product are in use (1 in use)", "cause": "seats"})]
        with self.assertRaises(KeywardError) as refused:
            self.check_out()
        error = refused.exception
        self.assertNotIsInstance(error, KeywardConnectionError)
        self.assertEqual((error.code, error.cause, error.http_status, error.request_id), ("90005", "seats", 299, "req-1"))
        self.assertIn("1 in use", error.message)
        self.assertFalse(error.lease_ended)

    def test_an_answer_that_is_no_envelope_is_a_keyward_error_with_the_status(self) -> None:
        with self.assertRaises(KeywardError) as refused:
            self.session.call("POST", "/nowhere", {})
        self.assertEqual((refused.exception.code, refused.exception.http_status), ("404", 404))

    def test_an_unreachable_server_is_a_connection_error(self) -> None:
        probe = socket.socket()
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
        probe.close()
        session = Session(f"http://127.0.0.1:{port}", "kw_app", "s")
        with self.assertRaises(KeywardConnectionError) as failed:
            session.check_out("fp-this-machine", asset_num="A-1", crm_product_id="P-1")
        self.assertNotIsInstance(failed.exception, KeywardError)
        self.assertIsInstance(failed.exception, ConnectionError)

    def test_a_server_that_does_not_answer_in_time_is_a_connection_error(self) -> None:
        silent = socket.socket()
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)
        self.addCleanup(silent.close)
        session = Session(f"http://127.0.0.1:{silent.getsockname()[1]}", "kw_app", "s", timeout=0.3)
        with self.assertRaises(KeywardConnectionError):
            session.app_token()

    def test_a_product_must_be_named(self) -> None:
        with self.assertRaises(ValueError):
            self.session.check_out("fp-this-machine", asset_num="A-1")


class Leases(StubTest):
    def test_check_out_sends_the_holder_the_product_and_the_machine(self) -> None:
        lease = self.session.check_out("fp-this-machine", asset_num="A-1", crm_product_id="P-1", product_uri="uri-1", offline_days=2)
        self.assertEqual(lease.lease_id, LEASE_ID)
        self.assertEqual(lease.heartbeat_interval_seconds, 10)
        self.assertEqual(lease.status, "granted")
        self.assertEqual(lease.asset_num, "A-1")
        [request] = self.stub.runtime_requests()
        self.assertEqual(request.path, "/runtime/v1/leases")
        self.assertEqual(request.headers["content-type"], "application/json")
        self.assertEqual(request.json, {"fingerprint": "fp-this-machine", "assetNum": "A-1", "crmProductId": "P-1", "productUri": "uri-1", "offlineDays": 2})
        self.assertNotIn("usertoken", request.headers)

    def test_a_member_sends_the_user_token_on_check_out_only(self) -> None:
        lease = self.session.check_out("fp-this-machine", product_uri="uri-1", user_token="member-token")
        lease.heartbeat()
        checkout, beat = self.stub.runtime_requests()
        self.assertEqual(checkout.json, {"fingerprint": "fp-this-machine", "productUri": "uri-1"})
        self.assertEqual(checkout.headers["usertoken"], "member-token")
        self.assertNotIn("usertoken", beat.headers)

    def test_heartbeat_consume_and_check_in_answer_and_name_the_machine(self) -> None:
        lease = self.check_out()
        self.stub.interval = 7
        self.assertEqual(lease.heartbeat(), Heartbeat(LEASE_ID, datetime(2027, 1, 15, 8, 1, 40, tzinfo=timezone.utc), 7, 12))
        self.assertEqual(lease.heartbeat_interval_seconds, 7)
        self.assertEqual(lease.consume(2), Consumption(consumed=2, limit=100, remaining=98))
        self.assertEqual(lease.check_in(), CheckIn(used_seconds=15, seat_free_at=datetime(2027, 1, 15, 8, 0, tzinfo=timezone.utc)))
        beat, consume, check_in = self.stub.runtime_requests()[1:]
        self.assertEqual(beat.path, f"/runtime/v1/leases/{LEASE_ID}/heartbeat")
        self.assertEqual(beat.json, {"fingerprint": "fp-this-machine"})
        self.assertEqual(consume.json, {"fingerprint": "fp-this-machine", "amount": 2})
        self.assertEqual(check_in.path, f"/runtime/v1/leases/{LEASE_ID}/check-in")

    def test_leaving_the_block_checks_the_lease_in_once(self) -> None:
        with self.check_out() as lease:
            lease.heartbeat()
        self.assertIsNotNone(lease.checked_in)
        with self.assertRaises(RuntimeError):
            with self.check_out():
                raise RuntimeError("the program failed")
        self.assertEqual(len(self.stub.runtime_requests("/check-in")), 2)
        self.session.close()
        self.assertEqual(len(self.stub.runtime_requests("/check-in")), 2)

    def test_leaving_the_session_checks_in_what_is_still_open(self) -> None:
        with self.session:
            self.check_out()
            closed = self.check_out()
            closed.check_in()
        self.assertEqual(len(self.stub.runtime_requests("/check-in")), 2)

    def test_a_revoked_lease_ends_and_is_not_checked_in(self) -> None:
        with self.check_out() as lease:
            self.stub.revoked.add(lease.lease_id)
            with self.assertRaises(KeywardError) as refused:
                lease.heartbeat()
            self.assertEqual(refused.exception.code, "90009")
            self.assertTrue(lease.ended.is_set())
            self.assertIs(lease.end_error, refused.exception)
        self.assertEqual(self.stub.runtime_requests("/check-in"), [])

    def test_the_jwks(self) -> None:
        jwks = self.session.fetch_jwks()
        self.assertIsInstance(jwks, Jwks)
        self.assertEqual(jwks.kids, ["k1"])


class HeartbeatLoop(StubTest):
    def test_it_beats_at_the_interval_until_stopped(self) -> None:
        lease = self.check_out()
        loop = lease.start_heartbeats(interval=0.05)
        self.assertTrue(loop.daemon)
        self.assertTrue(wait_until(lambda: loop.beats >= 3))
        lease.stop_heartbeats()
        self.assertFalse(loop.is_alive())
        sent = len(self.stub.runtime_requests("/heartbeat"))
        self.assertEqual(sent, loop.beats)
        lease.start_heartbeats(interval=10)
        with self.assertRaises(RuntimeError):  # one loop at a time
            lease.start_heartbeats(interval=10)
        lease.stop_heartbeats()
        self.assertIsNone(lease.heartbeats)

    def test_it_stops_itself_and_reports_when_the_server_revokes(self) -> None:
        ended: List[KeywardError] = []
        called = threading.Event()

        def on_ended(error: KeywardError) -> None:
            ended.append(error)
            called.set()

        with self.check_out() as lease:
            loop = lease.start_heartbeats(on_ended=on_ended, interval=0.05)
            self.assertTrue(wait_until(lambda: loop.beats >= 2))
            self.stub.revoked.add(lease.lease_id)
            self.assertTrue(called.wait(5))
            self.assertTrue(wait_until(lambda: not loop.is_alive()))
            self.assertEqual([e.code for e in ended], ["90009"])
            self.assertTrue(lease.ended.is_set())
            sent = len(self.stub.runtime_requests("/heartbeat"))
            self.assertFalse(wait_until(lambda: len(self.stub.runtime_requests("/heartbeat")) > sent, timeout=0.3))
        self.assertEqual(self.stub.runtime_requests("/check-in"), [])

    def test_a_passing_failure_is_reported_and_the_loop_goes_on(self) -> None:
        errors: List[BaseException] = []
        lease = self.check_out()
        self.stub.script = [(500, {"code": "500", "message": "network error, retry", "cause": "req"})]
        loop = lease.start_heartbeats(on_error=errors.append, interval=0.05)
        self.assertTrue(wait_until(lambda: loop.beats >= 2))
        lease.check_in()
        self.assertFalse(loop.is_alive())
        self.assertEqual([getattr(e, "code", None) for e in errors], ["500"])
        self.assertEqual(loop.failures, 1)
        self.assertFalse(lease.ended.is_set())


if __name__ == "__main__":
    unittest.main()
