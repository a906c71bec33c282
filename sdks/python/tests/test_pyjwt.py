"""An independent check: PyJWT (Debian's python3-jwt), a library Keyward did not write, and
verify_lease judge the conformance vectors alike, and verify the activated lease of the
activation vectors as verify_activation does. The live scenario (live_scenario.py) does the same
with a lease signed by a real Keyward server."""

from __future__ import annotations

import base64
import datetime as _dt
import unittest
from typing import Any, Dict, Optional
from unittest import mock

import jwt

from keyward import LeaseError, activated_fingerprint, read_activation_request, verify_activation, verify_lease

from ._support import load_conformance

# The refusals PyJWT makes itself; the others (typ, shape, fingerprint, license end) are Keyward's.
PYJWT_REASONS = {"signature", "unknown-key", "expired", "not-yet-valid", "audience"}


def _clock_at(seconds: int) -> Any:
    class Frozen(_dt.datetime):
        @classmethod
        def now(cls, tz: Optional[_dt.tzinfo] = None) -> "Frozen":
            return cls.fromtimestamp(seconds, tz)

    return Frozen


def pyjwt_decode(token: str, jwks: Dict[str, Any], audience: Optional[str], now: int) -> Dict[str, Any]:
    """PyJWT's verification: the key by kid from the set, EdDSA only, at the case's clock."""
    key_set = jwt.PyJWKSet.from_dict(jwks)
    kid = jwt.get_unverified_header(token).get("kid")
    key = next((k for k in key_set.keys if k.key_id == kid), None)
    if key is None:
        raise jwt.InvalidKeyError(f"no key {kid}")
    with mock.patch("jwt.api_jwt.datetime", _clock_at(now)):
        claims: Dict[str, Any] = jwt.decode(
            token,
            key.key,
            algorithms=["EdDSA"],
            audience=audience,
            issuer="keyward",
            options={
                "require": ["iss", "sub", "jti", "aud", "iat", "nbf", "exp"],
                "verify_aud": audience is not None,
            },
        )
    return claims


class PyJwtAgrees(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.vectors = load_conformance("leases.json")

    def test_valid_leases_give_the_same_claims(self) -> None:
        valid = [c for c in self.vectors["cases"] if c["expect"]["valid"]]
        self.assertTrue(valid)
        for case in valid:
            with self.subTest(case=case["name"]):
                independent = pyjwt_decode(case["token"], self.vectors["jwks"], case.get("audience"), case["now"])
                claims = verify_lease(
                    case["token"], self.vectors["jwks"], case["fingerprint"], case.get("audience"), now=case["now"]
                )
                self.assertEqual(dict(claims.raw), independent)
                self.assertEqual(independent["sub"], case["expect"]["sub"])

    def test_what_pyjwt_refuses_verify_lease_refuses(self) -> None:
        checked = set()
        for case in self.vectors["cases"]:
            with self.subTest(case=case["name"]):
                try:
                    pyjwt_decode(case["token"], self.vectors["jwks"], case.get("audience"), case["now"])
                # PyJWT raises TypeError on a string iat (it compares it with a number): a refusal.
                except (jwt.PyJWTError, ValueError, TypeError):
                    with self.assertRaises(LeaseError):
                        verify_lease(
                            case["token"], self.vectors["jwks"], case["fingerprint"], case.get("audience"), now=case["now"]
                        )
                    checked.add(case["name"])
                    continue
                # PyJWT accepted it: only a check of Keyward's own may refuse it.
                reason = case["expect"].get("reason")
                self.assertNotIn(reason, PYJWT_REASONS, "PyJWT accepted a lease verify_lease must refuse")
        self.assertTrue(checked, "PyJWT refused no vector at all")


class PyJwtVerifiesTheActivatedLease(unittest.TestCase):
    """The JWS an activation answers with is an offline lease PyJWT verifies (EdDSA, the key by
    kid, the request's appKey as the audience), naming the machine by ``fph1:`` and the request by
    ``activation.nonce``."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.vectors = load_conformance("activation.json")

    def test_the_valid_jws_answers_decode_with_the_same_claims(self) -> None:
        jws = [c for c in self.vectors["answers"] if c["expect"]["valid"] and c["answer"].count(".") == 2 and not c["answer"].lstrip().startswith("{")]
        self.assertTrue(jws, "the vectors hold no activated JWS")
        for case in jws:
            with self.subTest(case=case["name"]):
                request = read_activation_request(case["request"])
                independent = pyjwt_decode(case["answer"], self.vectors["jwks"], request.app_key, self.vectors["now"])
                self.assertEqual(independent["sub"], case["expect"]["leaseId"])
                self.assertEqual(independent["exp"], case["expect"]["expiresAt"])
                self.assertEqual(independent["fingerprint"], activated_fingerprint(case["fingerprint"]))
                self.assertEqual(independent["activation"]["nonce"], base64.urlsafe_b64encode(request.nonce).rstrip(b"=").decode())
                self.assertEqual(independent["assetNum"], request.asset_num)
                self.assertEqual(independent["product"]["crmProductId"], request.crm_product_id)
                lease = verify_activation(case["answer"], request, self.vectors["jwks"], case["fingerprint"], self.vectors["now"])
                assert lease.claims is not None
                self.assertEqual(dict(lease.claims.raw), independent)

    def test_pyjwt_refuses_it_for_another_app_and_after_it_expires(self) -> None:
        case = next(c for c in self.vectors["answers"] if c["name"] == "jws")
        with self.assertRaises(jwt.InvalidAudienceError):
            pyjwt_decode(case["answer"], self.vectors["jwks"], "kw_another_app", self.vectors["now"])
        with self.assertRaises(jwt.ExpiredSignatureError):
            pyjwt_decode(case["answer"], self.vectors["jwks"], None, case["expect"]["expiresAt"] + 1)


if __name__ == "__main__":
    unittest.main()
