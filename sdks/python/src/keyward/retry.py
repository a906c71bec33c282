"""When a runtime call is sent again: the retry policy, ``Retry-After`` and idempotency keys.

A runtime call (check-out, heartbeat, consume, check-in) is retried when no answer came (the
connection was refused, reset or closed, or the timeout passed before an answer) and when the
server answered HTTP 429 (rate limited) or 503 (overloaded). A refusal is never retried: an
envelope with a business code (HTTP 299), or any other 4xx. Each attempt carries a fresh
``g_nonce``; a consume keeps one ``Idempotency-Key`` across its attempts, so the server counts it
once however many of them reached it.
"""

from __future__ import annotations

import email.utils
import random
import secrets
import ssl
import time
import urllib.error
from dataclasses import dataclass
from typing import Callable, Mapping, Optional

from .errors import KeywardConnectionError, KeywardError

__all__ = ["RetryPolicy", "NO_RETRY", "new_idempotency_key"]

#: The HTTP statuses that say "not now" rather than "no": rate limited, overloaded.
RETRIED_STATUSES = frozenset({429, 503})


@dataclass(frozen=True)
class RetryPolicy:
    """How a session retries its runtime calls. The defaults suit a licensed program: a call gives
    up after four attempts or a minute, whichever comes first.

    :param max_attempts: attempts in all, the first included; 1 turns retries off.
    :param initial_backoff: seconds; the n-th retry waits a random time between 0 and
        ``initial_backoff * 2**(n-1)`` ("full jitter", so a fleet that failed together does not
        come back together) …
    :param max_backoff: … and never more than this.
    :param max_retry_after: a ``Retry-After`` longer than this is cut to it.
    :param max_elapsed: seconds from the call's start within which it ends, its attempts and
        waits together: no retry is started when its wait would end past it, and an attempt under
        way is cut off at it. Each attempt is bounded by the session's ``timeout`` besides.
    """

    max_attempts: int = 4
    initial_backoff: float = 0.5
    max_backoff: float = 8.0
    max_retry_after: float = 30.0
    max_elapsed: float = 60.0

    def __post_init__(self) -> None:
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        if min(self.initial_backoff, self.max_backoff, self.max_retry_after, self.max_elapsed) < 0:
            raise ValueError("the backoff and the limits must not be negative")

    def backoff(self, retry: int, uniform: Callable[[float, float], float] = random.uniform) -> float:
        """The wait before retry number ``retry`` (1 for the first), without ``Retry-After``."""
        ceiling = min(self.max_backoff, self.initial_backoff * 2 ** min(retry - 1, 32))
        return uniform(0.0, ceiling)

    def wait(self, retry: int, retry_after: Optional[float]) -> float:
        """The wait before retry number ``retry``: the server's ``Retry-After`` (capped) when it
        gave one, at least the jittered backoff."""
        jittered = self.backoff(retry)
        if retry_after is None:
            return jittered
        return max(min(retry_after, self.max_retry_after), jittered)


#: A policy that sends every call once.
NO_RETRY = RetryPolicy(max_attempts=1)


def new_idempotency_key() -> str:
    """A fresh ``Idempotency-Key``: 128 bits from the OS's CSPRNG, base64url (22 characters)."""
    return secrets.token_urlsafe(16)


def check_idempotency_key(key: str) -> str:
    """The key, when the server would take it: 1–255 printable ASCII characters, no spaces."""
    if not 1 <= len(key) <= 255 or any(not 0x21 <= ord(c) <= 0x7E for c in key):
        raise ValueError("an idempotency key is 1–255 printable ASCII characters without spaces")
    return key


def retry_after_of(headers: Mapping[str, str], now: Callable[[], float] = time.time) -> Optional[float]:
    """``Retry-After`` in seconds (delta-seconds or an HTTP date), None when absent or unreadable."""
    value = headers.get("retry-after", "").strip()
    if value.isdigit():
        return float(value)
    if value:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is not None:
            return max(0.0, when.timestamp() - now())
    return None


def is_transient(error: BaseException) -> bool:
    """Whether a failed attempt may succeed if sent again: no answer, or HTTP 429 or 503."""
    if isinstance(error, KeywardError):
        return error.http_status in RETRIED_STATUSES
    if isinstance(error, KeywardConnectionError):
        # A certificate the session does not trust stays untrusted: no point asking again.
        cause = error.__cause__
        reason = cause.reason if isinstance(cause, urllib.error.URLError) else cause
        return not isinstance(reason, (ssl.SSLCertVerificationError, ssl.CertificateError))
    return False
