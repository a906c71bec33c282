"""Verify Keyward's webhooks in the vendor's back end (Standard Webhooks, HMAC-SHA256)."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import re
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Iterable, List, Mapping, Optional, Union

from .errors import WebhookError

__all__ = ["WebhookEvent", "verify_webhook", "DEFAULT_TOLERANCE_SECONDS"]

DEFAULT_TOLERANCE_SECONDS = 300
_DIGITS = re.compile(r"^[0-9]+$")


@dataclass(frozen=True)
class WebhookEvent:
    """A webhook Keyward sent: the body's fields (docs/webhooks.md lists the types and their
    data). Deduplicate by ``id``: a delivery may come more than once. ``timestamp`` is when it
    occurred, an aware datetime (None when the body has none that reads)."""

    id: str
    type: str
    timestamp: Optional[datetime]
    scope: Mapping[str, Any]
    data: Mapping[str, Any]
    request_id: Optional[str]
    raw: Mapping[str, Any] = field(repr=False, compare=False)


def _header(headers: Any, name: str) -> str:
    """A header from a dict (any case), an ``http.server``/``email.message`` header object or a
    WSGI-like mapping; an empty or missing one is refused."""
    value: Any = None
    getter = getattr(headers, "get", None)
    if getter is not None:
        value = getter(name)
        if value is None:
            value = getter(name.title())
    if value is None and isinstance(headers, Mapping):
        for key, candidate in headers.items():
            if isinstance(key, str) and key.lower() == name:
                value = candidate
                break
    if isinstance(value, (list, tuple)):
        value = value[0] if value else None
    if isinstance(value, bytes):
        value = value.decode("latin-1")
    if not isinstance(value, str) or value == "":
        raise WebhookError(f"missing {name} header")
    return value


def _secret_key(secret: str) -> bytes:
    encoded = secret[len("whsec_") :] if secret.startswith("whsec_") else secret
    try:
        return base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("a webhook secret is whsec_ followed by base64") from None


def verify_webhook(
    secrets: Union[str, Iterable[str]],
    body: Union[bytes, str],
    headers: Any,
    tolerance: int = DEFAULT_TOLERANCE_SECONDS,
    now: Optional[float] = None,
) -> WebhookEvent:
    """Verifies a webhook and answers its event.

    :param secrets: the endpoint's ``whsec_…`` secret, or several while a rotation overlaps.
    :param body: the raw request body, exactly as received (bytes; a str is taken as UTF-8).
    :param headers: the request's headers (``webhook-id``, ``webhook-timestamp``,
        ``webhook-signature``): a dict, ``http.server``'s ``self.headers``, a framework's headers.
    :param tolerance: how far ``webhook-timestamp`` may be from now, in seconds (replays).
    :param now: the clock in seconds since the epoch; now when None.
    :raises WebhookError: when the webhook is not Keyward's, or is too old or too new.
    :raises ValueError: when a secret is not ``whsec_`` and base64 (the receiver's setting).
    """
    message_id = _header(headers, "webhook-id")
    timestamp = _header(headers, "webhook-timestamp")
    signatures: List[bytes] = [
        entry[3:].encode("ascii", "replace")
        for entry in _header(headers, "webhook-signature").split(" ")
        if entry.startswith("v1,")
    ]
    if not _DIGITS.match(timestamp):
        raise WebhookError("invalid webhook-timestamp header")
    current = int(time.time() if now is None else now)
    if abs(current - int(timestamp)) > tolerance:
        raise WebhookError("webhook-timestamp too far from now")
    raw_body = body.encode("utf-8") if isinstance(body, str) else bytes(body)
    signed = message_id.encode("utf-8") + b"." + timestamp.encode("ascii") + b"." + raw_body
    for secret in [secrets] if isinstance(secrets, str) else list(secrets):
        digest = hmac.new(_secret_key(secret), signed, hashlib.sha256).digest()
        expected = base64.b64encode(digest)
        # Every signature is compared, each in constant time.
        matched = False
        for candidate in signatures:
            matched = hmac.compare_digest(candidate, expected) or matched
        if matched:
            return _event_of(raw_body, message_id)
    raise WebhookError("no matching signature")


def _instant(value: Any) -> Optional[datetime]:
    """An event's ISO 8601 time (``2027-01-15T07:59:58.000Z``) as an aware datetime."""
    if not isinstance(value, str):
        return None
    try:
        # Python 3.9's fromisoformat does not read "Z".
        moment = datetime.fromisoformat(value[:-1] + "+00:00" if value.endswith("Z") else value)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else None


def _event_of(raw_body: bytes, message_id: str) -> WebhookEvent:
    try:
        event: Any = json.loads(raw_body)
    except (ValueError, UnicodeDecodeError):
        raise WebhookError("the body is not JSON") from None
    if not isinstance(event, dict):
        raise WebhookError("the body is not a JSON object")
    if event.get("id") != message_id:
        raise WebhookError("webhook-id differs from the event id")
    event_type = event.get("type")
    if not isinstance(event_type, str):
        raise WebhookError("the event has no type")
    scope = event.get("scope")
    data = event.get("data")
    return WebhookEvent(
        id=message_id,
        type=event_type,
        timestamp=_instant(event.get("timestamp")),
        scope=scope if isinstance(scope, dict) else {},
        data=data if isinstance(data, dict) else {},
        request_id=event.get("requestId"),
        raw=event,
    )
