"""Offline activation (docs/activation.md): a machine that never reaches Keyward writes a request,
someone who can reach Keyward turns it into an answer, and the machine verifies the answer with
the key set it shipped with.

.. code-block:: python

    request = keyward.create_activation_request(APP_KEY, "8000000001", "demo-simulator", 30, fingerprint)
    request.save("request.json")          # keep it, nonce included, until the answer comes back
    print(request.code)                   # the typed code, or carry request.json
    ...
    lease = keyward.verify_activation(answer, keyward.ActivationRequest.load("request.json"),
                                      keyward.Jwks.load("jwks.json"), fingerprint)
    print(lease.lease_id, lease.expires_at, lease.exp_bound)

Messages travel as typed codes: bytes in Crockford's base32, groups of five characters each
followed by a Luhn-mod-32 check character, groups joined by ``-``. Their layouts (version 1):
the request (kind ``0x52``), the typed answer (kind ``0x4C``: 51 bytes and an Ed25519 signature
over ``keyward typed lease v1\\n`` and them) and the return code (kind ``0x58``).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
import re
import secrets
import struct
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Dict, List, Mapping, Optional, Union

from cryptography.exceptions import InvalidSignature

from .errors import ActivationFormatError, LeaseError
from .offline import (
    _EPOCH,
    EXP_BOUNDS,
    Jwks,
    LeaseClaims,
    _b64url_decode,
    _from_epoch_s,
    _now_ms,
    _write_atomically,
    verify_lease,
)

__all__ = [
    "CROCKFORD",
    "ACTIVATION_VERSION",
    "MAX_ACTIVATION_DAYS",
    "TYPED_LEASE_LABEL",
    "ActivationRequest",
    "ActivatedLease",
    "ReturnCode",
    "create_activation_request",
    "read_activation_request",
    "verify_activation",
    "return_code_for",
    "read_return_code",
    "encode_typed",
    "decode_typed",
    "check_character",
    "fingerprint_hash",
    "activated_fingerprint",
    "binding_of",
]

#: Crockford's base32 alphabet: a character is five bits, most significant first.
CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
ACTIVATION_VERSION = 1
#: The longest activation a request may ask for, in days.
MAX_ACTIVATION_DAYS = 365
#: What a typed answer's signature covers before its bytes: it can never be taken for another
#: message a Keyward key signs.
TYPED_LEASE_LABEL = b"keyward typed lease v1\n"

_GROUP = 5
_KIND_REQUEST = 0x52
_KIND_ANSWER = 0x4C
_KIND_RETURN = 0x58
_KIND_NAMES = {
    _KIND_REQUEST: "an activation request",
    _KIND_ANSWER: "an activation answer",
    _KIND_RETURN: "a return code",
}
_NONCE_BYTES = 8
_FINGERPRINT_HASH_BYTES = 10
_BINDING_BYTES = 6
_KID_PREFIX_BYTES = 4
_SIGNATURE_BYTES = 64
_U32 = 2**32

# A reader forgives case, O for 0, I and L for 1.
_VALUES: Dict[str, int] = {char: value for value, char in enumerate(CROCKFORD)}
_VALUES.update({"O": 0, "I": 1, "L": 1})
_SEPARATORS = re.compile(r"[\s-]")


# --- The typed code ---------------------------------------------------------------------------


def check_character(group_index: int, values: List[int]) -> int:
    """The check character's value of group ``group_index`` (from 0): Luhn mod 32 over the
    group's number mod 32 and its values, doubling every other value from the rightmost."""
    every = [group_index % 32, *values]
    total = 0
    double = True
    for value in reversed(every):
        if double:
            value *= 2
            value = value // 32 + value % 32
        total += value
        double = not double
    return (32 - total % 32) % 32


def _five_bits(data: bytes) -> List[int]:
    out: List[int] = []
    buffer = bits = 0
    for byte in data:
        buffer = (buffer << 8) | byte
        bits += 8
        while bits >= 5:
            out.append((buffer >> (bits - 5)) & 31)
            bits -= 5
        buffer &= (1 << bits) - 1
    if bits:
        out.append((buffer << (5 - bits)) & 31)
    return out


