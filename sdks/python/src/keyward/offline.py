"""Offline leases: verify a signed lease without the server, and keep the lease and the JWKS in
files while online so the program can run offline.

A lease is a compact JWS (EdDSA, Ed25519) whose protected header is
``{"alg":"EdDSA","kid":…,"typ":"keyward-lease+jwt"}``. A relay's lease (a license server inside a
closed network, docs/relay.md) is signed by the relay's own key, and its header carries ``grant``:
the pool grant the vendor signed, which certifies that key, so it too verifies with the vendor's
key set alone. :func:`verify_lease` runs the checks of sdks/conformance/README.md in its order; the
first that fails answers.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import os
import re
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple, Union

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from .errors import LeaseError

__all__ = [
    "Jwks",
    "LeaseClaims",
    "LeaseHolder",
    "LeaseProduct",
    "LeaseLimits",
    "PoolGrant",
    "GrantedLicense",
    "LEASE_ISSUER",
    "LEASE_TYP",
    "GRANT_TYP",
    "EXP_BOUNDS",
    "verify_lease",
    "save_lease",
    "load_lease",
]

LEASE_ISSUER = "keyward"
LEASE_TYP = "keyward-lease+jwt"
#: The ``typ`` of a pool grant's protected header.
GRANT_TYP = "keyward-grant+jwt"
#: The protected header parameter of a relay's lease that carries its pool grant.
GRANT_HEADER = "grant"
#: What set a lease's ``exp`` (its ``expBound`` claim).
EXP_BOUNDS = ("offline-days", "license-end", "time-duration")

_B64URL = re.compile(r"^[A-Za-z0-9_-]*$")


def _b64url_decode(part: str) -> bytes:
    if not _B64URL.fullmatch(part) or len(part) % 4 == 1:
        raise ValueError("not base64url")
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def _segment_bytes(part: str) -> bytes:
    """One segment of a compact JWS, when it is exactly the unpadded base64url of its bytes: the
    URL alphabet only (no ``=``, ``+``, ``/``, whitespace or line break) and zero unused bits, so
    one token has one text."""
    data = _b64url_decode(part)
    if base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii") != part:
        raise ValueError("not canonical base64url")
    return data


def _unique_names(pairs: List[Tuple[str, Any]]) -> Dict[str, Any]:
    """An object of a lease's JSON: a name given twice is malformed (``json`` would keep the last,
    another parser the first: one token would say two things)."""
    names = [name for name, _ in pairs]
    if len(set(names)) != len(names):
        raise ValueError("a JSON object names a member twice")
    return dict(pairs)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is no JSON")


def _json_object(data: bytes) -> Dict[str, Any]:
    """A header or payload: UTF-8 JSON (no byte order mark) of one object, each name once, at any
    depth."""
    value = json.loads(data.decode("utf-8"), object_pairs_hook=_unique_names, parse_constant=_no_constant)
    if not isinstance(value, dict):
        raise ValueError("not a JSON object")
    return value


@dataclass(frozen=True)
class _Compact:
    """A compact JWS past its form's checks, not yet its signature's."""

    header: Dict[str, Any]
    payload: Dict[str, Any]
    signing_input: bytes
    signature: bytes


def _compact(token: Any, what: str) -> _Compact:
    """The form's checks, before any key, of a lease (``what`` "") or of the pool grant a relay's
    lease carries ("its grant"): three segments, each exactly base64url; header and payload JSON
    objects naming each member once; no ``crit`` (neither uses an extension, RFC 7515 §4.1.11)."""
    about = f"{what} is " if what else ""
    parts = token.split(".") if isinstance(token, str) else []
    if len(parts) != 3:
        raise LeaseError("malformed", f"{about}not a compact JWS (three base64url parts)")
    try:
        header = _json_object(_segment_bytes(parts[0]))
        payload = _json_object(_segment_bytes(parts[1]))
        signature = _segment_bytes(parts[2])
    except (ValueError, binascii.Error, UnicodeDecodeError, RecursionError) as error:
        raise LeaseError("malformed", f"{about}not a compact JWS: {error}") from None
    if "crit" in header:
        whose = f"{what}'s" if what else "the"
        raise LeaseError("malformed", f"{whose} header names critical extensions")
    return _Compact(header, payload, f"{parts[0]}.{parts[1]}".encode("ascii"), signature)


def _signed_by(key: Ed25519PublicKey, jws: _Compact) -> bool:
    try:
        key.verify(jws.signature, jws.signing_input)
    except InvalidSignature:
        return False
    return True


def _write_atomically(path: Union[str, "os.PathLike[str]"], text: str, mode: int) -> None:
    """Writes the whole file or nothing: a temporary file beside it, then a rename."""
    target = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(target))
    handle, temporary = tempfile.mkstemp(prefix=".keyward-", dir=directory)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException:
        try:
            os.unlink(temporary)
        except FileNotFoundError:
            pass
        raise


class Jwks:
    """A JSON Web Key Set (RFC 7517) of Keyward's lease-signing keys, as
    ``GET /.well-known/jwks.json`` publishes it. Save it while online (:meth:`save`), load it
    offline (:meth:`load`), and pass it to :func:`verify_lease`."""

    def __init__(self, keys: List[Dict[str, Any]]) -> None:
        self.keys: List[Dict[str, Any]] = [dict(key) for key in keys]

    @classmethod
    def from_dict(cls, document: Mapping[str, Any]) -> "Jwks":
        """From the parsed JSON document ``{"keys": [...]}``."""
        keys = document.get("keys") if isinstance(document, Mapping) else None
        if not isinstance(keys, list) or not all(isinstance(key, dict) for key in keys):
            raise ValueError('a JWKS is a JSON object with a "keys" array of objects')
        return cls(keys)

    @classmethod
    def from_json(cls, text: Union[str, bytes]) -> "Jwks":
        return cls.from_dict(json.loads(text))

    @classmethod
    def load(cls, path: Union[str, "os.PathLike[str]"]) -> "Jwks":
        """Reads a JWKS file written by :meth:`save` (or any JWKS JSON file)."""
        with open(path, "r", encoding="utf-8") as source:
            return cls.from_json(source.read())

    def save(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """Writes the key set as JSON, whole or not at all (the public keys: no secret)."""
        _write_atomically(path, self.to_json(), 0o644)

    def to_dict(self) -> Dict[str, Any]:
        return {"keys": [dict(key) for key in self.keys]}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), separators=(",", ":"))

    @property
    def kids(self) -> List[str]:
        """The key ids of the set, in order."""
        return [str(key["kid"]) for key in self.keys if "kid" in key]

    def _verifiers(self, kid: str) -> List[Ed25519PublicKey]:
        """The set's Ed25519 signing keys with this kid (a key is chosen by kid alone)."""
        return self._verifiers_where(lambda key_id: key_id == kid)

    def _verifiers_where(self, kid_matches: Callable[[str], bool]) -> List[Ed25519PublicKey]:
        """The set's Ed25519 signing keys whose kid matches."""
        found: List[Ed25519PublicKey] = []
        for key in self.keys:
            kid = key.get("kid")
            if not isinstance(kid, str) or not kid_matches(kid):
                continue
            if key.get("kty") != "OKP" or key.get("crv") != "Ed25519":
                continue
            if key.get("use", "sig") != "sig" or key.get("alg", "EdDSA") != "EdDSA":
                continue
            x = key.get("x")
            if not isinstance(x, str):
                continue
            try:
                raw = _b64url_decode(x)
            except (ValueError, binascii.Error):
                continue
            if len(raw) == 32:
                found.append(Ed25519PublicKey.from_public_bytes(raw))
        return found

    def __repr__(self) -> str:
        return f"Jwks(kids={self.kids!r})"


