"""The app-token session and the leases it checks out (the license runtime, /runtime/v1)."""

from __future__ import annotations

import base64
import json
import logging
import secrets
import threading
import time
import urllib.parse
from dataclasses import dataclass
from datetime import datetime
from types import TracebackType
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple, Type

from . import _http
from ._version import __version__
from .errors import KeywardAuthError, KeywardConnectionError, KeywardError
from .offline import Jwks, _from_epoch_ms
from .retry import RetryPolicy, check_idempotency_key, is_transient, new_idempotency_key, retry_after_of

__all__ = [
    "Session",
    "Lease",
    "Heartbeat",
    "Consumption",
    "CheckIn",
    "HeartbeatThread",
    "new_nonce",
]

log = logging.getLogger("keyward")


def _wait(interrupt: threading.Event, seconds: float) -> bool:
    """How a retry waits: ``seconds``, or less when ``interrupt`` is set (then True). Tests
    replace it to keep time."""
    return interrupt.wait(seconds)


#: The app token is stale or invalid: get a new one and try the call once more.
APP_TOKEN_INVALID = "60000"


def new_nonce() -> str:
    """A fresh ``g_nonce``: 32 characters of ``A-Za-z0-9_-`` from the OS's CSPRNG."""
    return secrets.token_urlsafe(24)


@dataclass(frozen=True)
class Heartbeat:
    """A heartbeat's answer: the lease lives until ``expires_at`` (an aware UTC datetime)."""

    lease_id: str
    expires_at: datetime
    heartbeat_interval_seconds: int
    used_seconds: int


@dataclass(frozen=True)
class Consumption:
    """The product's total ``consumed`` after the call, its ``limit`` and what ``remaining``
    (None: no limit)."""

    consumed: int
    limit: Optional[int]
    remaining: Optional[int]


@dataclass(frozen=True)
class CheckIn:
    """A check-in's answer: the lease's use, and when its seat is free for another machine
    (an aware UTC datetime; an offline lease keeps its seat until it expires)."""

    used_seconds: int
    seat_free_at: datetime


class _TokenSource:
    """The app token (client credentials), obtained on first use, reused while it lives and
    renewed shortly before it expires: a minute early, or at 90% of a short lifetime."""

    def __init__(self, obtain: Callable[[float], Tuple[str, float]], clock: Callable[[], float]) -> None:
        self._obtain = obtain
        self._clock = clock
        self._lock = threading.Lock()
        self._token: Optional[str] = None
        self._renew_at = 0.0

    def get(self, deadline: float) -> Tuple[str, bool]:
        """The token, and whether it was obtained for this call (before ``deadline``,
        time.monotonic())."""
        with self._lock:
            if self._token is not None and self._clock() < self._renew_at:
                return self._token, False
            token, lifetime = self._obtain(deadline)
            margin = min(60.0, lifetime / 10)
            self._token = token
            self._renew_at = self._clock() + lifetime - margin
            return token, True

    def discard(self, token: str) -> None:
        """The server refused ``token``: the next call asks for a new one."""
        with self._lock:
            if self._token == token:
                self._token = None


