"""Every case of sdks/conformance/leases.json, relay-leases.json and webhooks.json, read from the
repository at test time: a case added there is judged here without a change to this file, and an expectation this
file does not know fails instead of passing unchecked."""

from __future__ import annotations

import os
import tempfile
import unittest
from typing import Any, Dict

from keyward import LEASE_REASONS, Jwks, LeaseError, WebhookError, verify_lease, verify_webhook

from ._support import load_conformance

LEASE_EXPECT_KEYS = {"valid", "reason", "sub", "assetNum", "holderKind", "expBound"}
WEBHOOK_EXPECT_KEYS = {"valid", "id", "type"}


class LeaseVectors(unittest.TestCase):
    FILE = "leases.json"

    @classmethod
    def setUpClass(cls) -> None:
        cls.vectors = load_conformance(cls.FILE)
        # The key set is loaded as an SDK loads a saved JWKS file.
        cls.directory = tempfile.TemporaryDirectory()
        path = os.path.join(cls.directory.name, "jwks.json")
        Jwks.from_dict(cls.vectors["jwks"]).save(path)
        cls.jwks = Jwks.load(path)

    @classmethod
    def tearDownClass(cls) -> None:
        cls.directory.cleanup()

    def test_the_file_is_version_1_with_cases(self) -> None:
        self.assertEqual(self.vectors["version"], 1)
        self.assertGreater(len(self.vectors["cases"]), 0)
        self.assertEqual(len(self.jwks.keys), len(self.vectors["jwks"]["keys"]))

    def test_every_case(self) -> None:
        for case in self.vectors["cases"]:
            with self.subTest(case=case["name"]):
                expect: Dict[str, Any] = case["expect"]
                unknown = set(expect) - LEASE_EXPECT_KEYS
                self.assertFalse(unknown, f"expectations this SDK's test does not check: {unknown}")
                run = lambda: verify_lease(  # noqa: E731
                    case["token"], self.jwks, case["fingerprint"], case.get("audience"), now=case["now"]
                )
                if expect["valid"]:
                    claims = run()
                    self.assertEqual(claims.sub, expect["sub"])
                    self.assertEqual(claims.lease_id, expect["sub"])
                    self.assertEqual(claims.asset_num, expect["assetNum"])
                    self.assertEqual(claims.holder.kind, expect["holderKind"])
                    self.assertEqual(claims.exp_bound, expect["expBound"])
                    self.assertEqual(claims.fingerprint, case["fingerprint"])
                else:
                    self.assertIn(expect["reason"], LEASE_REASONS)
                    with self.assertRaises(LeaseError) as refused:
                        run()
                    self.assertEqual(refused.exception.reason, expect["reason"])

    def test_the_parsed_document_works_as_well_as_a_jwks(self) -> None:
        valid = [c for c in self.vectors["cases"] if c["expect"]["valid"]]
        self.assertTrue(valid)
        for case in valid:
            claims = verify_lease(case["token"], self.vectors["jwks"], case["fingerprint"], now=case["now"])
            self.assertEqual(claims.sub, case["expect"]["sub"])


class RelayLeaseVectors(LeaseVectors):
    """Leases a relay signed, each carrying the pool grant that certifies its key: the same file
    and case shape, judged the same way, with the vendor's key set alone."""

    FILE = "relay-leases.json"

    def test_a_valid_relay_lease_answers_its_grant(self) -> None:
        valid = [c for c in self.vectors["cases"] if c["expect"]["valid"]]
        self.assertTrue(valid)
        for case in valid:
            claims = verify_lease(case["token"], self.jwks, case["fingerprint"], now=case["now"])
            assert claims.grant is not None
            self.assertEqual(len(claims.grant.relay_key), 32)
            self.assertIsNotNone(claims.grant.license_for(claims.asset_num, claims.product.crm_product_id))


class WebhookVectors(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.vectors = load_conformance("webhooks.json")

    def test_the_file_is_version_1_with_cases(self) -> None:
        self.assertEqual(self.vectors["version"], 1)
        self.assertGreater(len(self.vectors["cases"]), 0)

    def test_every_case(self) -> None:
        tolerance = self.vectors["toleranceSeconds"]
        for case in self.vectors["cases"]:
            for body in (case["body"], case["body"].encode("utf-8")):
                with self.subTest(case=case["name"], body=type(body).__name__):
                    expect = case["expect"]
                    unknown = set(expect) - WEBHOOK_EXPECT_KEYS
                    self.assertFalse(unknown, f"expectations this SDK's test does not check: {unknown}")
                    run = lambda: verify_webhook(  # noqa: E731
                        case["secrets"], body, case["headers"], tolerance=tolerance, now=case["now"]
                    )
                    if expect["valid"]:
                        event = run()
                        self.assertEqual(event.id, expect["id"])
                        self.assertEqual(event.type, expect["type"])
                    else:
                        with self.assertRaises(WebhookError):
                            run()


if __name__ == "__main__":
    unittest.main()