@dataclass(frozen=True)
class LeaseHolder:
    """Who holds the lease: a lock (``asset_num``) or a member (``member_global_id`` of
    ``enterprise_global_id``)."""

    kind: str
    asset_num: Optional[str] = None
    member_global_id: Optional[str] = None
    enterprise_global_id: Optional[str] = None


@dataclass(frozen=True)
class LeaseProduct:
    crm_product_id: Optional[str]
    product_uri: Optional[str]
    product_name: Optional[str]


@dataclass(frozen=True)
class LeaseLimits:
    """The license's limits at check-out. Dates are epoch milliseconds."""

    concurrent: Optional[int]
    time_duration_seconds: Optional[int]
    amount: Optional[int]
    start_date: Optional[datetime]
    end_date: Optional[datetime]


@dataclass(frozen=True)
class GrantedLicense:
    """Seats a pool grant gives its relay: of one license (the lock's ``asset_num``) and product
    (``crm_product_id``, None for a product without one)."""

    asset_num: str
    crm_product_id: Optional[str]
    seats: int


@dataclass(frozen=True)
class PoolGrant:
    """The pool grant a relay's lease carries, verified: the vendor's word that the relay
    ``relay_id``, whose key is ``relay_kid``, may hand out ``licenses``' seats until
    ``expires_at``, to ``machines`` (None: any machine of its network). ``raw`` is the whole
    payload as signed (``overage`` is the relay's to apply; :func:`verify_lease` does not read
    it)."""

    relay_id: str
    grant_id: str
    issued_at: datetime
    not_before: datetime
    expires_at: datetime
    relay_kid: str
    #: The relay's Ed25519 public key (``relay.key.x``): its 32 bytes.
    relay_key: bytes
    relay_fingerprint: str
    licenses: Tuple[GrantedLicense, ...]
    machines: Optional[Tuple[str, ...]]
    raw: Mapping[str, Any] = field(repr=False, compare=False)

    def license_for(self, asset_num: str, crm_product_id: Optional[str]) -> Optional[GrantedLicense]:
        """The granted license of this asset number and product (None matches None), if any."""
        for granted in self.licenses:
            if granted.asset_num == asset_num and granted.crm_product_id == crm_product_id:
                return granted
        return None


