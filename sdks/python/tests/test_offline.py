"""verify_lease beyond the vectors: the check order for tokens with several defects, claim types,
the clock, and saving and reloading leases and key sets."""

from __future__ import annotations

import os
import stat
import tempfile
import unittest
from datetime import datetime, timezone

from keyward import Jwks, LeaseError, load_lease, save_lease, verify_lease

from ._support import NOW, Signer, b64url, lease_payload


class Order(unittest.TestCase):
    def setUp(self) -> None:
        self.signer = Signer()

    def reason(self, token: str, fingerprint: str = "fp-this-machine", audience: str = "kw_app", now: float = NOW) -> str:
        with self.assertRaises(LeaseError) as refused:
            verify_lease(token, self.signer.jwks, fingerprint, audience, now=now)
        return refused.exception.reason

    def test_a_valid_lease_answers_its_claims(self) -> None:
        claims = verify_lease(self.signer.sign(lease_payload()), Jwks.from_dict(self.signer.jwks), "fp-this-machine", "kw_app", now=NOW)
        self.assertEqual(claims.lease_id, "01938f2e-0000-7000-8000-000000000001")
        self.assertEqual(claims.holder.kind, "lock")
        self.assertEqual(claims.holder.asset_num, "A-1")
        self.assertEqual(claims.product.crm_product_id, "P-1")
        self.assertEqual(claims.limits.amount, 100)
        self.assertEqual(claims.limits.end_date, datetime.fromtimestamp(NOW + 30 * 86400, tz=timezone.utc))
        self.assertEqual(claims.expires_at, datetime.fromtimestamp(NOW + 86400, tz=timezone.utc))
        self.assertEqual(claims.issued_at.tzinfo, timezone.utc)
        self.assertEqual(claims.audience, "kw_app")
        self.assertEqual(claims.exp_bound, "offline-days")

    def test_times_beyond_a_datetime_are_malformed_not_a_crash(self) -> None:
        # LeaseClaims holds datetimes: exp = 1e20 (year 3e12) cannot be one, so it is refused.
        self.assertEqual(self.reason(self.signer.sign(lease_payload(exp=1e20))), "malformed")
        self.assertEqual(self.reason(self.signer.sign(lease_payload(iat=-1e20))), "malformed")
        far = lease_payload()
        far["limits"]["startDate"] = 1e20
        claims = verify_lease(self.signer.sign(far), self.signer.jwks, "fp-this-machine", now=NOW)
        self.assertEqual(claims.limits.start_date, datetime.max.replace(tzinfo=timezone.utc))

    def test_a_member_holder(self) -> None:
        holder = {"kind": "member", "memberGlobalId": "m-1", "enterpriseGlobalId": "e-1"}
        claims = verify_lease(self.signer.sign(lease_payload(holder=holder)), self.signer.jwks, "fp-this-machine", now=NOW)
        self.assertEqual((claims.holder.kind, claims.holder.member_global_id, claims.holder.enterprise_global_id), ("member", "m-1", "e-1"))
        self.assertEqual(self.reason(self.signer.sign(lease_payload(holder={"kind": "member", "memberGlobalId": "m-1"}))), "malformed")

    def test_the_signature_comes_before_every_claim(self) -> None:
        other = Signer(kid=self.signer.kid)  # same kid, another key: a forgery
        token = other.sign(lease_payload(exp=NOW - 1, fingerprint="fp-elsewhere", iss="someone"))
        self.assertEqual(self.reason(token), "signature")

    def test_the_key_comes_before_the_signature(self) -> None:
        token = self.signer.sign(lease_payload(), header={"kid": "another-kid"})
        self.assertEqual(self.reason(token[:-4] + "AAAA"), "unknown-key")
        self.assertEqual(self.reason(self.signer.sign(lease_payload(), header={"kid": None})), "unknown-key")

    def test_the_algorithm_comes_before_the_key(self) -> None:
        self.assertEqual(self.reason(self.signer.sign(lease_payload(), header={"alg": "ES256", "kid": "nope"})), "signature")

    def test_the_time_comes_before_audience_shape_fingerprint_and_license(self) -> None:
        token = self.signer.sign(lease_payload(exp=NOW, holder=None, fingerprint="fp-elsewhere", aud="kw_other"))
        self.assertEqual(self.reason(token), "expired")
        token = self.signer.sign(lease_payload(nbf=NOW + 1, exp=NOW - 5))
        self.assertEqual(self.reason(token), "not-yet-valid")

    def test_exp_at_now_is_expired_and_nbf_at_now_is_valid(self) -> None:
        self.assertEqual(self.reason(self.signer.sign(lease_payload(exp=NOW))), "expired")
        verify_lease(self.signer.sign(lease_payload(nbf=NOW, exp=NOW + 1)), self.signer.jwks, "fp-this-machine", now=NOW)

    def test_audience_comes_before_shape(self) -> None:
        self.assertEqual(self.reason(self.signer.sign(lease_payload(aud="kw_other", holder=None))), "audience")

    def test_shape_comes_before_fingerprint_and_fingerprint_before_the_license(self) -> None:
        self.assertEqual(self.reason(self.signer.sign(lease_payload(product=None, fingerprint="x"))), "malformed")
        ended = {"concurrent": 1, "timeDurationSeconds": None, "amount": None, "startDate": None, "endDate": (NOW - 10) * 1000}
        self.assertEqual(self.reason(self.signer.sign(lease_payload(limits=ended, fingerprint="fp-elsewhere"))), "fingerprint")
        self.assertEqual(self.reason(self.signer.sign(lease_payload(limits=ended))), "license-ended")

    def test_the_license_end_is_compared_in_milliseconds(self) -> None:
        limits = {"concurrent": 1, "timeDurationSeconds": None, "amount": None, "startDate": None, "endDate": NOW * 1000 + 500}
        token = self.signer.sign(lease_payload(limits=limits))
        verify_lease(token, self.signer.jwks, "fp-this-machine", now=NOW + 0.4)
        self.assertEqual(self.reason(token, now=NOW + 0.6), "license-ended")

    def test_malformed_claims(self) -> None:
        for changes in (
            {"iss": "keyward-test"},
            {"sub": ...},
            {"jti": ...},
            {"aud": ...},
            {"iat": ...},
            {"nbf": ...},
            {"exp": ...},
            {"iat": "yesterday"},
            {"exp": True},
            {"holder": {"kind": "robot"}},
            {"assetNum": 7},
            {"limits": {"concurrent": 1}},
            {"limits": {"endDate": "2027-01-01"}},
            {"expBound": "forever"},
            {"aud": ["kw_app"]},
        ):
            with self.subTest(changes=changes):
                self.assertEqual(self.reason(self.signer.sign(lease_payload(**changes)), audience=None), "malformed")  # type: ignore[arg-type]

    def test_the_header_type(self) -> None:
        self.assertEqual(self.reason(self.signer.sign(lease_payload(), header={"typ": "JWT"})), "malformed")
        self.assertEqual(self.reason(self.signer.sign(lease_payload(), header={"typ": None})), "malformed")
        # Media types compare without case and may carry "application/" (RFC 7515 §4.1.9).
        verify_lease(self.signer.sign(lease_payload(), header={"typ": "application/Keyward-Lease+JWT"}), self.signer.jwks, "fp-this-machine", now=NOW)

    def test_not_a_jws(self) -> None:
        good = self.signer.sign(lease_payload())
        head, body, signature = good.split(".")
        for token in ("", "a.b", good + ".x", "@@.@@.@@", f"{b64url(b'[1]')}.{body}.{signature}",
                      f"{head}.{b64url(b'not json')}.{signature}", f"{head}.{body}.{signature}=="):
            with self.subTest(token=token[:20]):
                self.assertEqual(self.reason(token), "malformed")

    def test_the_clock_may_be_a_datetime_and_defaults_to_now(self) -> None:
        token = self.signer.sign(lease_payload())
        verify_lease(token, self.signer.jwks, "fp-this-machine", now=datetime.fromtimestamp(NOW, timezone.utc))
        # NOW is in 2027: today the lease is not valid yet.
        with self.assertRaises(LeaseError) as refused:
            verify_lease(token, self.signer.jwks, "fp-this-machine")
        self.assertEqual(refused.exception.reason, "not-yet-valid")

    def test_a_retired_key_still_in_the_set_verifies(self) -> None:
        newer = Signer(kid="newer")
        both = {"keys": [newer.jwk, self.signer.jwk]}
        verify_lease(self.signer.sign(lease_payload()), both, "fp-this-machine", now=NOW)
        verify_lease(newer.sign(lease_payload()), both, "fp-this-machine", now=NOW)


