"""Offline leases: verify a signed lease without the server, and keep the lease and the JWKS in
files while online so the program can run offline.

A lease is a compact JWS (EdDSA, Ed25519) whose protected header is
``{"alg":"EdDSA","kid":…,"typ":"keyward-lease+jwt"}``. :func:`verify_lease` runs the checks of
sdks/conformance/README.md in its order; the first that fails answers.
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
    "LEASE_ISSUER",
    "LEASE_TYP",
    "EXP_BOUNDS",
    "verify_lease",
    "save_lease",
    "load_lease",
]

LEASE_ISSUER = "keyward"
LEASE_TYP = "keyward-lease+jwt"
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
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


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


def _claims_of(payload: Mapping[str, Any]) -> LeaseClaims:
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
    )


def _typ_matches(typ: Any) -> bool:
    # Media types compare without case, and "application/" may be left out (RFC 7515 §4.1.9).
    if not isinstance(typ, str):
        return False
    typ = typ.lower()
    if typ.startswith("application/"):
        typ = typ[len("application/") :]
    return typ == LEASE_TYP


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
        ``not-yet-valid``, ``expired``, ``audience``, ``fingerprint`` or ``license-ended``.
    """
    keys = jwks if isinstance(jwks, Jwks) else Jwks.from_dict(jwks)
    now_ms = _now_ms(now)
    now_s = now_ms // 1000

    # 1. The compact form: three segments, each exactly base64url; header and payload JSON
    # objects naming each member once; no crit (a lease uses no extension, RFC 7515 §4.1.11).
    parts = token.split(".") if isinstance(token, str) else []
    if len(parts) != 3:
        raise LeaseError("malformed", "not a compact JWS (three base64url parts)")
    try:
        header = _json_object(_segment_bytes(parts[0]))
        payload = _json_object(_segment_bytes(parts[1]))
        signature = _segment_bytes(parts[2])
    except (ValueError, binascii.Error, UnicodeDecodeError, RecursionError) as error:
        raise LeaseError("malformed", f"not a compact JWS: {error}") from None
    if "crit" in header:
        raise LeaseError("malformed", "the header names critical extensions")

    # 2. Only EdDSA: none, HS256 … are no signature of a Keyward key, whatever they claim.
    if header.get("alg") != "EdDSA":
        raise LeaseError("signature", f"algorithm {header.get('alg')!r} is not EdDSA")

    # 3. The key, by kid alone.
    kid = header.get("kid")
    verifiers = keys._verifiers(kid) if isinstance(kid, str) else []
    if not verifiers:
        raise LeaseError("unknown-key", f"no key of the set has kid {kid!r}")

    # 4. The signature, before any claim is trusted.
    signed = f"{parts[0]}.{parts[1]}".encode("ascii")
    for verifier in verifiers:
        try:
            verifier.verify(signature, signed)
            break
        except InvalidSignature:
            continue
    else:
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

    # 10. This machine.
    if payload["fingerprint"] != fingerprint:
        raise LeaseError("fingerprint", "it was checked out for another machine")

    # 11. The license's end (epoch milliseconds): a lease signed before the server bounded exp by
    # the license's end may otherwise outlive it.
    end_date = payload["limits"]["endDate"]
    if end_date is not None and end_date < now_ms:
        ended = datetime.fromtimestamp(end_date / 1000, tz=timezone.utc)
        raise LeaseError("license-ended", f"the license ended at {ended.isoformat()}")

    return _claims_of(payload)


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