@dataclass(frozen=True)
class LeaseClaims:
    """What a verified offline lease says. Times (``issued_at``, ``not_before``, ``expires_at``,
    and the limits' ``start_date`` and ``end_date``) are aware UTC datetimes; ``raw`` is the whole
    payload, its times numbers as signed (``iat``, ``nbf``, ``exp`` in epoch seconds, ``limits``'
    dates in epoch milliseconds)."""

    lease_id: str
    issuer: str
    audience: str
    issued_at: datetime
    not_before: datetime
    expires_at: datetime
    holder: LeaseHolder
    fingerprint: str
    asset_num: str
    product: LeaseProduct
    limits: LeaseLimits
    #: ``offline-days``, ``license-end`` or ``time-duration``; None for leases signed by servers
    #: before the claim existed.
    exp_bound: Optional[str]
    raw: Mapping[str, Any] = field(repr=False, compare=False)
    #: The pool grant of a relay's lease (the relay that signed it); None for a lease the vendor's
    #: server signed.
    grant: Optional[PoolGrant] = None

    @property
    def sub(self) -> str:
        """The lease id (the JWT ``sub``)."""
        return self.lease_id

    @property
    def jti(self) -> str:
        return str(self.raw["jti"])


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def _from_epoch_s(seconds: float) -> datetime:
    """An aware UTC datetime from epoch seconds (exact for whole seconds, unlike
    ``datetime.fromtimestamp``'s float path, and without its platform's range)."""
    return _EPOCH + timedelta(seconds=seconds)


def _from_epoch_ms(milliseconds: float) -> datetime:
    """An aware UTC datetime from epoch milliseconds, as the server's JSON carries times."""
    return _EPOCH + timedelta(milliseconds=milliseconds)


def _limit_date(value: Any) -> Optional[datetime]:
    """A limit's date (epoch milliseconds) as a datetime: None when absent or not a number (the
    raw claims keep it); beyond datetime's years 1-9999, the nearest of them."""
    if not _is_number(value):
        return None
    try:
        return _from_epoch_ms(value)
    except OverflowError:
        return (datetime.max if value > 0 else datetime.min).replace(tzinfo=timezone.utc)