def _bytes_of(values: List[int]) -> bytes:
    out = bytearray()
    buffer = bits = 0
    for value in values:
        buffer = (buffer << 5) | value
        bits += 5
        if bits >= 8:
            out.append((buffer >> (bits - 8)) & 255)
            bits -= 8
        buffer &= (1 << bits) - 1
    return bytes(out[: len(values) * 5 // 8])


def encode_typed(data: bytes) -> str:
    """The typed form of ``data``: ``7ZK2Q4-9XP0MC-…``."""
    values = _five_bits(bytes(data))
    groups = []
    for start in range(0, len(values), _GROUP):
        group = values[start : start + _GROUP]
        check = check_character(start // _GROUP, group)
        groups.append("".join(CROCKFORD[v] for v in group) + CROCKFORD[check])
    return "-".join(groups)


def decode_typed(text: str) -> bytes:
    """The bytes of a typed code. Forgives lower case, ``O`` for 0, ``I`` and ``L`` for 1, spaces
    and missing dashes.

    :raises ActivationFormatError: naming in ``group`` (from 1) the first group that does not
        check, holds a character that is none of the code's, or is cut short.
    """
    compact = _SEPARATORS.sub("", text)
    if not compact:
        raise ActivationFormatError("the code is empty")
    values: List[int] = []
    for at, char in enumerate(compact):
        value = _VALUES.get(char.upper())
        if value is None:
            number = at // (_GROUP + 1) + 1
            raise ActivationFormatError(
                f"character {char!r} in group {number} is not one of the code's", number
            )
        values.append(value)
    data: List[int] = []
    for index, at in enumerate(range(0, len(values), _GROUP + 1)):
        group = values[at : at + _GROUP + 1]
        if len(group) < 2:
            raise ActivationFormatError(f"group {index + 1} is cut short", index + 1)
        payload, check = group[:-1], group[-1]
        if check_character(index, payload) != check:
            raise ActivationFormatError(
                f"group {index + 1} does not check: a character in it is mistyped", index + 1
            )
        data.extend(payload)
    return _bytes_of(data)


# --- Hashes that stand for what never leaves the machine --------------------------------------


def fingerprint_hash(fingerprint: str) -> bytes:
    """The machine's fingerprint as an activation carries it: the first 10 bytes of the SHA-256
    of its UTF-8. The fingerprint itself never leaves the machine."""
    return hashlib.sha256(fingerprint.encode("utf-8")).digest()[:_FINGERPRINT_HASH_BYTES]


def activated_fingerprint(hash_or_fingerprint: Union[bytes, str]) -> str:
    """The ``fingerprint`` claim of an activated lease's JWS: ``fph1:`` and the fingerprint hash
    in base32 (no checks). Give the hash (bytes) or the machine's fingerprint (text). Verify a
    saved activated lease with :func:`keyward.verify_lease` and this as the fingerprint."""
    digest = (
        fingerprint_hash(hash_or_fingerprint)
        if isinstance(hash_or_fingerprint, str)
        else bytes(hash_or_fingerprint)
    )
    return "fph1:" + "".join(CROCKFORD[v] for v in _five_bits(digest))


def binding_of(app_key: str, asset_num: str, crm_product_id: str) -> bytes:
    """The first 6 bytes of SHA-256 of ``appKey "\\n" assetNum "\\n" crmProductId``: what a typed
    answer says it was asked for."""
    text = f"{app_key}\n{asset_num}\n{crm_product_id}"
    return hashlib.sha256(text.encode("utf-8")).digest()[:_BINDING_BYTES]


def _kid_prefix(kid: str) -> Optional[bytes]:
    """The first 4 bytes of a kid (an RFC 7638 thumbprint, base64url): how a typed answer names
    its key; None when the kid is not base64url."""
    try:
        return _b64url_decode(kid)[:_KID_PREFIX_BYTES]
    except (ValueError, binascii.Error):
        return None


def _nonce_text(nonce: bytes) -> str:
    return base64.urlsafe_b64encode(nonce).rstrip(b"=").decode("ascii")


# --- Binary layouts ---------------------------------------------------------------------------


def _text_field(value: str, what: str) -> bytes:
    if not isinstance(value, str):
        raise ActivationFormatError(f"{what} must be text")
    encoded = value.encode("utf-8")
    if not 1 <= len(encoded) <= 255:
        raise ActivationFormatError(f"{what} must be 1 to 255 bytes of UTF-8")
    return bytes([len(encoded)]) + encoded


def _uuid_bytes(lease_id: str) -> bytes:
    digits = lease_id.replace("-", "") if isinstance(lease_id, str) else ""
    if not re.fullmatch(r"[0-9a-fA-F]{32}", digits):
        raise ActivationFormatError(f"{lease_id!r} is not a lease id")
    return bytes.fromhex(digits)


class _Reader:
    def __init__(self, data: bytes, what: str) -> None:
        self.data = data
        self.what = what
        self.at = 0

    def take(self, count: int, name: str) -> bytes:
        if self.at + count > len(self.data):
            raise ActivationFormatError(f"the {self.what} is cut short: {name} is missing")
        out = self.data[self.at : self.at + count]
        self.at += count
        return out

    def byte(self, name: str) -> int:
        return self.take(1, name)[0]

    def u16(self, name: str) -> int:
        value: int = struct.unpack(">H", self.take(2, name))[0]
        return value

    def u32(self, name: str) -> int:
        value: int = struct.unpack(">I", self.take(4, name))[0]
        return value

    def text(self, name: str) -> str:
        length = self.byte(name)
        if length == 0:
            raise ActivationFormatError(f"the {self.what}'s {name} is empty")
        try:
            return self.take(length, name).decode("utf-8")
        except UnicodeDecodeError:
            raise ActivationFormatError(f"the {self.what}'s {name} is not UTF-8") from None

    def header(self, kind: int) -> None:
        found = self.byte("its kind")
        if found != kind:
            other = _KIND_NAMES.get(found)
            raise ActivationFormatError(
                f"this is {other}, not {_KIND_NAMES[kind]}"
                if other is not None
                else f"this is not {_KIND_NAMES[kind]} of Keyward's"
            )
        version = self.byte("its version")
        if version != ACTIVATION_VERSION:
            raise ActivationFormatError(
                f"the {self.what} is of version {version}; this reads version {ACTIVATION_VERSION}"
            )

    def end(self) -> None:
        if self.at != len(self.data):
            raise ActivationFormatError(f"the {self.what} has {len(self.data) - self.at} bytes too many")


# --- The request ------------------------------------------------------------------------------


@dataclass(frozen=True)
class ActivationRequest:
    """What an offline machine asks for: a seat of a product on a lock, for so many days. Keep
    it (:meth:`save`), nonce included, until its answer comes back: the answer is verified
    against it. ``created_at`` is an aware datetime, whole seconds (the request carries it so)."""

    app_key: str
    asset_num: str
    crm_product_id: str
    days: int
    created_at: datetime
    nonce: bytes = field(repr=False)
    fingerprint_hash: bytes = field(repr=False)

    def __post_init__(self) -> None:
        if isinstance(self.days, bool) or not isinstance(self.days, int) or not 1 <= self.days <= MAX_ACTIVATION_DAYS:
            raise ActivationFormatError(f"days must be 1 to {MAX_ACTIVATION_DAYS}, not {self.days!r}")
        if (
            not isinstance(self.created_at, datetime)
            or self.created_at.tzinfo is None
            or self.created_at.microsecond != 0
            or not 0 <= self.created_at_s < _U32
        ):
            raise ActivationFormatError("created_at must be an aware datetime, whole seconds, 1970 to 2106")
        if not isinstance(self.nonce, bytes) or len(self.nonce) != _NONCE_BYTES:
            raise ActivationFormatError(f"the nonce must be {_NONCE_BYTES} bytes")
        if not isinstance(self.fingerprint_hash, bytes) or len(self.fingerprint_hash) != _FINGERPRINT_HASH_BYTES:
            raise ActivationFormatError(f"the fingerprint hash must be {_FINGERPRINT_HASH_BYTES} bytes")
        _text_field(self.app_key, "app_key")
        _text_field(self.asset_num, "asset_num")
        _text_field(self.crm_product_id, "crm_product_id")

    def to_bytes(self) -> bytes:
        """The request's bytes (kind ``0x52``, version 1)."""
        return (
            bytes([_KIND_REQUEST, ACTIVATION_VERSION])
            + struct.pack(">HI", self.days, self.created_at_s)
            + self.nonce
            + self.fingerprint_hash
            + _text_field(self.app_key, "app_key")
            + _text_field(self.asset_num, "asset_num")
            + _text_field(self.crm_product_id, "crm_product_id")
        )

    @property
    def created_at_s(self) -> int:
        """``created_at`` in epoch seconds, as the request's bytes carry it."""
        return (self.created_at - _EPOCH) // timedelta(seconds=1)

    @property
    def code(self) -> str:
        """The typed code, to show or print for the person who takes it to Keyward."""
        return encode_typed(self.to_bytes())

    @property
    def activated_fingerprint(self) -> str:
        """The ``fingerprint`` claim of the lease that answers this request (``fph1:…``)."""
        return activated_fingerprint(self.fingerprint_hash)

    @property
    def binding(self) -> bytes:
        return binding_of(self.app_key, self.asset_num, self.crm_product_id)

    @property
    def file(self) -> Dict[str, Any]:
        """The request file's document: ``code`` (what the server reads) and, for people, what it
        asks for."""
        created = self.created_at.astimezone(timezone.utc)
        return {
            "keyward": "activation-request",
            "version": ACTIVATION_VERSION,
            "code": self.code,
            "appKey": self.app_key,
            "assetNum": self.asset_num,
            "crmProductId": self.crm_product_id,
            "days": self.days,
            "createdAt": created.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
        }

    def to_json(self) -> str:
        """The request file's text."""
        return json.dumps(self.file, indent=2, ensure_ascii=False) + "\n"

    def save(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """Writes the request file (readable by its owner only), whole or not at all: the pending
        request to keep, and the file to carry to Keyward."""
        _write_atomically(path, self.to_json(), 0o600)

    @classmethod
    def load(cls, path: Union[str, "os.PathLike[str]"]) -> "ActivationRequest":
        """Reads a request file (or a file holding the typed code)."""
        with open(path, "r", encoding="utf-8") as source:
            return cls.read(source.read())

    @classmethod
    def from_bytes(cls, data: bytes) -> "ActivationRequest":
        reader = _Reader(bytes(data), "activation request")
        reader.header(_KIND_REQUEST)
        days = reader.u16("days")
        created_at = reader.u32("its time")
        nonce = reader.take(_NONCE_BYTES, "its nonce")
        fingerprint = reader.take(_FINGERPRINT_HASH_BYTES, "the machine's fingerprint")
        app_key = reader.text("appKey")
        asset_num = reader.text("assetNum")
        crm_product_id = reader.text("crmProductId")
        reader.end()
        if not 1 <= days <= MAX_ACTIVATION_DAYS:
            raise ActivationFormatError(
                f"the activation request asks for {days} days; 1 to {MAX_ACTIVATION_DAYS} are possible"
            )
        return cls(app_key, asset_num, crm_product_id, days, _from_epoch_s(created_at), nonce, fingerprint)

    @classmethod
    def read(cls, text: str) -> "ActivationRequest":
        """A request from its typed code or its file's text (the file's ``code`` is what counts).

        :raises ActivationFormatError: with ``group`` when a group of the code does not check.
        """
        trimmed = text.strip()
        if trimmed.startswith("{"):
            try:
                document = json.loads(trimmed)
            except ValueError:
                raise ActivationFormatError("the request file is not JSON") from None
            code = document.get("code") if isinstance(document, dict) else None
            if not isinstance(document, dict) or document.get("keyward") != "activation-request" or not isinstance(code, str):
                raise ActivationFormatError("the file is not a Keyward activation request")
            trimmed = code
        return cls.from_bytes(decode_typed(trimmed))

    def return_code(self, lease_id: str) -> str:
        """The code to hand back after deleting the lease that answered this request."""
        return return_code_for(self, lease_id)


def create_activation_request(
    app_key: str,
    asset_num: str,
    crm_product_id: str,
    days: int,
    fingerprint: str,
    *,
    now: Union[None, float, datetime] = None,
    nonce: Optional[bytes] = None,
) -> ActivationRequest:
    """A request for ``days`` days (1–365) of the product ``crm_product_id`` on the lock
    ``asset_num``, for this machine (its ``fingerprint``, which the request carries hashed).

    :param now: when the request is made (seconds since the epoch or an aware datetime); now when
        None. For tests, as ``nonce`` (8 bytes; random when None).
    :raises ActivationFormatError: days out of 1–365, a text empty or over 255 bytes of UTF-8.
    """
    return ActivationRequest(
        app_key=app_key,
        asset_num=asset_num,
        crm_product_id=crm_product_id,
        days=days,
        created_at=_from_epoch_s(_now_ms(now) // 1000),
        nonce=secrets.token_bytes(_NONCE_BYTES) if nonce is None else bytes(nonce),
        fingerprint_hash=fingerprint_hash(fingerprint),
    )


def read_activation_request(text: str) -> ActivationRequest:
    """A request from its typed code or its file's text: :meth:`ActivationRequest.read`."""
    return ActivationRequest.read(text)


# --- The answer -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ActivatedLease:
    """What a verified activation answer says. Times are aware UTC datetimes; ``exp_bound``
    is ``offline-days``, ``license-end`` or ``time-duration``. ``lease`` is the signed lease (JWS)
    when the answer was the file or the JWS, with its ``claims``; None for a typed answer."""

    lease_id: str
    issued_at: datetime
    expires_at: datetime
    exp_bound: str
    asset_num: str
    crm_product_id: str
    app_key: str
    lease: Optional[str] = field(default=None, repr=False)
    claims: Optional[LeaseClaims] = field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class _TypedAnswer:
    kid_prefix: bytes
    lease_id: str
    issued_at: int
    expires_at: int
    exp_bound: int
    nonce: bytes
    fingerprint_hash: bytes
    binding: bytes
    signed: bytes
    signature: bytes


def _read_typed_answer(data: bytes) -> _TypedAnswer:
    reader = _Reader(data, "activation answer")
    reader.header(_KIND_ANSWER)
    kid_prefix = reader.take(_KID_PREFIX_BYTES, "its key")
    lease_id = str(uuid.UUID(bytes=reader.take(16, "its lease id")))
    issued_at = reader.u32("its time")
    expires_at = reader.u32("its expiry")
    exp_bound = reader.byte("its bound")
    nonce = reader.take(_NONCE_BYTES, "its request's nonce")
    fingerprint = reader.take(_FINGERPRINT_HASH_BYTES, "the machine's fingerprint")
    binding = reader.take(_BINDING_BYTES, "what it was asked for")
    signed = data[: reader.at]
    signature = reader.take(_SIGNATURE_BYTES, "its signature")
    reader.end()
    if exp_bound >= len(EXP_BOUNDS):
        raise ActivationFormatError("the activation answer names an unknown bound")
    return _TypedAnswer(
        kid_prefix, lease_id, issued_at, expires_at, exp_bound, nonce, fingerprint, binding, signed, signature
    )


def _refuse(reason: str, detail: str, group: Optional[int] = None) -> LeaseError:
    return LeaseError(reason, detail, group)


def _verify_typed(code: str, request: ActivationRequest, keys: Jwks, fingerprint: str, now_s: int) -> ActivatedLease:
    try:
        answer = _read_typed_answer(decode_typed(code))
    except ActivationFormatError as error:
        raise _refuse("malformed", str(error), error.group) from None
    verifiers = keys._verifiers_where(lambda kid: _kid_prefix(kid) == answer.kid_prefix)
    if not verifiers:
        raise _refuse("unknown-key", "no key of the key set signed it")
    signed = TYPED_LEASE_LABEL + answer.signed
    for verifier in verifiers:
        try:
            verifier.verify(answer.signature, signed)
            break
        except InvalidSignature:
            continue
    else:
        raise _refuse("signature", "its signature does not verify")
    if answer.issued_at > now_s:
        raise _refuse("not-yet-valid", f"issued at {answer.issued_at}, now is {now_s}")
    if answer.expires_at <= now_s:
        raise _refuse("expired", f"expired at {answer.expires_at}, now is {now_s}")
    if not secrets.compare_digest(answer.nonce, request.nonce) or answer.binding != request.binding:
        raise _refuse("request", "it answers another activation request")
    if answer.fingerprint_hash != fingerprint_hash(fingerprint):
        raise _refuse("fingerprint", "it was activated for another machine")
    return ActivatedLease(
        lease_id=answer.lease_id,
        issued_at=_from_epoch_s(answer.issued_at),
        expires_at=_from_epoch_s(answer.expires_at),
        exp_bound=EXP_BOUNDS[answer.exp_bound],
        asset_num=request.asset_num,
        crm_product_id=request.crm_product_id,
        app_key=request.app_key,
    )


def verify_activation(
    answer: str,
    request: Union[ActivationRequest, str],
    jwks: Union[Jwks, Mapping[str, Any]],
    fingerprint: str,
    now: Union[None, float, datetime] = None,
) -> ActivatedLease:
    """Verifies an activation's answer on the machine that asked, without the server.

    :param answer: the typed answer code, the answer file's text, or the signed lease (JWS) alone.
    :param request: the pending request it must answer (or its code or file text).
    :param jwks: the key set the software shipped with (:class:`Jwks` or the parsed JSON).
    :param fingerprint: this machine's fingerprint (as given to :func:`create_activation_request`).
    :param now: the clock (seconds since the epoch, or an aware datetime); now when None.
    :raises LeaseError: ``reason`` ``malformed`` (``group`` names a typed code's mistyped group),
        ``unknown-key``, ``signature``, ``not-yet-valid``, ``expired``, ``request`` (it answers
        another request: nonce, app, lock or product) or ``fingerprint``, in that order; for a JWS
        also :func:`keyward.verify_lease`'s ``audience`` and ``license-ended``.
    :raises ActivationFormatError: when ``request`` is text that is no request.
    """
    pending = request if isinstance(request, ActivationRequest) else ActivationRequest.read(request)
    keys = jwks if isinstance(jwks, Jwks) else Jwks.from_dict(jwks)
    now_s = _now_ms(now) // 1000
    if not isinstance(answer, str):
        raise _refuse("malformed", "an answer is text")
    lease = answer.strip()
    if lease.startswith("{"):
        try:
            document = json.loads(lease)
        except ValueError:
            raise _refuse("malformed", "the answer file is not JSON") from None
        if (
            not isinstance(document, dict)
            or document.get("keyward") != "activation-answer"
            or not isinstance(document.get("lease"), str)
        ):
            raise _refuse("malformed", "the file is not a Keyward activation answer")
        lease = document["lease"].strip()
    if len(lease.split(".")) != 3:
        return _verify_typed(lease, pending, keys, fingerprint, now_s)

    claims = verify_lease(lease, keys, activated_fingerprint(fingerprint), audience=pending.app_key, now=now)
    activation = claims.raw.get("activation")
    nonce = activation.get("nonce") if isinstance(activation, dict) else None
    if (
        not isinstance(nonce, str)
        or not secrets.compare_digest(nonce.encode("utf-8"), _nonce_text(pending.nonce).encode("ascii"))
        or claims.asset_num != pending.asset_num
        or claims.product.crm_product_id != pending.crm_product_id
    ):
        raise _refuse("request", "it answers another activation request")
    return ActivatedLease(
        lease_id=claims.lease_id,
        issued_at=claims.issued_at,
        expires_at=claims.expires_at,
        exp_bound=claims.exp_bound or "offline-days",
        asset_num=claims.asset_num,
        crm_product_id=pending.crm_product_id,
        app_key=pending.app_key,
        lease=lease,
        claims=claims,
    )


# --- The return code --------------------------------------------------------------------------


@dataclass(frozen=True)
class ReturnCode:
    """What a return code says: the lease and the request it answered."""

    lease_id: str
    nonce: bytes
    fingerprint_hash: bytes


def return_code_for(request: ActivationRequest, lease_id: str) -> str:
    """The code a machine shows after deleting its activated lease: entered in Keyward's console
    it frees the seat at once, where the app allows early return."""
    return encode_typed(
        bytes([_KIND_RETURN, ACTIVATION_VERSION]) + _uuid_bytes(lease_id) + request.nonce + request.fingerprint_hash
    )


def read_return_code(text: str) -> ReturnCode:
    """A return code read back (as the server does)."""
    reader = _Reader(decode_typed(text), "return code")
    reader.header(_KIND_RETURN)
    lease_id = str(uuid.UUID(bytes=reader.take(16, "its lease id")))
    nonce = reader.take(_NONCE_BYTES, "its request's nonce")
    fingerprint = reader.take(_FINGERPRINT_HASH_BYTES, "the machine's fingerprint")
    reader.end()
    return ReturnCode(lease_id, nonce, fingerprint)
