"""The exceptions of the Keyward SDK.

- :class:`KeywardError`: the server answered and refused (a runtime code such as ``"90005"``, a
  token refusal, an answer that is no Keyward envelope). Retrying the same call will not help.
- :class:`KeywardRedirectError`: the server answered a redirect (3xx), which the SDK never
  follows: ``location`` says where it pointed. A :class:`KeywardError`, not retried.
- :class:`KeywardConnectionError`: the server could not be reached or did not answer in time.
  It is a :class:`ConnectionError`, never a :class:`KeywardError`: the program may run on and
  try again later.
- :class:`LeaseError`: :func:`keyward.verify_lease` refused an offline lease, or
  :func:`keyward.verify_activation` an activation's answer; ``reason`` says why.
- :class:`ActivationFormatError`: a typed code or an activation message does not read; ``group``
  names the typed code's mistyped group.
- :class:`WebhookError`: :func:`keyward.verify_webhook` refused a webhook.
"""

from __future__ import annotations

from typing import Any, Optional

__all__ = [
    "KeywardError",
    "KeywardAuthError",
    "KeywardRedirectError",
    "KeywardConnectionError",
    "LeaseError",
    "LEASE_REASONS",
    "ActivationFormatError",
    "WebhookError",
    "LEASE_ENDED_CODES",
]

#: Runtime codes that mean the lease is over: no such lease (checked in, another machine's),
#: revoked (the license was withdrawn), expired (its heartbeats stopped).
LEASE_ENDED_CODES = frozenset({"90008", "90009", "90010"})


class KeywardError(Exception):
    """A refusal by Keyward: its ``code`` (digits as a string, e.g. ``"90005"``), ``message``,
    ``cause``, the HTTP status it came with (299 for business failures) and the server's request
    id (``x-request-id``), for its logs. ``retry_after`` (seconds) is set when the server asked to
    wait (HTTP 429 rate limited, 503 overloaded); the session retried those before raising."""

    code: str
    message: str
    cause: str
    http_status: int
    request_id: Optional[str]
    data: Any
    retry_after: Optional[float]

    def __init__(
        self,
        code: str,
        message: str,
        cause: str = "",
        http_status: int = 299,
        request_id: Optional[str] = None,
        data: Any = None,
        retry_after: Optional[float] = None,
    ) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.cause = cause
        self.http_status = http_status
        self.request_id = request_id
        self.data = data
        self.retry_after = retry_after

    def __reduce__(self) -> Any:
        # Picklable (multiprocessing, logging queues) although __init__ takes more than args.
        return (
            type(self),
            (
                self.code,
                self.message,
                self.cause,
                self.http_status,
                self.request_id,
                self.data,
                self.retry_after,
            ),
        )

    @property
    def lease_ended(self) -> bool:
        """True when the refusal says the lease is over (90008, 90009, 90010)."""
        return self.code in LEASE_ENDED_CODES

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(code={self.code!r}, message={self.message!r}, "
            f"cause={self.cause!r}, http_status={self.http_status!r})"
        )


class KeywardAuthError(KeywardError):
    """The token endpoint refused the application's credentials: ``code`` is the OAuth error
    (``invalid_client``, ``invalid_scope``, ``temporarily_unavailable`` …), ``message`` its
    description. ``retry_after`` (seconds) is set when the server asked to wait (HTTP 429)."""

    def __init__(
        self,
        code: str,
        message: str,
        http_status: int,
        request_id: Optional[str] = None,
        retry_after: Optional[float] = None,
    ) -> None:
        super().__init__(code, message, message, http_status, request_id, retry_after=retry_after)

    def __reduce__(self) -> Any:
        return (
            type(self),
            (self.code, self.message, self.http_status, self.request_id, self.retry_after),
        )


class KeywardRedirectError(KeywardError):
    """The server answered a redirect (HTTP 301, 302, 303, 307, 308 or another 3xx), which the
    SDK never follows: a POST would be sent again as a GET and the ``Authorization`` header to
    wherever ``Location`` points. ``code`` is the status as text (``"302"``), ``http_status`` the
    status, ``location`` the absolute address it pointed to (None without a ``Location``). Point
    the session at the address that answers (``https://`` rather than ``http://``, say)."""

    location: Optional[str]

    def __init__(
        self,
        http_status: int,
        message: str,
        location: Optional[str] = None,
        cause: str = "",
        request_id: Optional[str] = None,
    ) -> None:
        super().__init__(str(http_status), message, cause, http_status, request_id)
        self.location = location

    def __reduce__(self) -> Any:
        return (
            type(self),
            (self.http_status, self.message, self.location, self.cause, self.request_id),
        )


class KeywardConnectionError(ConnectionError):
    """Keyward could not be reached: refused or dropped connection, DNS, TLS, timeout."""


#: The reasons :class:`LeaseError` may carry (sdks/conformance/README.md; ``grant-expired`` and
#: ``beyond-grant`` are a relay's lease's alone; ``request`` is :func:`keyward.verify_activation`'s
#: alone, docs/activation.md).
LEASE_REASONS = frozenset(
    {
        "malformed",
        "signature",
        "unknown-key",
        "not-yet-valid",
        "expired",
        "audience",
        "fingerprint",
        "license-ended",
        "grant-expired",
        "beyond-grant",
        "request",
    }
)


class LeaseError(Exception):
    """An offline lease refused by :func:`keyward.verify_lease`, or an activation's answer by
    :func:`keyward.verify_activation`.

    ``reason`` is one of ``malformed``, ``signature``, ``unknown-key``, ``not-yet-valid``,
    ``expired``, ``audience``, ``fingerprint``, ``license-ended``; for a relay's lease
    ``grant-expired`` (the pool grant it carries has ended: the relay must renew it) and
    ``beyond-grant`` (the lease says more than its grant gives: a later ``exp``, another license
    or product, more seats, a machine not on the grant's list); and for an activation ``request``
    (it answers another request). ``unknown-key`` with a saved JWKS means a key newer than the
    copy: fetch the JWKS again when online. ``group`` is set when a typed answer does not
    read because of one of its groups (counted from 1, as a person reads): show it, so the person
    types that group again.
    """

    reason: str
    detail: str
    group: Optional[int]

    def __init__(self, reason: str, message: str, group: Optional[int] = None) -> None:
        super().__init__(f"lease refused ({reason}): {message}")
        self.reason = reason
        self.detail = message
        self.group = group

    def __reduce__(self) -> Any:
        return (type(self), (self.reason, self.detail, self.group))


class ActivationFormatError(ValueError):
    """A typed code or an activation message (request, answer, return code) that does not read:
    a group that does not check, a character that is none of the code's, a message cut short, of
    another kind or of an unknown version. ``group`` names the typed code's group at fault,
    counted from 1, when one is (``"group 5 is mistyped"``); None otherwise."""

    group: Optional[int]

    def __init__(self, message: str, group: Optional[int] = None) -> None:
        super().__init__(message)
        self.group = group

    def __reduce__(self) -> Any:
        return (type(self), (str(self), self.group))


class WebhookError(Exception):
    """A webhook refused by :func:`keyward.verify_webhook`: a missing header, a timestamp out of
    tolerance, no matching signature, or an event whose id is not the ``webhook-id``."""
