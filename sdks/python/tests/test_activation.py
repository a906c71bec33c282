"""Offline activation beyond the vectors: what the typed code catches, requests and their files,
the order of verify_activation's checks on answers with several defects, both answer forms, and
the errors' fields."""

from __future__ import annotations

import base64
import json
import os
import pickle
import random
import stat
import struct
import tempfile
import time
import unittest
import uuid
from datetime import datetime, timezone
from typing import Any, Dict, Optional

from keyward import (
    ActivationFormatError,
    ActivationRequest,
    LeaseError,
    activated_fingerprint,
    create_activation_request,
    decode_typed,
    encode_typed,
    fingerprint_hash,
    read_activation_request,
    verify_activation,
    verify_lease,
)
from keyward.activation import CROCKFORD, TYPED_LEASE_LABEL, binding_of

from ._support import NOW, Signer, b64url, lease_payload

DAY = 86_400


def at(seconds: int) -> datetime:
    return datetime.fromtimestamp(seconds, tz=timezone.utc)
FINGERPRINT = "fp-this-machine"
LEASE_ID = "01938f2e-7c1a-7000-8000-00000000b001"
NONCE = bytes.fromhex("0102030405060708")


def make_request(**changes: Any) -> ActivationRequest:
    options: Dict[str, Any] = {
        "app_key": "kw_app",
        "asset_num": "A-1",
        "crm_product_id": "P-1",
        "days": 30,
        "fingerprint": FINGERPRINT,
        "now": NOW - 600,
        "nonce": NONCE,
    }
    options.update(changes)
    return create_activation_request(
        options.pop("app_key"),
        options.pop("asset_num"),
        options.pop("crm_product_id"),
        options.pop("days"),
        options.pop("fingerprint"),
        **options,
    )


class ActivationSigner(Signer):
    """The tests' own key, signing typed answers and activated leases as Keyward does."""

    def __init__(self, kid: str = "a2V5d2FyZC10ZXN0LWtleQ") -> None:
        super().__init__(kid)

    def typed(
        self,
        request: ActivationRequest,
        *,
        issued_at: int = NOW - 300,
        expires_at: int = NOW + 30 * DAY,
        exp_bound: int = 0,
        nonce: Optional[bytes] = None,
        machine: Optional[bytes] = None,
        binding: Optional[bytes] = None,
        kind: int = 0x4C,
        version: int = 1,
        tamper: bool = False,
    ) -> str:
        body = (
            bytes([kind, version])
            + base64.urlsafe_b64decode(self.kid + "=" * (-len(self.kid) % 4))[:4]
            + uuid.UUID(LEASE_ID).bytes
            + struct.pack(">IIB", issued_at, expires_at, exp_bound)
            + (request.nonce if nonce is None else nonce)
            + (request.fingerprint_hash if machine is None else machine)
            + (request.binding if binding is None else binding)
        )
        signature = self.key.sign(TYPED_LEASE_LABEL + body)
        if tamper:
            body = body[:-1] + bytes([body[-1] ^ 1])
        return encode_typed(body + signature)

    def jws(self, request: ActivationRequest, **changes: Any) -> str:
        claims: Dict[str, Any] = {
            "sub": LEASE_ID,
            "jti": LEASE_ID,
            "aud": request.app_key,
            "iat": NOW - 300,
            "nbf": NOW - 300,
            "exp": NOW + 30 * DAY,
            "holder": {"kind": "lock", "assetNum": request.asset_num},
            "fingerprint": request.activated_fingerprint,
            "assetNum": request.asset_num,
            "product": {"crmProductId": request.crm_product_id, "productUri": "uri-1", "productName": "Modeler"},
            "activation": {"nonce": b64url(request.nonce)},
        }
        claims.update(changes)
        return self.sign(lease_payload(**claims))