def _is_text(value: Any) -> bool:
    return isinstance(value, str)


def _is_number(value: Any) -> bool:
    # An int of any size is finite (math.isfinite would overflow converting one past a float's
    # range); a float may be infinite only by overflowing, which json does for 1e400.
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and math.isfinite(value))


#: The latest time a lease may name: 9999-12-31T23:59:59Z.
_LAST_SECOND = 253402300799


def _is_whole_seconds(value: Any) -> bool:
    """A time claim: a whole number of seconds from 1970 to the end of year 9999, however JSON
    writes it (``1800604800.0`` is whole)."""
    if not _is_number(value):
        return False
    return (isinstance(value, int) or float(value).is_integer()) and 0 <= value <= _LAST_SECOND


def _lease_shape(payload: Mapping[str, Any]) -> bool:
    """The claims an offline lease carries beyond the JWT ones, with their types."""
    holder = payload.get("holder")
    holder_ok = isinstance(holder, dict) and (
        (
            holder.get("kind") == "member"
            and _is_text(holder.get("memberGlobalId"))
            and _is_text(holder.get("enterpriseGlobalId"))
        )
        or (holder.get("kind") == "lock" and _is_text(holder.get("assetNum")))
    )
    limits = payload.get("limits")
    return (
        holder_ok
        and _is_text(payload.get("sub"))
        and _is_text(payload.get("jti"))
        and _is_text(payload.get("aud"))
        and _is_text(payload.get("fingerprint"))
        and _is_text(payload.get("assetNum"))
        and isinstance(payload.get("product"), dict)
        and isinstance(limits, dict)
        and "endDate" in limits
        and (limits["endDate"] is None or _is_number(limits["endDate"]))
        and ("expBound" not in payload or payload["expBound"] in EXP_BOUNDS)
    )


def _claims_of(payload: Mapping[str, Any], grant: Optional[PoolGrant]) -> LeaseClaims:
    holder: Mapping[str, Any] = payload["holder"]
    product: Mapping[str, Any] = payload["product"]
    limits: Mapping[str, Any] = payload["limits"]
    return LeaseClaims(
        lease_id=payload["sub"],
        issuer=payload["iss"],
        audience=payload["aud"],
        issued_at=_from_epoch_s(payload["iat"]),
        not_before=_from_epoch_s(payload["nbf"]),
        expires_at=_from_epoch_s(payload["exp"]),
        holder=LeaseHolder(
            kind=holder["kind"],
            asset_num=holder.get("assetNum"),
            member_global_id=holder.get("memberGlobalId"),
            enterprise_global_id=holder.get("enterpriseGlobalId"),
        ),
        fingerprint=payload["fingerprint"],
        asset_num=payload["assetNum"],
        product=LeaseProduct(
            crm_product_id=product.get("crmProductId"),
            product_uri=product.get("productUri"),
            product_name=product.get("productName"),
        ),
        limits=LeaseLimits(
            concurrent=limits.get("concurrent"),
            time_duration_seconds=limits.get("timeDurationSeconds"),
            amount=limits.get("amount"),
            start_date=_limit_date(limits.get("startDate")),
            end_date=_limit_date(limits.get("endDate")),
        ),
        exp_bound=payload.get("expBound"),
        raw=payload,
        grant=grant,
    )


def _typ_matches(typ: Any, expected: str = LEASE_TYP) -> bool:
    # Media types compare without case, and "application/" may be left out (RFC 7515 §4.1.9).
    if not isinstance(typ, str):
        return False
    typ = typ.lower()
    if typ.startswith("application/"):
        typ = typ[len("application/") :]
    return typ == expected


_MAX_SEATS = 1_000_000_000


def _is_seats(value: Any) -> bool:
    """A granted license's seats: a whole number from 1 to 1,000,000,000."""
    return _is_number(value) and (isinstance(value, int) or value.is_integer()) and 1 <= value <= _MAX_SEATS