class Session:
    """A Keyward session for a licensed program: the application's credentials, its app token
    (renewed before it expires), a fresh ``g_nonce`` on every call, and one retry with a new token
    when the server answers 60000. Runtime calls are retried as ``retry`` says when no answer came
    or the server answered 429 or 503 (:mod:`keyward.retry`); a refusal never is. Thread-safe:
    leases heartbeat on their own threads.

    Use it as a context manager: leaving it stops the heartbeats and checks in every lease it
    checked out that is still open.

    .. code-block:: python

        with keyward.Session(url, app_key, app_secret) as session:
            with session.check_out(fingerprint, asset_num="A-1", crm_product_id="P-1") as lease:
                lease.start_heartbeats(on_ended=lambda error: stop_working(error))
                run()
    """

    def __init__(
        self,
        base_url: str,
        app_key: str,
        app_secret: str,
        *,
        scope: Optional[str] = "auth_runtime",
        timeout: float = 30.0,
        retry: RetryPolicy = RetryPolicy(),
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """
        :param base_url: where Keyward answers, e.g. ``https://keyward.example.com``.
        :param app_key: the application's key (scope ``auth_runtime``).
        :param app_secret: its secret.
        :param scope: the scopes to ask for (space-separated); all of the app's when None.
        :param timeout: seconds one attempt of a call may take as a whole: connecting, sending,
            and reading the whole answer (not each socket operation: a server that trickles its
            answer is cut off), the app token when one is due and the one retry after 60000
            included.
        :param retry: when to send a runtime call again (:class:`~keyward.retry.RetryPolicy`:
            four attempts within a minute by default; ``keyward.retry.NO_RETRY`` for one). Its
            ``max_elapsed`` bounds a runtime call as a whole, its attempts and waits together.
        :param clock: a monotonic clock in seconds, for the app token's renewal (tests pin it).
        """
        self.base_url = base_url.rstrip("/")
        self.app_key = app_key
        self._app_secret = app_secret
        self._scope = scope
        self.timeout = timeout
        self.retry = retry
        self._clock = clock
        self._opener = _http.new_opener()  # follows no redirect, bounds each exchange as a whole
        self._closing = threading.Event()
        self._tokens = _TokenSource(self._request_token, clock)
        self._leases: List[Lease] = []
        self._leases_lock = threading.Lock()
        self._user_agent = f"keyward-python/{__version__}"

    # -- context manager ------------------------------------------------------------------------

    def __enter__(self) -> "Session":
        return self

    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        traceback: Optional[TracebackType],
    ) -> None:
        self.close(raise_errors=exc is None)

    def close(self, raise_errors: bool = True) -> None:
        """Stops every lease's heartbeats and checks in the leases still open. The first failure
        is raised once all were tried (logged instead when ``raise_errors`` is False).

        A retry's wait in progress on any thread (a heartbeat waiting out a ``Retry-After``, say)
        ends at once, raising the failure it waited after, and the session waits for no retry
        from then on: each call, the check-ins of ``close`` included, is sent once."""
        self._closing.set()
        with self._leases_lock:
            leases, self._leases = self._leases, []
        for lease in leases:
            lease._stop_heartbeats_soon()
        first: Optional[BaseException] = None
        for lease in leases:
            try:
                lease.close()
            except (KeywardError, KeywardConnectionError) as error:
                log.warning("check-in of lease %s on close failed: %s", lease.lease_id, error)
                first = first or error
        if first is not None and raise_errors:
            raise first

    # -- the token ------------------------------------------------------------------------------

    def _request_token(self, deadline: float) -> Tuple[str, float]:
        # RFC 6749 §2.3.1: each part form-encoded before the Basic encoding.
        pair = f"{_form_encoded(self.app_key)}:{_form_encoded(self._app_secret)}".encode("utf-8")
        fields = {"grant_type": "client_credentials"}
        if self._scope is not None:
            fields["scope"] = self._scope
        answer = _http.exchange(
            "POST",
            f"{self.base_url}/oauth2/token",
            {
                "Authorization": "Basic " + base64.b64encode(pair).decode("ascii"),
                "Content-Type": "application/x-www-form-urlencoded",
                "Accept": "application/json",
                "User-Agent": self._user_agent,
            },
            urllib.parse.urlencode(fields).encode("ascii"),
            deadline,
            self._opener,
        )
        document = _json_of(answer.body)
        if answer.status == 200 and isinstance(document, dict):
            token = document.get("access_token")
            lifetime = document.get("expires_in")
            if isinstance(token, str) and isinstance(lifetime, (int, float)):
                return token, float(lifetime)
        error = document.get("error") if isinstance(document, dict) else None
        description = document.get("error_description") if isinstance(document, dict) else None
        retry_after = answer.headers.get("retry-after")
        raise KeywardAuthError(
            str(error or "server_error"),
            str(description or f"HTTP {answer.status} {answer.reason}".strip()),
            answer.status,
            answer.headers.get("x-request-id"),
            int(retry_after) if retry_after and retry_after.isdigit() else None,
        )

    def app_token(self) -> str:
        """A live app token, for calls the SDK does not wrap."""
        return self._tokens.get(self._attempt_deadline())[0]

    def _attempt_deadline(self, limit: Optional[float] = None) -> float:
        """When an attempt begun now must end (time.monotonic()): ``timeout`` from now, or
        ``limit`` when sooner."""
        deadline = time.monotonic() + self.timeout
        return deadline if limit is None else min(deadline, limit)

    # -- calls ----------------------------------------------------------------------------------

    def call(
        self,
        method: str,
        path: str,
        body: Optional[Mapping[str, Any]] = None,
        *,
        user_token: Optional[str] = None,
    ) -> Any:
        """One call to Keyward with the app token and a fresh nonce; answers the envelope's
        ``data``. A 60000 answer on a token obtained earlier is retried once with a new token.
        All of it within ``timeout``; a redirect is never followed.

        :raises KeywardError: the server refused (``code``, ``message``, ``cause``).
        :raises KeywardConnectionError: it could not be reached, or did not answer in time.
        :raises KeywardRedirectError: it answered a redirect (3xx), not followed.
        """
        payload = None if body is None else json.dumps(body, separators=(",", ":")).encode()
        return self._call(method, path, payload, user_token, {}, self._attempt_deadline())

    def _call(
        self,
        method: str,
        path: str,
        payload: Optional[bytes],
        user_token: Optional[str],
        extra_headers: Mapping[str, str],
        deadline: float,
    ) -> Any:
        token, fresh = self._tokens.get(deadline)
        try:
            return self._send(method, path, payload, token, user_token, extra_headers, deadline)
        except KeywardError as error:
            if error.code != APP_TOKEN_INVALID or fresh:
                raise
            log.debug("app token refused (60000): a new token, and the call once more")
            self._tokens.discard(token)
            token, _ = self._tokens.get(deadline)
            return self._send(method, path, payload, token, user_token, extra_headers, deadline)

    def _runtime_call(
        self,
        path: str,
        body: Mapping[str, Any],
        *,
        user_token: Optional[str] = None,
        idempotency_key: Optional[str] = None,
        interrupt: Optional[threading.Event] = None,
    ) -> Any:
        """A runtime POST, sent again as :attr:`retry` says (each attempt with a fresh nonce and
        the same ``idempotency_key``); the last failure is raised when it gives up. The call ends
        within ``retry.max_elapsed``, each attempt within ``timeout``. A wait for a retry ends
        early, raising the failure, when the session closes (or ``interrupt`` is set)."""
        payload = json.dumps(body, separators=(",", ":")).encode()
        headers = {} if idempotency_key is None else {"Idempotency-Key": idempotency_key}
        interrupt = self._closing if interrupt is None else interrupt
        ends = time.monotonic() + self.retry.max_elapsed
        attempt = 1
        while True:
            try:
                return self._call("POST", path, payload, user_token, headers, self._attempt_deadline(ends))
            except (KeywardError, KeywardConnectionError) as error:
                if attempt >= self.retry.max_attempts or not is_transient(error) or self._closing.is_set():
                    raise
                retry_after = error.retry_after if isinstance(error, KeywardError) else None
                wait = self.retry.wait(attempt, retry_after)
                if time.monotonic() + wait >= ends:
                    raise
                log.info("POST %s failed (%s): attempt %d in %.2f s", path, error, attempt + 1, wait)
                if _wait(interrupt, wait):
                    log.info("POST %s: the retry's wait was cut short (closing)", path)
                    raise
            attempt += 1

    def _send(
        self,
        method: str,
        path: str,
        payload: Optional[bytes],
        token: str,
        user_token: Optional[str],
        extra_headers: Mapping[str, str],
        deadline: float,
    ) -> Any:
        separator = "&" if "?" in path else "?"
        url = f"{self.base_url}{path}{separator}g_nonce={new_nonce()}"
        headers = {
            "Authorization": f"Bearer {token}",
            "Accept": "application/json",
            "User-Agent": self._user_agent,
        }
        if payload is not None:
            headers["Content-Type"] = "application/json"
        if user_token is not None:
            headers["userToken"] = user_token
        headers.update(extra_headers)
        answer = _http.exchange(method, url, headers, payload, deadline, self._opener)
        return _data_of(answer)

    # -- the runtime ----------------------------------------------------------------------------

    def check_out(
        self,
        fingerprint: str,
        *,
        asset_num: Optional[str] = None,
        crm_product_id: Optional[str] = None,
        product_uri: Optional[str] = None,
        offline_days: int = 0,
        user_token: Optional[str] = None,
    ) -> "Lease":
        """Checks out a seat: may this machine run the product?

        :param fingerprint: this machine (8–256 printable ASCII characters, no spaces).
        :param asset_num: the lock's asset number (a lock holder), or which of a member's assets.
        :param crm_product_id: the product, by its CRM id; and/or
        :param product_uri: the product by its URI.
        :param offline_days: days to run offline; the lease then carries ``offline_lease``.
        :param user_token: a member's ``userToken`` (password grant of the same app): the member
            holds the lease.
        :raises KeywardError: 90001–90007, 90011 (``code``; ``message`` says the limit and use).
        """
        if crm_product_id is None and product_uri is None:
            raise ValueError("name the product: crm_product_id and/or product_uri")
        body: Dict[str, Any] = {"fingerprint": fingerprint}
        if crm_product_id is not None:
            body["crmProductId"] = crm_product_id
        if product_uri is not None:
            body["productUri"] = product_uri
        if asset_num is not None:
            body["assetNum"] = asset_num
        if offline_days:
            body["offlineDays"] = offline_days
        data = self._runtime_call("/runtime/v1/leases", body, user_token=user_token)
        lease = Lease(self, fingerprint, data)
        with self._leases_lock:
            self._leases.append(lease)
        return lease

    def fetch_jwks(self) -> Jwks:
        """The server's lease-signing keys (``/.well-known/jwks.json``, public): save them with
        :meth:`Jwks.save` to verify offline leases later without the server."""
        answer = _http.exchange(
            "GET",
            f"{self.base_url}/.well-known/jwks.json",
            {"Accept": "application/json", "User-Agent": self._user_agent},
            None,
            self._attempt_deadline(),
            self._opener,
        )
        document = _json_of(answer.body)
        if answer.status != 200 or not isinstance(document, dict):
            raise KeywardError(
                str(answer.status), "the JWKS could not be read", answer.reason, answer.status
            )
        try:
            return Jwks.from_dict(document)
        except ValueError as error:
            raise KeywardError(str(answer.status), str(error), "", answer.status) from None

    def _forget(self, lease: "Lease") -> None:
        with self._leases_lock:
            if lease in self._leases:
                self._leases.remove(lease)

    def __repr__(self) -> str:
        return f"Session(base_url={self.base_url!r}, app_key={self.app_key!r})"