class Files(unittest.TestCase):
    def setUp(self) -> None:
        self.directory = tempfile.TemporaryDirectory()
        self.addCleanup(self.directory.cleanup)

    def test_a_lease_saved_and_loaded_still_verifies(self) -> None:
        signer = Signer()
        token = signer.sign(lease_payload())
        lease_path = os.path.join(self.directory.name, "lease.jws")
        jwks_path = os.path.join(self.directory.name, "jwks.json")
        save_lease(lease_path, token)
        Jwks.from_dict(signer.jwks).save(jwks_path)
        self.assertEqual(stat.S_IMODE(os.stat(lease_path).st_mode), 0o600)
        self.assertEqual(load_lease(lease_path), token)
        jwks = Jwks.load(jwks_path)
        self.assertEqual(jwks.kids, ["test-key"])
        self.assertEqual(jwks.to_dict(), signer.jwks)
        claims = verify_lease(load_lease(lease_path), jwks, "fp-this-machine", now=NOW)
        self.assertEqual(claims.asset_num, "A-1")

    def test_saving_replaces_the_file_whole(self) -> None:
        path = os.path.join(self.directory.name, "jwks.json")
        Jwks.from_dict({"keys": [{"kid": "a"}]}).save(path)
        Jwks.from_dict({"keys": [{"kid": "b"}]}).save(path)
        self.assertEqual(Jwks.load(path).kids, ["b"])
        self.assertEqual(os.listdir(self.directory.name), ["jwks.json"])

    def test_what_is_no_jwks_or_lease_is_refused(self) -> None:
        path = os.path.join(self.directory.name, "jwks.json")
        with open(path, "w") as out:
            out.write('{"kid": "a"}')
        with self.assertRaises(ValueError):
            Jwks.load(path)
        with self.assertRaises(ValueError):
            save_lease(os.path.join(self.directory.name, "lease"), "not a lease")


if __name__ == "__main__":
    unittest.main()
