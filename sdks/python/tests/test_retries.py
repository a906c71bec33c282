"""The retry policy of runtime calls against the local stand-in: what is sent again (no answer,
429, 503), what is not (a refusal), how long it waits (Retry-After, backoff), and the consume's
Idempotency-Key, one per logical call and the same on each of its attempts."""

from __future__ import annotations

import threading
import unittest
from typing import List
from unittest import mock

import keyward.session
from keyward import KeywardConnectionError, KeywardError, RetryPolicy, Session
from keyward.retry import NO_RETRY, retry_after_of

from ._support import DROP, NONCE, StubKeyward

BUSY = {"code": "503", "message": "the server is busy, retry later", "cause": "overloaded"}
LIMITED = {"code": "429", "message": "too many requests", "cause": "rate limit"}


class RetryTest(unittest.TestCase):
    def setUp(self) -> None:
        self.stub = StubKeyward()
        self.addCleanup(self.stub.close)
        self.waits: List[float] = []
        patcher = mock.patch.object(keyward.session, "_wait", self.record_wait)
        patcher.start()
        self.addCleanup(patcher.stop)
        self.session = Session(self.stub.url, "kw_app", "s", timeout=5)
        self.lease = self.session.check_out("fp-this-machine", asset_num="A-1", crm_product_id="P-1")

    def record_wait(self, interrupt: threading.Event, seconds: float) -> bool:
        """The wait a retry asked for, not taken."""
        self.waits.append(seconds)
        return interrupt.is_set()

    def keys(self) -> List[str]:
        return [r.headers.get("idempotency-key", "") for r in self.stub.runtime_requests("/consume")]


class WhatIsRetried(RetryTest):
    def test_a_503_is_sent_again_with_a_fresh_nonce_and_then_succeeds(self) -> None:
        self.stub.script = [(503, BUSY), (503, BUSY)]
        beat = self.lease.heartbeat()
        self.assertEqual(beat.used_seconds, 12)
        sent = self.stub.runtime_requests("/heartbeat")
        self.assertEqual(len(sent), 3)
        nonces = [r.nonce for r in sent]
        self.assertEqual(len(set(nonces)), 3)
        self.assertTrue(all(NONCE.match(n or "") for n in nonces))
        self.assertEqual(len(self.waits), 2)

    def test_a_429_honours_retry_after(self) -> None:
        self.stub.script = [(429, LIMITED, {"retry-after": "7"})]
        self.lease.consume(1)
        self.assertEqual(len(self.stub.runtime_requests("/consume")), 2)
        self.assertEqual(self.waits, [7.0])

    def test_retry_after_is_capped(self) -> None:
        session = Session(self.stub.url, "kw_app", "s", retry=RetryPolicy(max_retry_after=2.0, max_elapsed=600))
        self.stub.script = [(503, BUSY, {"retry-after": "120"})]
        session.check_out("fp-this-machine", asset_num="A-1", crm_product_id="P-1")
        self.assertEqual(len(self.waits), 1)
        self.assertLessEqual(self.waits[0], 2.0)
        self.assertGreaterEqual(self.waits[0], 0.0)

    def test_a_lost_answer_is_sent_again(self) -> None:
        self.stub.script = [DROP]
        self.assertEqual(self.lease.check_in().used_seconds, 15)
        self.assertEqual(len(self.stub.runtime_requests("/check-in")), 2)

    def test_the_backoff_is_jittered_doubling_and_capped(self) -> None:
        policy = RetryPolicy(initial_backoff=0.5, max_backoff=3.0)
        self.assertEqual(policy.backoff(1, lambda low, high: high), 0.5)
        self.assertEqual(policy.backoff(3, lambda low, high: high), 2.0)
        self.assertEqual(policy.backoff(9, lambda low, high: high), 3.0)
        self.assertEqual(policy.backoff(9, lambda low, high: low), 0.0)

    def test_retry_after_reads_seconds_and_dates(self) -> None:
        self.assertEqual(retry_after_of({"retry-after": "12"}), 12.0)
        self.assertEqual(retry_after_of({"retry-after": "Thu, 01 Jan 1970 00:01:40 GMT"}, lambda: 90.0), 10.0)
        self.assertIsNone(retry_after_of({"retry-after": "soon"}))
        self.assertIsNone(retry_after_of({}))


