"""Every case of sdks/conformance/activation.json, read from the repository at test time: a case
added there is judged here without a change to this file, and a section, a field or an
expectation this file does not know fails instead of passing unchecked."""

from __future__ import annotations

import os
import tempfile
import unittest
from datetime import timezone
from typing import Any, Dict

from keyward import (
    LEASE_REASONS,
    ActivationFormatError,
    ActivationRequest,
    Jwks,
    LeaseError,
    create_activation_request,
    decode_typed,
    fingerprint_hash,
    read_activation_request,
    read_return_code,
    return_code_for,
    verify_activation,
)

from ._support import load_conformance

SECTIONS = {"version", "now", "jwks", "requests", "typedCodes", "answers", "returns"}
REQUEST_KEYS = {"name", "description", "fields", "fingerprintHash", "code"}
REQUEST_FIELDS = {"appKey", "assetNum", "crmProductId", "days", "createdAt", "nonce", "fingerprint"}
TYPED_KEYS = {"name", "description", "text", "expect"}
TYPED_EXPECT_KEYS = {"bytes", "error", "group"}
ANSWER_KEYS = {"name", "description", "request", "fingerprint", "answer", "expect"}
ANSWER_EXPECT_KEYS = {"valid", "leaseId", "expiresAt", "expBound", "reason"}
RETURN_KEYS = {"name", "description", "request", "leaseId", "code"}


class ActivationVectors(unittest.TestCase):
    vectors: Dict[str, Any]

    @classmethod
    def setUpClass(cls) -> None:
        cls.vectors = load_conformance("activation.json")
        # The key set is loaded as a machine loads the JWKS its software shipped with.
        cls.directory = tempfile.TemporaryDirectory()
        path = os.path.join(cls.directory.name, "jwks.json")
        Jwks.from_dict(cls.vectors["jwks"]).save(path)
        cls.jwks = Jwks.load(path)

    @classmethod
    def tearDownClass(cls) -> None:
        cls.directory.cleanup()

    def known(self, found: Any, known: set, what: str) -> None:
        unknown = set(found) - known
        self.assertFalse(unknown, f"{what} this SDK's test does not check: {unknown}")

    def test_the_file_is_version_1_with_every_section(self) -> None:
        self.assertEqual(self.vectors["version"], 1)
        self.known(self.vectors, SECTIONS, "sections")
        for section in ("requests", "typedCodes", "answers", "returns"):
            self.assertGreater(len(self.vectors[section]), 0, section)
        self.assertIsInstance(self.vectors["now"], int)

    def test_requests_are_written_exactly_and_read_back(self) -> None:
        for case in self.vectors["requests"]:
            with self.subTest(case=case["name"]):
                self.known(case, REQUEST_KEYS, "request keys")
                fields = case["fields"]
                self.known(fields, REQUEST_FIELDS, "request fields")
                request = create_activation_request(
                    fields["appKey"],
                    fields["assetNum"],
                    fields["crmProductId"],
                    fields["days"],
                    fields["fingerprint"],
                    now=fields["createdAt"],
                    nonce=bytes.fromhex(fields["nonce"]),
                )
                self.assertEqual(request.code, case["code"])
                self.assertEqual(request.fingerprint_hash.hex(), case["fingerprintHash"])
                self.assertEqual(fingerprint_hash(fields["fingerprint"]).hex(), case["fingerprintHash"])
                self.assertEqual(request.file["code"], case["code"])

                for text in (case["code"], case["code"].lower().replace("-", " "), request.to_json()):
                    back = read_activation_request(text)
                    self.assertEqual(back.app_key, fields["appKey"])
                    self.assertEqual(back.asset_num, fields["assetNum"])
                    self.assertEqual(back.crm_product_id, fields["crmProductId"])
                    self.assertEqual(back.days, fields["days"])
                    self.assertEqual(back.created_at_s, fields["createdAt"])
                    self.assertEqual(back.nonce.hex(), fields["nonce"])
                    self.assertEqual(back.fingerprint_hash.hex(), case["fingerprintHash"])
                    self.assertEqual(back, request)

    def test_typed_codes_read_as_bytes_or_name_their_group(self) -> None:
        for case in self.vectors["typedCodes"]:
            with self.subTest(case=case["name"]):
                self.known(case, TYPED_KEYS, "typed code keys")
                expect = case["expect"]
                self.known(expect, TYPED_EXPECT_KEYS, "expectations")
                if expect.get("error"):
                    self.assertNotIn("bytes", expect)
                    with self.assertRaises(ActivationFormatError) as refused:
                        decode_typed(case["text"])
                    self.assertEqual(refused.exception.group, expect["group"])
                    self.assertIn(f"group {expect['group']}", str(refused.exception))
                else:
                    self.assertEqual(set(expect), {"bytes"})
                    self.assertEqual(decode_typed(case["text"]).hex(), expect["bytes"])

    def test_answers_verify_or_are_refused_with_the_reason(self) -> None:
        now = self.vectors["now"]
        for case in self.vectors["answers"]:
            with self.subTest(case=case["name"]):
                self.known(case, ANSWER_KEYS, "answer keys")
                expect = case["expect"]
                self.known(expect, ANSWER_EXPECT_KEYS, "expectations")
                request = read_activation_request(case["request"])
                # The pending request as the machine keeps it: a file, saved and loaded.
                with tempfile.TemporaryDirectory() as directory:
                    path = os.path.join(directory, "request.json")
                    request.save(path)
                    pending = ActivationRequest.load(path)
                self.assertEqual(pending, request)
                run = lambda: verify_activation(  # noqa: E731
                    case["answer"], pending, self.jwks, case["fingerprint"], now=now
                )
                if expect["valid"]:
                    self.assertEqual(set(expect), {"valid", "leaseId", "expiresAt", "expBound"})
                    lease = run()
                    self.assertEqual(lease.lease_id, expect["leaseId"])
                    self.assertEqual(lease.expires_at.timestamp(), expect["expiresAt"])
                    self.assertEqual(lease.expires_at.tzinfo, timezone.utc)
                    self.assertEqual(lease.exp_bound, expect["expBound"])
                    self.assertEqual(lease.app_key, request.app_key)
                    self.assertEqual(lease.asset_num, request.asset_num)
                    self.assertEqual(lease.crm_product_id, request.crm_product_id)
                    self.assertLessEqual(lease.issued_at.timestamp(), now)
                    # The parsed JWKS document and the request's code serve as well.
                    again = verify_activation(case["answer"], case["request"], self.vectors["jwks"], case["fingerprint"], now)
                    self.assertEqual(again, lease)
                else:
                    self.assertEqual(set(expect), {"valid", "reason"})
                    self.assertIn(expect["reason"], LEASE_REASONS)
                    with self.assertRaises(LeaseError) as refused:
                        run()
                    self.assertEqual(refused.exception.reason, expect["reason"], str(refused.exception))

    def test_return_codes_are_written_exactly(self) -> None:
        for case in self.vectors["returns"]:
            with self.subTest(case=case["name"]):
                self.known(case, RETURN_KEYS, "return keys")
                request = read_activation_request(case["request"])
                self.assertEqual(return_code_for(request, case["leaseId"]), case["code"])
                self.assertEqual(request.return_code(case["leaseId"]), case["code"])
                back = read_return_code(case["code"])
                self.assertEqual(back.lease_id, case["leaseId"])
                self.assertEqual(back.nonce, request.nonce)
                self.assertEqual(back.fingerprint_hash, request.fingerprint_hash)


if __name__ == "__main__":
    unittest.main()