def _form_encoded(text: str) -> str:
    """As JavaScript's encodeURIComponent, which the TypeScript client uses."""
    return urllib.parse.quote(text, safe="-_.!~*'()")


def _json_of(body: bytes) -> Any:
    try:
        return json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return None


def _data_of(answer: _http.Answer) -> Any:
    """The envelope's data on success; a KeywardError for anything else."""
    document = _json_of(answer.body)
    request_id = answer.headers.get("x-request-id")
    if isinstance(document, dict):
        code = document.get("code")
        if answer.status == 200 and code == 0:
            return document.get("data")
        if isinstance(code, str) or (isinstance(code, int) and not isinstance(code, bool)):
            raise KeywardError(
                str(code),
                str(document.get("message") or ""),
                str(document.get("cause") or ""),
                answer.status,
                request_id,
                document.get("data"),
                retry_after_of(answer.headers),
            )
    raise KeywardError(
        str(answer.status),
        "unexpected answer",
        answer.reason,
        answer.status,
        request_id,
        retry_after=retry_after_of(answer.headers),
    )


class Lease:
    """A seat checked out for this machine. Heartbeat it while the program runs
    (:meth:`start_heartbeats`), consume from it, and check it in when done: leaving a ``with``
    block checks it in.

    ``ended`` is set when the server says the lease is over (90008 no such lease, 90009 revoked,
    90010 expired); ``end_error`` then holds that refusal.
    """

    lease_id: str
    status: str
    asset_num: str
    expires_at: datetime
    heartbeat_interval_seconds: int
    used_seconds: int
    product: Mapping[str, Any]
    limits: Mapping[str, Any]
    offline_lease: Optional[str]
    fingerprint: str
    data: Mapping[str, Any]

    def __init__(self, session: Session, fingerprint: str, data: Mapping[str, Any]) -> None:
        self.session = session
        self.fingerprint = fingerprint
        self.data = data
        self.lease_id = str(data["leaseId"])
        self.status = str(data.get("status", "granted"))
        self.asset_num = str(data.get("assetNum", ""))
        self.expires_at = _from_epoch_ms(int(data.get("expiresAt", 0)))
        self.heartbeat_interval_seconds = int(data.get("heartbeatIntervalSeconds", 60))
        self.used_seconds = 0
        self.product = data.get("product") or {}
        self.limits = data.get("limits") or {}
        self.offline_lease = data.get("offlineLease")
        self.ended = threading.Event()
        self.end_error: Optional[KeywardError] = None
        self.checked_in: Optional[CheckIn] = None
        self._thread: Optional[HeartbeatThread] = None
        self._lock = threading.Lock()

    # -- context manager ------------------------------------------------------------------------

    def __enter__(self) -> "Lease":
        return self

    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        traceback: Optional[TracebackType],
    ) -> None:
        try:
            self.close()
        except (KeywardError, KeywardConnectionError) as error:
            if exc is None:
                raise
            log.warning("check-in of lease %s failed: %s", self.lease_id, error)

    def close(self) -> Optional[CheckIn]:
        """Stops the heartbeats and checks the lease in, unless it is already checked in or the
        server ended it (then there is nothing to give back)."""
        self.stop_heartbeats()
        if self.checked_in is not None or self.ended.is_set():
            self.session._forget(self)
            return self.checked_in
        try:
            return self.check_in()
        except KeywardError as error:
            if error.lease_ended:
                return None
            raise

    # -- calls ----------------------------------------------------------------------------------

    def _call(
        self,
        action: str,
        body: Dict[str, Any],
        idempotency_key: Optional[str] = None,
        interrupt: Optional[threading.Event] = None,
    ) -> Any:
        try:
            return self.session._runtime_call(
                f"/runtime/v1/leases/{urllib.parse.quote(self.lease_id)}/{action}",
                body,
                idempotency_key=idempotency_key,
                interrupt=interrupt,
            )
        except KeywardError as error:
            if error.lease_ended:
                self._end(error)
            raise

    def _end(self, error: KeywardError) -> None:
        with self._lock:
            if self.end_error is None:
                self.end_error = error
        self.ended.set()

    def heartbeat(self) -> Heartbeat:
        """Keeps the lease alive for the server's lease time from now.

        :raises KeywardError: 90009 when the license was withdrawn (the message says why),
            90010 when it expired, 90008 when it is no more; ``ended`` is then set.
        """
        return self._heartbeat(None)

    def _heartbeat(self, interrupt: Optional[threading.Event]) -> Heartbeat:
        data = self._call("heartbeat", {"fingerprint": self.fingerprint}, interrupt=interrupt)
        answer = Heartbeat(
            lease_id=str(data["leaseId"]),
            expires_at=_from_epoch_ms(int(data["expiresAt"])),
            heartbeat_interval_seconds=int(data["heartbeatIntervalSeconds"]),
            used_seconds=int(data["usedSeconds"]),
        )
        self.expires_at = answer.expires_at
        self.heartbeat_interval_seconds = answer.heartbeat_interval_seconds
        self.used_seconds = answer.used_seconds
        return answer

    def consume(self, amount: int, *, idempotency_key: Optional[str] = None) -> Consumption:
        """Draws ``amount`` (1 – 10⁹) from the product's limit, atomically, and once: the call
        carries an ``Idempotency-Key``, the same on each of its retries, so an attempt whose
        answer was lost is not counted again (the server keeps a key 24 hours).

        :param idempotency_key: the key to send (1–255 printable ASCII characters, no spaces)
            instead of a new random one: pass the same key to send a consume again after
            :class:`KeywardConnectionError`, e.g. from another process that saved it.
        :raises KeywardError: 90007 when the amount left is smaller (nothing is drawn); 90000
            when the key was used with another lease or amount.
        """
        key = new_idempotency_key() if idempotency_key is None else check_idempotency_key(idempotency_key)
        data = self._call("consume", {"fingerprint": self.fingerprint, "amount": amount}, key)
        return Consumption(
            consumed=int(data["consumed"]),
            limit=None if data.get("limit") is None else int(data["limit"]),
            remaining=None if data.get("remaining") is None else int(data["remaining"]),
        )

    def check_in(self) -> CheckIn:
        """Ends the lease and charges its use; again for a lease checked in answers the same.
        An offline lease keeps its seat until it expires (``seat_free_at``)."""
        self.stop_heartbeats()
        data = self._call("check-in", {"fingerprint": self.fingerprint})
        answer = CheckIn(used_seconds=int(data["usedSeconds"]), seat_free_at=_from_epoch_ms(int(data["seatFreeAt"])))
        self.checked_in = answer
        self.used_seconds = answer.used_seconds
        self.session._forget(self)
        return answer

    # -- the heartbeat loop ---------------------------------------------------------------------

    def start_heartbeats(
        self,
        on_ended: Optional[Callable[[KeywardError], None]] = None,
        on_error: Optional[Callable[[BaseException], None]] = None,
        interval: Optional[float] = None,
    ) -> "HeartbeatThread":
        """Heartbeats on a daemon thread every ``heartbeat_interval_seconds`` (the server's,
        updated by each answer) until :meth:`stop_heartbeats`, check-in, or the server ends the
        lease (90008/90009/90010): the thread then sets ``ended`` and calls ``on_ended`` with the
        refusal. Other failures (network, 429, 500) go to ``on_error`` and the loop goes on: one
        lost heartbeat costs nothing. Callbacks run on the heartbeat thread.

        :param interval: seconds between heartbeats instead of the server's (tests).
        """
        with self._lock:
            if self._thread is not None and self._thread.is_alive():
                raise RuntimeError(f"lease {self.lease_id} already heartbeats")
            self._thread = HeartbeatThread(self, on_ended, on_error, interval)
            self._thread.start()
            return self._thread

    def stop_heartbeats(self, timeout: Optional[float] = None) -> None:
        """Stops the heartbeat thread, waiting for a heartbeat in flight to finish (a wait for
        its retry ends at once)."""
        with self._lock:
            thread, self._thread = self._thread, None
        if thread is not None:
            thread.stop(timeout)

    def _stop_heartbeats_soon(self) -> None:
        """Tells the heartbeat thread to stop, without waiting for it."""
        thread = self._thread
        if thread is not None:
            thread._stopping.set()

    @property
    def heartbeats(self) -> Optional["HeartbeatThread"]:
        """The running heartbeat thread, if any."""
        return self._thread

    def __repr__(self) -> str:
        return (
            f"Lease(lease_id={self.lease_id!r}, asset_num={self.asset_num!r}, "
            f"status={self.status!r}, ended={self.ended.is_set()})"
        )


