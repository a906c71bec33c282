"""verify_lease of a relay's lease beyond the vectors: the order of the grant's checks among the
lease's, the grant's claim types, what the lease may say within its grant, and the grant the
answer carries."""

from __future__ import annotations

import unittest
from datetime import datetime, timezone
from typing import Any, Dict, Optional

from keyward import GRANT_TYP, GrantedLicense, LeaseError, verify_lease

from ._support import NOW, Signer, changed, lease_payload


def grant_payload(relay: Signer, /, **changes: Any) -> Dict[str, Any]:
    """A valid pool grant at NOW certifying the relay's key, changed as asked (... removes)."""
    payload: Dict[str, Any] = {
        "iss": "keyward",
        "sub": "relay-1",
        "jti": "grant-1",
        "iat": NOW - 86400,
        "nbf": NOW - 86400,
        "exp": NOW + 30 * 86400,
        "relay": {
            "key": {"kty": "OKP", "crv": "Ed25519", "x": relay.jwk["x"], "kid": relay.kid},
            "fingerprint": "fp-relay-host",
        },
        "licenses": [
            {"assetNum": "A-1", "crmProductId": "P-1", "seats": 10},
            {"assetNum": "A-2", "crmProductId": None, "seats": 2},
        ],
        "machines": None,
        "overage": {"policy": "refuse", "seats": 0},
    }
    return changed(payload, changes)


