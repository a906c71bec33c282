"""verify_webhook beyond the vectors: header sources, the tolerance, a receiver's bad secret."""

from __future__ import annotations

import base64
import email.message
import hashlib
import hmac
import json
import unittest
from datetime import datetime, timezone

from keyward import WebhookError, verify_webhook

SECRET = "whsec_" + base64.b64encode(b"a secret of thirty-two bytes!!!!").decode()
NOW = 1_800_000_000


def signed(body: bytes, message_id: str = "evt_1", timestamp: int = NOW, secret: str = SECRET) -> dict:
    key = base64.b64decode(secret[len("whsec_") :])
    mac = hmac.new(key, f"{message_id}.{timestamp}.".encode() + body, hashlib.sha256).digest()
    return {
        "webhook-id": message_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": "v1," + base64.b64encode(mac).decode(),
    }


BODY = json.dumps({"id": "evt_1", "type": "lease.revoked", "timestamp": "2027-01-15T08:00:00.000Z",
                   "scope": {"channels": ["CRM"], "enterpriseId": None, "appKey": "kw_app"},
                   "data": {"leaseId": "l-1"}, "requestId": "r-1"}).encode()


class Webhooks(unittest.TestCase):
    def test_the_event(self) -> None:
        event = verify_webhook(SECRET, BODY, signed(BODY), now=NOW)
        self.assertEqual((event.id, event.type, event.request_id), ("evt_1", "lease.revoked", "r-1"))
        self.assertEqual(event.data, {"leaseId": "l-1"})
        self.assertEqual(event.scope["appKey"], "kw_app")
        self.assertEqual(event.timestamp, datetime(2027, 1, 15, 8, 0, tzinfo=timezone.utc))
        # A time that does not read is None; the event is still the signed one.
        odd = json.dumps({"id": "evt_2", "type": "lease.revoked", "timestamp": "yesterday"}).encode()
        self.assertIsNone(verify_webhook(SECRET, odd, signed(odd, message_id="evt_2"), now=NOW).timestamp)

    def test_headers_of_http_server_and_of_any_case(self) -> None:
        message = email.message.Message()
        for name, value in signed(BODY).items():
            message[name.title()] = value
        self.assertEqual(verify_webhook([SECRET], BODY, message, now=NOW).id, "evt_1")
        upper = {name.upper(): value for name, value in signed(BODY).items()}
        self.assertEqual(verify_webhook(SECRET, BODY, upper, now=NOW).id, "evt_1")
        listed = {name: [value] for name, value in signed(BODY).items()}
        self.assertEqual(verify_webhook(SECRET, BODY, listed, now=NOW).id, "evt_1")

    def test_the_tolerance_either_way(self) -> None:
        verify_webhook(SECRET, BODY, signed(BODY, timestamp=NOW - 300), now=NOW)
        verify_webhook(SECRET, BODY, signed(BODY, timestamp=NOW + 300), now=NOW)
        for moved in (NOW - 301, NOW + 301):
            with self.assertRaises(WebhookError):
                verify_webhook(SECRET, BODY, signed(BODY, timestamp=moved), now=NOW)
        verify_webhook(SECRET, BODY, signed(BODY, timestamp=NOW - 1000), tolerance=1000, now=NOW)

    def test_refusals(self) -> None:
        cases = {
            "an empty header": {**signed(BODY), "webhook-id": ""},
            "a timestamp that is no number": {**signed(BODY), "webhook-timestamp": "18e8"},
            "a signature of one character less": {**signed(BODY), "webhook-signature": signed(BODY)["webhook-signature"][:-2]},
        }
        for name, headers in cases.items():
            with self.subTest(name), self.assertRaises(WebhookError):
                verify_webhook(SECRET, BODY, headers, now=NOW)
        not_json = b"id=evt_1"
        with self.assertRaises(WebhookError):
            verify_webhook(SECRET, not_json, signed(not_json), now=NOW)

    def test_a_secret_that_is_not_base64_is_the_receivers_error(self) -> None:
        with self.assertRaises(ValueError):
            verify_webhook("whsec_***", BODY, signed(BODY), now=NOW)


if __name__ == "__main__":
    unittest.main()