class HeartbeatThread(threading.Thread):
    """The lease's heartbeat loop (see :meth:`Lease.start_heartbeats`). ``beats`` counts the
    heartbeats the server accepted, ``failures`` those that failed without ending the lease."""

    def __init__(
        self,
        lease: Lease,
        on_ended: Optional[Callable[[KeywardError], None]],
        on_error: Optional[Callable[[BaseException], None]],
        interval: Optional[float],
    ) -> None:
        super().__init__(name=f"keyward-heartbeat-{lease.lease_id}", daemon=True)
        self.lease = lease
        self.beats = 0
        self.failures = 0
        self._on_ended = on_ended
        self._on_error = on_error
        self._interval = interval
        self._stopping = threading.Event()

    def stop(self, timeout: Optional[float] = None) -> None:
        """Stops the loop and waits for it (not when called from the loop's own callbacks)."""
        self._stopping.set()
        if threading.current_thread() is not self and self.is_alive():
            self.join(timeout)

    def _wait(self) -> float:
        return self._interval if self._interval is not None else self.lease.heartbeat_interval_seconds

    def run(self) -> None:
        while not self._stopping.wait(self._wait()):
            try:
                self.lease._heartbeat(self._stopping)  # stop() cuts a retry's wait short
                self.beats += 1
            except KeywardError as error:
                if error.lease_ended:
                    log.info("lease %s ended: %s", self.lease.lease_id, error)
                    self._stopping.set()
                    self._notify(self._on_ended, error)
                    return
                self._failed(error)
            except KeywardConnectionError as error:
                self._failed(error)
            except Exception as error:  # an answer of an unexpected shape: keep heartbeating
                self._failed(error)

    def _failed(self, error: BaseException) -> None:
        self.failures += 1
        log.warning("heartbeat of lease %s failed: %s", self.lease.lease_id, error)
        self._notify(self._on_error, error)

    def _notify(self, callback: Optional[Callable[[Any], None]], error: BaseException) -> None:
        if callback is None:
            return
        try:
            callback(error)
        except Exception:
            log.exception("keyward heartbeat callback raised")