def _is_ed25519_x(value: Any) -> bool:
    """An Ed25519 public key's ``x``: exactly the unpadded base64url of 32 bytes."""
    if not isinstance(value, str) or len(value) != 43:
        return False
    try:
        return len(_segment_bytes(value)) == 32
    except (ValueError, binascii.Error):
        return False


def _is_relay_key(key: Any) -> bool:
    """The relay's public key a grant certifies: an Ed25519 JWK with a kid."""
    return (
        isinstance(key, dict)
        and key.get("kty") == "OKP"
        and key.get("crv") == "Ed25519"
        and _is_ed25519_x(key.get("x"))
        and _is_text(key.get("kid"))
    )


def _is_granted_license(granted: Any) -> bool:
    return (
        isinstance(granted, dict)
        and _is_text(granted.get("assetNum"))
        and "crmProductId" in granted
        and (granted["crmProductId"] is None or _is_text(granted["crmProductId"]))
        and _is_seats(granted.get("seats"))
    )


def _grant_of(payload: Mapping[str, Any]) -> Optional[PoolGrant]:
    """A pool grant's claims past its signature's check, when they have the grant's shape."""
    relay: Any = payload.get("relay")
    licenses: Any = payload.get("licenses")
    machines: Any = payload.get("machines")
    shaped = (
        payload.get("iss") == LEASE_ISSUER
        and _is_text(payload.get("sub"))
        and _is_text(payload.get("jti"))
        and all(_is_whole_seconds(payload.get(claim)) for claim in ("iat", "nbf", "exp"))
        and isinstance(relay, dict)
        and _is_relay_key(relay.get("key"))
        and _is_text(relay.get("fingerprint"))
        and isinstance(licenses, list)
        and len(licenses) > 0
        and all(_is_granted_license(granted) for granted in licenses)
        and (machines is None or (isinstance(machines, list) and all(_is_text(m) for m in machines)))
    )
    if not shaped:
        return None
    return PoolGrant(
        relay_id=payload["sub"],
        grant_id=payload["jti"],
        issued_at=_from_epoch_s(payload["iat"]),
        not_before=_from_epoch_s(payload["nbf"]),
        expires_at=_from_epoch_s(payload["exp"]),
        relay_kid=relay["key"]["kid"],
        relay_key=_segment_bytes(relay["key"]["x"]),
        relay_fingerprint=relay["fingerprint"],
        licenses=tuple(
            GrantedLicense(granted["assetNum"], granted["crmProductId"], int(granted["seats"]))
            for granted in licenses
        ),
        machines=None if machines is None else tuple(machines),
        raw=payload,
    )


def _verified_grant(token: Any, keys: Jwks, now_s: int) -> PoolGrant:
    """The pool grant a relay's lease carries, checked as a lease is up to its times: its form, a
    vendor key of the set by kid and its signature, its type and claims, then its period."""
    jws = _compact(token, "its grant")
    header = jws.header
    if header.get("alg") != "EdDSA":
        raise LeaseError("signature", f"its grant's algorithm {header.get('alg')!r} is not EdDSA")
    kid = header.get("kid")
    verifiers = keys._verifiers(kid) if isinstance(kid, str) else []
    if not verifiers:
        raise LeaseError("unknown-key", f"no key of the set has its grant's kid {kid!r}")
    if not any(_signed_by(verifier, jws) for verifier in verifiers):
        raise LeaseError("signature", "its grant's signature does not verify")
    if not _typ_matches(header.get("typ"), GRANT_TYP):
        raise LeaseError("malformed", f"its grant's typ {header.get('typ')!r} is not {GRANT_TYP}")
    grant = _grant_of(jws.payload)
    if grant is None:
        raise LeaseError("malformed", "its grant's claims are not a pool grant")
    if jws.payload["nbf"] > now_s:
        raise LeaseError("not-yet-valid", f"its grant is valid from {jws.payload['nbf']}, now is {now_s}")
    if jws.payload["exp"] <= now_s:
        raise LeaseError("grant-expired", f"its grant ended at {jws.payload['exp']}, now is {now_s}")
    return grant