class RelayLeases(unittest.TestCase):
    def setUp(self) -> None:
        self.vendor = Signer(kid="vendor-key")
        self.relay = Signer(kid="relay-key")

    def grant(self, **changes: Any) -> str:
        return self.vendor.sign(grant_payload(self.relay, **changes), header={"typ": GRANT_TYP})

    def lease(self, grant: Optional[str] = None, header: Optional[Dict[str, Any]] = None, **changes: Any) -> str:
        protected: Dict[str, Any] = {"grant": self.grant() if grant is None else grant}
        protected.update(header or {})
        return self.relay.sign(lease_payload(**changes), header=protected)

    def reason(self, token: str, fingerprint: str = "fp-this-machine", now: float = NOW) -> str:
        with self.assertRaises(LeaseError) as refused:
            verify_lease(token, self.vendor.jwks, fingerprint, "kw_app", now=now)
        return refused.exception.reason

    def test_a_relay_lease_verifies_with_the_vendors_keys_and_answers_its_grant(self) -> None:
        claims = verify_lease(self.lease(), self.vendor.jwks, "fp-this-machine", "kw_app", now=NOW)
        self.assertEqual(claims.asset_num, "A-1")
        grant = claims.grant
        assert grant is not None
        self.assertEqual((grant.relay_id, grant.grant_id, grant.relay_kid), ("relay-1", "grant-1", "relay-key"))
        self.assertEqual(grant.relay_fingerprint, "fp-relay-host")
        self.assertEqual(grant.expires_at, datetime.fromtimestamp(NOW + 30 * 86400, tz=timezone.utc))
        self.assertEqual(grant.licenses[1], GrantedLicense("A-2", None, 2))
        self.assertIsNone(grant.machines)
        self.assertEqual(grant.raw["overage"], {"policy": "refuse", "seats": 0})
        # A vendor's lease carries no grant.
        plain = verify_lease(self.vendor.sign(lease_payload()), self.vendor.jwks, "fp-this-machine", now=NOW)
        self.assertIsNone(plain.grant)

    def test_the_lease_form_and_alg_come_before_the_grant(self) -> None:
        expired = self.grant(exp=NOW - 1)
        self.assertEqual(self.reason(self.lease(grant=expired, header={"alg": "HS256"})), "signature")
        self.assertEqual(self.reason(self.lease(grant=expired, header={"crit": ["exp"]})), "malformed")

    def test_the_grant_comes_before_the_leases_key_and_claims(self) -> None:
        # A lease naming no key, expired, for another machine: its grant answers first.
        many = {"header": {"kid": None}, "exp": NOW - 1, "fingerprint": "fp-elsewhere"}
        self.assertEqual(self.reason(self.lease(grant="not.a.jws", **many)), "malformed")
        self.assertEqual(self.reason(self.lease(grant=self.grant(nbf=NOW + 1), **many)), "not-yet-valid")
        self.assertEqual(self.reason(self.lease(grant=self.grant(exp=NOW), **many)), "grant-expired")
        self.assertEqual(self.reason(self.lease(**many)), "unknown-key")

    def test_the_grants_own_checks_in_order(self) -> None:
        other = Signer(kid="vendor-key")  # the vendor's kid, another key
        bad_typ = self.vendor.sign(grant_payload(self.relay, exp=NOW - 1))  # typ of a lease
        forged = other.sign(grant_payload(self.relay, exp=NOW - 1), header={"typ": "nonsense"})
        no_kid = self.vendor.sign(grant_payload(self.relay), header={"typ": GRANT_TYP, "kid": 7})
        hs256 = self.vendor.sign(grant_payload(self.relay), header={"typ": GRANT_TYP, "alg": "HS256", "kid": 7})
        self.assertEqual(self.reason(self.lease(grant=hs256)), "signature")
        self.assertEqual(self.reason(self.lease(grant=no_kid)), "unknown-key")
        self.assertEqual(self.reason(self.lease(grant=forged)), "signature")
        self.assertEqual(self.reason(self.lease(grant=bad_typ)), "malformed")
        self.assertEqual(self.reason(self.lease(grant=self.grant(exp=NOW - 1, iss="x"))), "malformed")
        for not_a_string in (None, 42, ["a.b.c"], {"grant": "a.b.c"}):
            self.assertEqual(self.reason(self.lease(header={"grant": not_a_string})), "malformed")
        # The grant's typ is compared as a media type.
        for typ in ("application/keyward-grant+jwt", "Keyward-Grant+JWT"):
            grant = self.vendor.sign(grant_payload(self.relay), header={"typ": typ})
            verify_lease(self.lease(grant=grant), self.vendor.jwks, "fp-this-machine", now=NOW)

    def test_the_grants_claim_types(self) -> None:
        key = grant_payload(self.relay)["relay"]["key"]
        relay_with = lambda **c: {"key": {**key, **c}, "fingerprint": "fp-relay-host"}  # noqa: E731
        malformed = [
            {"sub": 1},
            {"jti": ...},
            {"iat": 1.5},
            {"nbf": "0"},
            {"exp": 253402300800},
            {"relay": ...},
            {"relay": {"key": key}},
            {"relay": relay_with(kty="EC")},
            {"relay": relay_with(crv="Ed448")},
            {"relay": relay_with(x=key["x"] + "=")},
            {"relay": relay_with(x=key["x"][:-1] + "B")},  # unused bits set
            {"relay": relay_with(kid=None)},
            {"licenses": []},
            {"licenses": None},
            {"licenses": [{"assetNum": "A-1", "seats": 10}]},  # crmProductId absent
            {"licenses": [{"assetNum": "A-1", "crmProductId": 5, "seats": 10}]},
            {"licenses": [{"assetNum": 1, "crmProductId": "P-1", "seats": 10}]},
            {"licenses": [{"assetNum": "A-1", "crmProductId": "P-1", "seats": True}]},
            {"licenses": [{"assetNum": "A-1", "crmProductId": "P-1", "seats": 1.5}]},
            {"licenses": [{"assetNum": "A-1", "crmProductId": "P-1", "seats": 1_000_000_001}]},
            {"licenses": [{"assetNum": "A-1", "crmProductId": "P-1", "seats": 10**400}]},
            {"licenses": ["A-1"]},
            {"machines": "fp-this-machine"},
            {"machines": [1]},
        ]
        for changes in malformed:
            with self.subTest(changes=repr(changes)[:80]):
                self.assertEqual(self.reason(self.lease(grant=self.grant(**changes))), "malformed")
        # Whole seats written as a float, and machines left out, are a grant's.
        seats = [{"assetNum": "A-1", "crmProductId": "P-1", "seats": 10.0}]
        for changes in ({"licenses": seats}, {"machines": ...}):
            verify_lease(self.lease(grant=self.grant(**changes)), self.vendor.jwks, "fp-this-machine", now=NOW)

    def test_only_the_granted_key_signs(self) -> None:
        # A vendor's lease with a grant added, and the relay key under another kid.
        self.assertEqual(self.reason(self.vendor.sign(lease_payload(), header={"grant": self.grant()})), "unknown-key")
        self.assertEqual(self.reason(self.lease(header={"kid": "another"})), "unknown-key")
        impostor = Signer(kid="relay-key")
        self.assertEqual(self.reason(impostor.sign(lease_payload(), header={"grant": self.grant()})), "signature")
        # The relay's key alone is no key of the vendor's.
        self.assertEqual(self.reason(self.relay.sign(lease_payload())), "unknown-key")

    def test_the_lease_within_its_grant(self) -> None:
        limits = lease_payload()["limits"]
        beyond = [
            {"exp": NOW + 30 * 86400 + 1},
            {"assetNum": "A-2"},
            {"product": {"crmProductId": "P-2"}},
            {"product": {"productUri": "uri-1"}},  # no crmProductId: matches no license
            {"assetNum": "A-2", "product": {"crmProductId": "P-1"}},
            {"limits": {**limits, "concurrent": 11}},
            {"limits": {**limits, "concurrent": None}},
            {"limits": {key: value for key, value in limits.items() if key != "concurrent"}},
            {"limits": {**limits, "concurrent": "1"}},
            {"limits": {**limits, "concurrent": True}},
            {"limits": {**limits, "concurrent": 10**400}},
        ]
        for changes in beyond:
            with self.subTest(changes=repr(changes)[:80]):
                self.assertEqual(self.reason(self.lease(**changes)), "beyond-grant")
        within = [
            {"exp": NOW + 30 * 86400},
            {"limits": {**limits, "concurrent": 10}},
            {"assetNum": "A-2", "product": {"crmProductId": None}, "limits": {**limits, "concurrent": 2}},
        ]
        for changes in within:
            with self.subTest(changes=repr(changes)[:80]):
                verify_lease(self.lease(**changes), self.vendor.jwks, "fp-this-machine", now=NOW)

    def test_the_machines_a_grant_lists(self) -> None:
        listed = self.grant(machines=["fp-other", "fp-this-machine"])
        verify_lease(self.lease(grant=listed), self.vendor.jwks, "fp-this-machine", now=NOW)
        unlisted = self.grant(machines=["fp-other"])
        self.assertEqual(self.reason(self.lease(grant=unlisted)), "beyond-grant")
        # Beyond the grant is said before the machine and the license's end.
        ended = {**lease_payload()["limits"], "endDate": (NOW - 1) * 1000}
        token = self.lease(grant=unlisted, fingerprint="fp-elsewhere", limits=ended)
        self.assertEqual(self.reason(token, fingerprint="fp-this-machine"), "beyond-grant")
        self.assertEqual(self.reason(self.lease(limits=ended)), "license-ended")

    def test_the_leases_claims_come_before_beyond_grant(self) -> None:
        self.assertEqual(self.reason(self.lease(exp=NOW, assetNum="A-9")), "expired")
        self.assertEqual(self.reason(self.lease(holder=None, assetNum="A-9")), "malformed")

    def test_a_huge_integer_is_refused_not_a_crash(self) -> None:
        self.assertEqual(self.reason(self.vendor.sign(lease_payload(exp=10**400))), "malformed")
        self.assertEqual(self.reason(self.lease(grant=self.grant(exp=10**400))), "malformed")


if __name__ == "__main__":
    unittest.main()
