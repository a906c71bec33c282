"""The live scenario of the SDK conformance suite (sdks/conformance/README.md) with the Python SDK,
step for step as scripts/sdk-live-reference.ts. Run by the driver:

    npx tsx scripts/sdk-live.ts --scenario 'python=/usr/bin/python3 sdks/python/tests/live_scenario.py'

Besides the SDK's own check, the offline lease the real server signed is verified with PyJWT
(Debian's python3-jwt), a library Keyward did not write, against the JWKS file the program saved:
the program fails when the two disagree.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any, Dict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "src"))

import jwt  # noqa: E402  PyJWT: the independent check

from keyward import Jwks, KeywardError, Session, verify_lease  # noqa: E402


def env(name: str) -> str:
    value = os.environ.get(name, "")
    if value == "":
        raise SystemExit(f"{name} is not set")
    return value


def report(step: str, **fields: Any) -> None:
    print(json.dumps({"step": step, **fields}), flush=True)


def pyjwt_claims(token: str, jwks_file: str, audience: str) -> Dict[str, Any]:
    """The lease's payload as PyJWT verifies it with the saved key set (EdDSA only)."""
    with open(jwks_file, encoding="utf-8") as source:
        key_set = jwt.PyJWKSet.from_json(source.read())
    kid = jwt.get_unverified_header(token)["kid"]
    key = next(k for k in key_set.keys if k.key_id == kid)
    claims: Dict[str, Any] = jwt.decode(
        token,
        key.key,
        algorithms=["EdDSA"],
        audience=audience,
        issuer="keyward",
        options={"require": ["iss", "sub", "jti", "aud", "iat", "nbf", "exp"]},
    )
    return claims


def main() -> int:
    base_url = env("KEYWARD_URL")
    app_key = env("KEYWARD_APP_KEY")
    asset_num = env("KEYWARD_ASSET_NUM")
    product = env("KEYWARD_PRODUCT")
    jwks_file = env("KEYWARD_JWKS_FILE")

    with Session(base_url, app_key, env("KEYWARD_APP_SECRET")) as session:
        first = "fp-live-first-machine"
        with session.check_out(first, asset_num=asset_num, crm_product_id=product) as lease:
            report(
                "checked-out",
                leaseId=lease.lease_id,
                heartbeatIntervalSeconds=lease.heartbeat_interval_seconds,
            )

            for _ in range(3):
                lease.heartbeat()
            report("heartbeats", count=3)

            # The loop a program runs while it works: the SDK's heartbeat thread.
            loop = lease.start_heartbeats()
            time.sleep(lease.heartbeat_interval_seconds + 1.5)
            lease.stop_heartbeats()
            report("background", beats=loop.beats)

            consumed = lease.consume(2)
            report("consumed", consumed=consumed.consumed, remaining=consumed.remaining)

            try:
                session.check_out("fp-live-second-machine", asset_num=asset_num, crm_product_id=product)
                raise SystemExit("the second machine's check-out was not refused")
            except KeywardError as error:
                report("refused", code=error.code)
        # Leaving the block checked the lease in.
        if lease.checked_in is None:
            raise SystemExit("the lease was not checked in on leaving its block")
        report("checked-in")

        offline_fp = "fp-live-offline-machine"
        offline = session.check_out(
            offline_fp, asset_num=asset_num, crm_product_id=product, offline_days=1
        )
        if offline.offline_lease is None:
            raise SystemExit("the offline check-out carries no signed lease")
        session.fetch_jwks().save(jwks_file)
        saved = Jwks.load(jwks_file)
        claims = verify_lease(offline.offline_lease, saved, offline_fp, audience=app_key)

        independent = pyjwt_claims(offline.offline_lease, jwks_file, app_key)
        if independent != dict(claims.raw) or independent["sub"] != offline.lease_id:
            raise SystemExit(f"PyJWT disagrees: {independent} against {dict(claims.raw)}")
        if independent["fingerprint"] != offline_fp or independent["assetNum"] != claims.asset_num:
            raise SystemExit(f"PyJWT reads other claims: {independent}")
        report("offline-verified", assetNum=claims.asset_num, expBound=claims.exp_bound)

        report("await-revoke", leaseId=offline.lease_id)
        sys.stdin.readline()
        try:
            offline.heartbeat()
            raise SystemExit("the heartbeat of the disabled lock's lease was not refused")
        except KeywardError as error:
            if not offline.ended.is_set():
                raise SystemExit(f"the lease does not know it ended: {error!r}")
            report("revoked", code=error.code)
    report("done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