def _relay_key(grant: PoolGrant) -> Optional[Ed25519PublicKey]:
    """The relay key a grant certifies; None when its 32 bytes are no key (nothing verifies)."""
    try:
        return Ed25519PublicKey.from_public_bytes(grant.relay_key)
    except ValueError:
        return None


def _beyond_grant(payload: Mapping[str, Any], grant: PoolGrant) -> Optional[str]:
    """Why a relay's lease says more than its grant lets the relay give; None when it does not."""
    if payload["exp"] > grant.raw["exp"]:
        return "it runs past its grant"
    product = payload["product"]
    # A product without crmProductId matches no license (a null one matches a null one).
    granted = grant.license_for(payload["assetNum"], product["crmProductId"]) if "crmProductId" in product else None
    if granted is None:
        return "its license and product are not in its grant"
    # No seat limit (null, absent, or no number) is more than any grant gives.
    seats = payload["limits"].get("concurrent")
    if not _is_number(seats):
        return f"it names no seat limit, and its grant gives {granted.seats} seats"
    if seats > granted.seats:
        return f"it names {seats} seats, and its grant gives {granted.seats}"
    if grant.machines is not None and payload["fingerprint"] not in grant.machines:
        return "its machine is not on its grant's list"
    return None


def _now_ms(now: Union[None, float, datetime]) -> int:
    if now is None:
        return time.time_ns() // 1_000_000
    if isinstance(now, datetime):
        return int(now.timestamp() * 1000)
    return int(now * 1000)