class WhatIsNot(RetryTest):
    def test_a_299_refusal_is_raised_at_once(self) -> None:
        self.stub.script = [(299, {"code": "90007", "message": "the amount is consumed", "cause": "limit"})]
        with self.assertRaises(KeywardError) as refused:
            self.lease.consume(5)
        self.assertEqual(refused.exception.code, "90007")
        self.assertEqual(len(self.stub.runtime_requests("/consume")), 1)
        self.assertEqual(self.waits, [])

    def test_a_4xx_other_than_429_and_a_500_are_raised_at_once(self) -> None:
        for status in (400, 500):
            self.stub.script = [(status, {"code": str(status), "message": "no", "cause": ""})]
            with self.assertRaises(KeywardError):
                self.lease.heartbeat()
        self.assertEqual(len(self.stub.runtime_requests("/heartbeat")), 2)
        self.assertEqual(self.waits, [])

    def test_it_gives_up_after_max_attempts_with_the_last_failure(self) -> None:
        self.stub.script = [(503, BUSY, {"retry-after": "1"})] * 5
        with self.assertRaises(KeywardError) as failed:
            self.lease.heartbeat()
        self.assertEqual((failed.exception.code, failed.exception.retry_after), ("503", 1.0))
        self.assertEqual(len(self.stub.runtime_requests("/heartbeat")), 4)
        self.assertEqual(len(self.waits), 3)

    def test_it_gives_up_when_the_wait_would_pass_max_elapsed(self) -> None:
        session = Session(self.stub.url, "kw_app", "s", retry=RetryPolicy(max_elapsed=10))
        self.stub.script = [(429, LIMITED, {"retry-after": "20"})]
        with self.assertRaises(KeywardError):
            session.check_out("fp-this-machine", asset_num="A-1", crm_product_id="P-1")
        self.assertEqual(self.waits, [])

    def test_no_retry_sends_once(self) -> None:
        session = Session(self.stub.url, "kw_app", "s", retry=NO_RETRY)
        self.stub.script = [DROP]
        with self.assertRaises(KeywardConnectionError):
            session.check_out("fp-this-machine", asset_num="A-1", crm_product_id="P-1")
        self.assertEqual(len(self.stub.runtime_requests("/leases")), 2)  # the setUp's and this one


class IdempotencyKeys(RetryTest):
    def test_one_key_across_the_attempts_of_a_consume_and_a_new_one_per_consume(self) -> None:
        self.stub.script = [DROP, (503, BUSY)]
        self.lease.consume(2)
        self.lease.consume(2)
        keys = self.keys()
        self.assertEqual(len(keys), 4)
        self.assertEqual(keys[0], keys[1])
        self.assertEqual(keys[1], keys[2])
        self.assertNotEqual(keys[2], keys[3])
        self.assertRegex(keys[0], r"^[A-Za-z0-9_-]{22}$")
        nonces = [r.nonce for r in self.stub.runtime_requests("/consume")]
        self.assertEqual(len(set(nonces)), 4)

    def test_the_callers_own_key(self) -> None:
        self.lease.consume(1, idempotency_key="job-42/step-3")
        self.assertEqual(self.keys(), ["job-42/step-3"])
        for bad in ("", "with space", "x" * 256, "é"):
            with self.assertRaises(ValueError):
                self.lease.consume(1, idempotency_key=bad)
        self.assertEqual(len(self.keys()), 1)

    def test_other_calls_carry_no_key(self) -> None:
        self.lease.heartbeat()
        self.lease.check_in()
        self.assertTrue(all("idempotency-key" not in r.headers for r in self.stub.runtime_requests()))


if __name__ == "__main__":
    unittest.main()