class TypedCode(unittest.TestCase):
    CODE = make_request().code

    def test_bytes_come_back_whatever_their_length(self) -> None:
        generator = random.Random(7)
        for length in range(1, 90):
            data = bytes(generator.randrange(256) for _ in range(length))
            code = encode_typed(data)
            self.assertTrue(all(len(group) <= 6 for group in code.split("-")))
            self.assertEqual(decode_typed(code), data, code)

    def test_any_one_character_typed_wrong_names_its_group(self) -> None:
        groups = self.CODE.split("-")
        tried = 0
        for g, group in enumerate(groups):
            for at, char in enumerate(group):
                for other in CROCKFORD:
                    if other == char:
                        continue
                    wrong = groups[:g] + [group[:at] + other + group[at + 1 :]] + groups[g + 1 :]
                    with self.assertRaises(ActivationFormatError) as refused:
                        decode_typed("-".join(wrong))
                    self.assertEqual(refused.exception.group, g + 1)
                    tried += 1
        self.assertEqual(tried, len(self.CODE.replace("-", "")) * 31)

    def test_two_groups_swapped_do_not_check(self) -> None:
        groups = self.CODE.split("-")
        for g in range(len(groups) - 2):
            swapped = groups[:g] + [groups[g + 1], groups[g]] + groups[g + 2 :]
            with self.assertRaises(ActivationFormatError) as refused:
                decode_typed("-".join(swapped))
            self.assertEqual(refused.exception.group, g + 1)

    def test_a_reader_forgives_case_look_alikes_spaces_and_missing_dashes(self) -> None:
        data = decode_typed(self.CODE)
        sloppy = self.CODE.lower().replace("0", "o").replace("1", "l")
        for text in (sloppy, self.CODE.replace("-", ""), " " + self.CODE.replace("-", " \t ") + "\n"):
            self.assertEqual(decode_typed(text), data, text)
        self.assertEqual(decode_typed(self.CODE.replace("1", "I")), data)

    def test_what_does_not_read(self) -> None:
        full = encode_typed(bytes(range(25)))  # 40 values: eight whole groups
        self.assertEqual([len(group) for group in full.split("-")], [6] * 8)
        for text, group in (("", None), (" - ", None), (full + "-7", 9), ("005HCD-8UC6XD", 2), ("005HC*", 1)):
            with self.subTest(text=text):
                with self.assertRaises(ActivationFormatError) as refused:
                    decode_typed(text)
                self.assertEqual(refused.exception.group, group, str(refused.exception))
        self.assertIsInstance(ActivationFormatError("x"), ValueError)