def verify_lease(
    token: str,
    jwks: Union[Jwks, Mapping[str, Any]],
    fingerprint: str,
    audience: Optional[str] = None,
    now: Union[None, float, datetime] = None,
) -> LeaseClaims:
    """Verifies an offline lease against a key set, without calling the server, and answers its
    claims.

    :param token: the compact JWS (``lease.offline_lease``, or :func:`load_lease`).
    :param jwks: the saved key set (:class:`Jwks`, or the parsed JSON document).
    :param fingerprint: this machine's fingerprint: a lease for another machine is refused.
    :param audience: the appKey the lease must be for; unchecked when None.
    :param now: the clock (seconds since the epoch, or an aware datetime); now when None.
    :raises LeaseError: with ``reason`` ``malformed``, ``signature``, ``unknown-key``,
        ``not-yet-valid``, ``expired``, ``audience``, ``fingerprint`` or ``license-ended``, and
        for a relay's lease ``grant-expired`` or ``beyond-grant``.

    A relay's lease (its header carries ``grant``) verifies with the same key set: after ``alg``,
    its grant is checked as a lease is (its form, a key of the set by its ``kid``, its signature,
    ``typ`` ``keyward-grant+jwt`` and its claims: ``malformed``, ``signature``, ``unknown-key``;
    then its ``nbf``, ``not-yet-valid``, and its ``exp``, ``grant-expired``), and the lease must be
    signed by the relay key the grant certifies (``unknown-key`` for another kid). Past the
    claims' shape, the lease must say no more than the grant gives (``beyond-grant``: an ``exp``
    past the grant's, a license and product it does not name, no seat limit or more seats than it
    gives, a machine not on its list). The answer's ``grant`` is the grant.
    """
    keys = jwks if isinstance(jwks, Jwks) else Jwks.from_dict(jwks)
    now_ms = _now_ms(now)
    now_s = now_ms // 1000

    # 1. The compact form: three segments, each exactly base64url; header and payload JSON
    # objects naming each member once; no crit (a lease uses no extension, RFC 7515 §4.1.11).
    jws = _compact(token, "")
    header, payload = jws.header, jws.payload

    # 2. Only EdDSA: none, HS256 … are no signature of a Keyward key, whatever they claim.
    if header.get("alg") != "EdDSA":
        raise LeaseError("signature", f"algorithm {header.get('alg')!r} is not EdDSA")

    # A relay's lease: its grant, checked first, certifies the one key that may have signed it.
    grant = _verified_grant(header[GRANT_HEADER], keys, now_s) if GRANT_HEADER in header else None

    # 3. The key, by kid alone: of the set, or the relay key the grant certifies.
    kid = header.get("kid")
    if grant is None:
        verifiers = keys._verifiers(kid) if isinstance(kid, str) else []
        if not verifiers:
            raise LeaseError("unknown-key", f"no key of the set has kid {kid!r}")
    else:
        if not isinstance(kid, str) or kid != grant.relay_kid:
            raise LeaseError("unknown-key", f"kid {kid!r} is not the relay key its grant certifies")
        relay_key = _relay_key(grant)
        verifiers = [] if relay_key is None else [relay_key]

    # 4. The signature, before any claim is trusted.
    if not any(_signed_by(verifier, jws) for verifier in verifiers):
        raise LeaseError("signature", "the signature does not verify")

    # 5. A Keyward lease's header and JWT claims.
    if not _typ_matches(header.get("typ")):
        raise LeaseError("malformed", f"typ {header.get('typ')!r} is not {LEASE_TYP}")
    if payload.get("iss") != LEASE_ISSUER:
        raise LeaseError("malformed", f"iss {payload.get('iss')!r} is not {LEASE_ISSUER}")
    for claim in ("sub", "jti", "aud", "iat", "nbf", "exp"):
        if claim not in payload:
            raise LeaseError("malformed", f'missing required "{claim}" claim')
    for claim in ("sub", "jti", "aud"):
        if not _is_text(payload[claim]):
            raise LeaseError("malformed", f'"{claim}" claim must be a string')
    for claim in ("iat", "nbf", "exp"):
        if not _is_whole_seconds(payload[claim]):
            raise LeaseError("malformed", f'"{claim}" claim must be whole seconds from 0 to {_LAST_SECOND}')

    # 6–7. The time claims, whole seconds, no leeway.
    if payload["nbf"] > now_s:
        raise LeaseError("not-yet-valid", f"valid from {payload['nbf']}, now is {now_s}")
    if payload["exp"] <= now_s:
        raise LeaseError("expired", f"expired at {payload['exp']}, now is {now_s}")

    # 8. The application, when asked for.
    if audience is not None:
        aud = payload["aud"]
        if aud != audience:
            raise LeaseError("audience", f"checked out by {aud!r}, not {audience!r}")

    # 9. The lease's own claims.
    if not _lease_shape(payload):
        raise LeaseError("malformed", "its claims are not an offline lease")

    # A relay's lease says no more than its grant gives: its time, license and product, seats and
    # machine.
    if grant is not None:
        beyond = _beyond_grant(payload, grant)
        if beyond is not None:
            raise LeaseError("beyond-grant", beyond)

    # 10. This machine.
    if payload["fingerprint"] != fingerprint:
        raise LeaseError("fingerprint", "it was checked out for another machine")

    # 11. The license's end (epoch milliseconds): a lease signed before the server bounded exp by
    # the license's end may otherwise outlive it.
    end_date = payload["limits"]["endDate"]
    if end_date is not None and end_date < now_ms:
        ended = datetime.fromtimestamp(end_date / 1000, tz=timezone.utc)
        raise LeaseError("license-ended", f"the license ended at {ended.isoformat()}")

    return _claims_of(payload, grant)


def save_lease(path: Union[str, "os.PathLike[str]"], token: str) -> None:
    """Saves an offline lease (the compact JWS) to a file readable by its owner only, whole or not
    at all."""
    if not isinstance(token, str) or token.count(".") != 2:
        raise ValueError("an offline lease is a compact JWS")
    _write_atomically(path, token + "\n", 0o600)


def load_lease(path: Union[str, "os.PathLike[str]"]) -> str:
    """Reads an offline lease saved by :func:`save_lease`; verify it with :func:`verify_lease`."""
    with open(path, "r", encoding="ascii") as source:
        return source.read().strip()