class Requests(unittest.TestCase):
    def test_a_request_has_a_fresh_random_nonce_and_the_time_now(self) -> None:
        before = int(time.time())
        one = create_activation_request("kw_app", "A-1", "P-1", 7, FINGERPRINT)
        two = create_activation_request("kw_app", "A-1", "P-1", 7, FINGERPRINT)
        self.assertEqual(len(one.nonce), 8)
        self.assertNotEqual(one.nonce, two.nonce)
        self.assertNotEqual(one.code, two.code)
        self.assertTrue(before <= one.created_at_s <= int(time.time()))
        self.assertEqual(one.created_at.tzinfo, timezone.utc)
        self.assertEqual(one.fingerprint_hash, fingerprint_hash(FINGERPRINT))
        self.assertNotIn(FINGERPRINT, one.to_json())

    def test_now_may_be_a_datetime(self) -> None:
        moment = datetime.fromtimestamp(NOW, tz=timezone.utc)
        self.assertEqual(make_request(now=moment).created_at, at(NOW))

    def test_what_cannot_be_asked(self) -> None:
        for changes in (
            {"days": 0},
            {"days": 366},
            {"days": True},
            {"days": "30"},
            {"app_key": ""},
            {"asset_num": "x" * 256},
            {"crm_product_id": "é" * 128},
            {"nonce": b"short"},
            {"now": -1},
        ):
            with self.subTest(changes=changes):
                with self.assertRaises(ActivationFormatError):
                    make_request(**changes)
        self.assertEqual(make_request(asset_num="x" * 255, days=365).asset_num, "x" * 255)

    def test_its_file_keeps_the_whole_request_for_its_owner_alone(self) -> None:
        request = make_request(crm_product_id="Simulateur-é")
        with tempfile.TemporaryDirectory() as directory:
            path = os.path.join(directory, "request.json")
            request.save(path)
            self.assertEqual(stat.S_IMODE(os.stat(path).st_mode), 0o600)
            with open(path, encoding="utf-8") as source:
                document = json.load(source)
            self.assertEqual(ActivationRequest.load(path), request)
            self.assertEqual(ActivationRequest.load(path).nonce, NONCE)
        self.assertEqual(
            document,
            {
                "keyward": "activation-request",
                "version": 1,
                "code": request.code,
                "appKey": "kw_app",
                "assetNum": "A-1",
                "crmProductId": "Simulateur-é",
                "days": 30,
                "createdAt": datetime.fromtimestamp(NOW - 600, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z"),
            },
        )
        # The server reads the code alone: the other fields are for people.
        document["days"] = 365
        self.assertEqual(read_activation_request(json.dumps(document)).days, 30)

    def test_what_is_no_request(self) -> None:
        request = make_request()
        body = request.to_bytes()
        answer = ActivationSigner().typed(request)
        cases = {
            "an answer": (answer, "this is an activation answer, not an activation request"),
            "version 2": (encode_typed(body[:1] + b"\x02" + body[2:]), "version 2"),
            "bytes too many": (encode_typed(body + b"\x00"), "1 bytes too many"),
            "cut short": (encode_typed(body[:-3]), "cut short"),
            "no days": (encode_typed(body[:2] + b"\x00\x00" + body[4:]), "0 days"),
            "not JSON": ('{"keyward":', "not JSON"),
            "another file": ('{"keyward":"activation-answer","code":"' + request.code + '"}', "not a Keyward activation request"),
        }
        for name, (text, message) in cases.items():
            with self.subTest(case=name):
                with self.assertRaises(ActivationFormatError) as refused:
                    read_activation_request(text)
                self.assertIn(message, str(refused.exception))
                self.assertIsNone(refused.exception.group)
        groups = request.code.split("-")
        groups[2] = groups[2][:1] + ("Z" if groups[2][1] != "Z" else "Y") + groups[2][2:]
        with self.assertRaises(ActivationFormatError) as mistyped:
            read_activation_request("-".join(groups))
        self.assertEqual(mistyped.exception.group, 3)


class Answers(unittest.TestCase):
    def setUp(self) -> None:
        self.signer = ActivationSigner()
        self.request = make_request()

    def verify(self, answer: str, fingerprint: str = FINGERPRINT, now: Any = NOW, request: Optional[ActivationRequest] = None) -> Any:
        return verify_activation(answer, request or self.request, self.signer.jwks, fingerprint, now)

    def reason(self, answer: Any, **options: Any) -> str:
        with self.assertRaises(LeaseError) as refused:
            self.verify(answer, **options)
        return refused.exception.reason

    def test_a_typed_answer_says_what_was_activated(self) -> None:
        for bound, name in enumerate(("offline-days", "license-end", "time-duration")):
            lease = self.verify(self.signer.typed(self.request, exp_bound=bound, expires_at=NOW + DAY))
            self.assertEqual(
                (lease.lease_id, lease.issued_at, lease.expires_at, lease.exp_bound),
                (LEASE_ID, at(NOW - 300), at(NOW + DAY), name),
            )
            self.assertEqual((lease.app_key, lease.asset_num, lease.crm_product_id), ("kw_app", "A-1", "P-1"))
            self.assertIsNone(lease.lease)
        self.assertEqual(self.reason(self.signer.typed(self.request, exp_bound=3)), "malformed")

    def test_the_clock_edges(self) -> None:
        self.assertEqual(self.verify(self.signer.typed(self.request, issued_at=NOW)).issued_at, at(NOW))
        self.assertEqual(self.reason(self.signer.typed(self.request, issued_at=NOW + 1)), "not-yet-valid")
        self.assertEqual(self.reason(self.signer.typed(self.request, expires_at=NOW)), "expired")
        self.verify(self.signer.typed(self.request, expires_at=NOW + 1))
        later = datetime.fromtimestamp(NOW + 31 * DAY, tz=timezone.utc)
        self.assertEqual(self.reason(self.signer.typed(self.request), now=later), "expired")

    def test_the_first_check_that_fails_answers(self) -> None:
        other_nonce = b"\x09" * 8
        other_machine = fingerprint_hash("fp-another-machine")
        expired = {"expires_at": NOW - 60}
        cases = [
            ("unknown key before its signature", ActivationSigner("b3RoZXIta2V5").typed(self.request, tamper=True), "unknown-key"),
            ("signature before its time", self.signer.typed(self.request, tamper=True, **expired), "signature"),
            ("not yet valid before the request", self.signer.typed(self.request, issued_at=NOW + 60, nonce=other_nonce), "not-yet-valid"),
            ("expired before the request", self.signer.typed(self.request, nonce=other_nonce, **expired), "expired"),
            ("the request before the machine", self.signer.typed(self.request, nonce=other_nonce, machine=other_machine), "request"),
            ("the machine", self.signer.typed(self.request, machine=other_machine), "fingerprint"),
        ]
        for name, answer, reason in cases:
            with self.subTest(case=name):
                self.assertEqual(self.reason(answer), reason)

    def test_another_lock_product_or_app_is_another_request(self) -> None:
        answer = self.signer.typed(self.request)
        for changes in ({"asset_num": "A-2"}, {"crm_product_id": "P-2"}, {"app_key": "kw_other"}, {"nonce": b"\x00" * 8}):
            with self.subTest(changes=changes):
                self.assertEqual(self.reason(answer, request=make_request(**changes)), "request")
        # The days asked and the time of the request are not what the answer binds.
        self.verify(answer, request=make_request(days=1, now=NOW - 3600))
        self.assertEqual(binding_of("kw_app", "A-1", "P-1"), self.request.binding)

    def test_the_fingerprint_is_this_machines(self) -> None:
        self.assertEqual(self.reason(self.signer.typed(self.request), fingerprint="fp-another-machine"), "fingerprint")

    def test_what_is_no_answer(self) -> None:
        typed = self.signer.typed(self.request)
        groups = typed.split("-")
        groups[4] = groups[4][:2] + ("0" if groups[4][2] != "0" else "1") + groups[4][3:]
        for name, answer in (
            ("a request", self.request.code),
            ("a return code", self.request.return_code(LEASE_ID)),
            ("version 2", self.signer.typed(self.request, version=2)),
            ("cut short", "-".join(typed.split("-")[:-2])),
            ("empty", "  "),
            ("not JSON", "{nope"),
            ("another file", json.dumps({"keyward": "activation-request", "lease": typed})),
            ("a file without its lease", json.dumps({"keyward": "activation-answer", "code": typed})),
            ("not text", b"bytes"),
        ):
            with self.subTest(case=name):
                self.assertEqual(self.reason(answer), "malformed")
        with self.assertRaises(LeaseError) as mistyped:
            self.verify("-".join(groups))
        self.assertEqual((mistyped.exception.reason, mistyped.exception.group), ("malformed", 5))
        self.assertIn("group 5", str(mistyped.exception))

    def test_keys_sharing_a_kid_prefix_are_each_tried(self) -> None:
        twin = ActivationSigner(self.signer.kid + "Zm9v")
        keys = {"keys": [twin.jwk, self.signer.jwk]}
        lease = verify_activation(self.signer.typed(self.request), self.request, keys, FINGERPRINT, NOW)
        self.assertEqual(lease.lease_id, LEASE_ID)

    def test_a_signed_lease_alone_or_in_its_file(self) -> None:
        token = self.signer.jws(self.request, expBound="license-end")
        answer_file = json.dumps(
            {"keyward": "activation-answer", "version": 1, "leaseId": LEASE_ID, "lease": token, "code": "", "expiresAt": ""}
        )
        for answer in (token, "\n" + token + "\n", answer_file):
            lease = self.verify(answer)
            self.assertEqual(lease.lease_id, LEASE_ID)
            self.assertEqual((lease.issued_at, lease.expires_at, lease.exp_bound), (at(NOW - 300), at(NOW + 30 * DAY), "license-end"))
            self.assertEqual(lease.lease, token)
            self.assertIsNotNone(lease.claims)
        # Kept, the lease verifies later as any offline lease, with the activated fingerprint.
        claims = verify_lease(token, self.signer.jwks, activated_fingerprint(FINGERPRINT), "kw_app", now=NOW)
        self.assertEqual(claims.fingerprint, self.request.activated_fingerprint)
        self.assertTrue(self.request.activated_fingerprint.startswith("fph1:"))
        self.assertEqual(len(self.request.activated_fingerprint), 5 + 16)

    def test_a_signed_lease_is_refused_as_verify_lease_refuses_and_for_another_request(self) -> None:
        cases = [
            ({"aud": "kw_other"}, "audience"),
            ({"exp": NOW}, "expired"),
            ({"fingerprint": FINGERPRINT}, "fingerprint"),
            ({"limits": {"endDate": (NOW - 1) * 1000}}, "license-ended"),
            ({"activation": ...}, "request"),
            ({"activation": {"nonce": b64url(b"\x09" * 8)}}, "request"),
            ({"activation": {"nonce": None}}, "request"),
            ({"activation": "x"}, "request"),
            ({"assetNum": "A-2", "holder": {"kind": "lock", "assetNum": "A-2"}}, "request"),
            ({"product": {"crmProductId": "P-2"}}, "request"),
        ]
        for changes, reason in cases:
            with self.subTest(changes=changes):
                self.assertEqual(self.reason(self.signer.jws(self.request, **changes)), reason)
        self.assertEqual(self.reason(ActivationSigner("b3RoZXIta2V5").jws(self.request)), "unknown-key")


class Errors(unittest.TestCase):
    def test_they_keep_the_group_through_pickling(self) -> None:
        for error in (
            LeaseError("malformed", "group 5 does not check", 5),
            LeaseError("request", "it answers another activation request"),
            ActivationFormatError("group 2 is cut short", 2),
        ):
            with self.subTest(error=str(error)):
                copy = pickle.loads(pickle.dumps(error))
                self.assertIs(type(copy), type(error))
                self.assertEqual(str(copy), str(error))
                self.assertEqual(vars(copy), vars(error))
                self.assertEqual(copy.group, error.group)


if __name__ == "__main__":
    unittest.main()
