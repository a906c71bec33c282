"""One HTTP exchange with the standard library, bounded by a deadline and never redirected.

Network failures become :class:`KeywardConnectionError`; a redirect (any 3xx) becomes
:class:`KeywardRedirectError` and is never followed.

The deadline bounds the exchange as a whole, not each socket operation: before every send and
every read of the socket (the status line, the headers, each chunk of the body) its timeout is set
to the time left, so a server that trickles a byte a second still ends the exchange at the
deadline. Connecting is bounded by the time left when it starts; resolving the host name is not
(the resolver takes no timeout).
"""

from __future__ import annotations

import http.client
import io
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import IO, Any, Dict, Mapping, NamedTuple, Optional, Type, Union

from .errors import KeywardConnectionError, KeywardRedirectError

__all__ = ["Answer", "exchange", "new_opener"]


class Answer(NamedTuple):
    status: int
    reason: str
    headers: Mapping[str, str]
    body: bytes


def _time_left(deadline: float) -> float:
    """Seconds until ``deadline`` (time.monotonic()); socket.timeout once it has passed."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise socket.timeout("timed out")
    return left


class _DeadlineReader(io.RawIOBase):
    """The socket's reading end: each read waits at most until the deadline."""

    def __init__(self, raw: socket.SocketIO, sock: socket.socket, deadline: float) -> None:
        super().__init__()
        self._raw = raw
        self._sock = sock
        self._deadline = deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> Optional[int]:
        self._sock.settimeout(_time_left(self._deadline))
        return self._raw.readinto(buffer)

    def fileno(self) -> int:
        return self._raw.fileno()

    def close(self) -> None:
        if not self.closed:
            self._raw.close()
        super().close()


class _DeadlineSocket:
    """A connected socket (plain or TLS) as http.client uses it, every send and read bounded by
    the deadline. What http.client does not send or read through goes to the socket itself."""

    def __init__(self, sock: socket.socket, deadline: float) -> None:
        self._sock = sock
        self._deadline = deadline

    def sendall(self, data: Any, *flags: int) -> None:
        self._sock.settimeout(_time_left(self._deadline))
        self._sock.sendall(data, *flags)

    def makefile(self, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if mode != "rb":
            return self._sock.makefile(mode, *args, **kwargs)  # type: ignore[call-overload]
        return io.BufferedReader(_DeadlineReader(self._sock.makefile("rb", buffering=0), self._sock, self._deadline))

    def close(self) -> None:
        self._sock.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sock, name)


class _Request(urllib.request.Request):
    """A request that carries its deadline (time.monotonic()) to the connection."""

    deadline: Optional[float] = None


def _connect_bounded(connection: http.client.HTTPConnection, deadline: float, connect: Any) -> None:
    connection.timeout = _time_left(deadline)
    connect()
    connection.sock = _DeadlineSocket(connection.sock, deadline)


class _BoundedHTTPConnection(http.client.HTTPConnection):
    deadline = 0.0

    def connect(self) -> None:
        _connect_bounded(self, self.deadline, super().connect)


class _BoundedHTTPSConnection(http.client.HTTPSConnection):
    deadline = 0.0

    def connect(self) -> None:  # the TCP connection and the TLS handshake, then the deadline
        _connect_bounded(self, self.deadline, super().connect)


def _bounded_class(http_class: Any, req: urllib.request.Request) -> Any:
    """What makes the connection for this request: the handler's kind of connection, bounded by
    the request's deadline."""
    if isinstance(req, _Request) and req.deadline is not None:
        deadline = req.deadline
    else:
        deadline = time.monotonic() + (req.timeout or 30.0)
    bounded: Union[Type[_BoundedHTTPConnection], Type[_BoundedHTTPSConnection]] = (
        _BoundedHTTPSConnection if issubclass(http_class, http.client.HTTPSConnection) else _BoundedHTTPConnection
    )

    def connection(host: str, **kwargs: Any) -> http.client.HTTPConnection:
        made = bounded(host, **kwargs)
        made.deadline = deadline
        return made

    return connection


class _BoundedHTTPHandler(urllib.request.HTTPHandler):
    def do_open(self, http_class: Any, req: urllib.request.Request, **http_conn_args: Any) -> http.client.HTTPResponse:
        return super().do_open(_bounded_class(http_class, req), req, **http_conn_args)


class _BoundedHTTPSHandler(urllib.request.HTTPSHandler):
    def do_open(self, http_class: Any, req: urllib.request.Request, **http_conn_args: Any) -> http.client.HTTPResponse:
        return super().do_open(_bounded_class(http_class, req), req, **http_conn_args)


class _RefuseRedirects(urllib.request.HTTPRedirectHandler):
    """Follows no redirect: the 3xx is the server's answer (urllib would turn a POST into a GET
    and send the Authorization header to wherever Location points)."""

    def redirect_request(
        self,
        req: urllib.request.Request,
        fp: IO[bytes],
        code: int,
        msg: str,
        headers: Any,
        newurl: str,
    ) -> None:
        return None


def new_opener() -> urllib.request.OpenerDirector:
    """urllib's opener (proxies from the environment, HTTPS with the default context) that bounds
    each exchange by its deadline and follows no redirect."""
    return urllib.request.build_opener(_RefuseRedirects, _BoundedHTTPHandler, _BoundedHTTPSHandler)


def exchange(
    method: str,
    url: str,
    headers: Dict[str, str],
    body: Optional[bytes],
    deadline: float,
    opener: urllib.request.OpenerDirector,
) -> Answer:
    """Sends one request and answers whatever status came back (299, 4xx and 5xx included), all
    of it before ``deadline`` (time.monotonic()), else :class:`KeywardConnectionError`. A 3xx
    raises :class:`KeywardRedirectError`, naming the status and where it pointed."""
    request = _Request(url, data=body, headers=headers, method=method)
    request.deadline = deadline
    try:
        with opener.open(request, timeout=_time_left(deadline)) as response:
            return Answer(
                response.status,
                response.reason or "",
                {k.lower(): v for k, v in response.headers.items()},
                response.read(),
            )
    except urllib.error.HTTPError as error:
        # An HTTP status urllib counts as an error (3xx not followed, 4xx, 5xx): still the server's answer.
        try:
            payload = error.read()
        except (OSError, http.client.HTTPException):
            payload = b""
        finally:
            error.close()
        answer_headers = {k.lower(): v for k, v in error.headers.items()} if error.headers else {}
        if 300 <= error.code < 400:
            raise _redirect(method, url, error.code, str(error.reason or ""), answer_headers) from None
        return Answer(error.code, str(error.reason or ""), answer_headers, payload)
    except urllib.error.URLError as error:
        raise KeywardConnectionError(f"{method} {url}: {error.reason}") from error
    except (socket.timeout, TimeoutError) as error:
        raise KeywardConnectionError(f"{method} {url}: timed out") from error
    except (OSError, http.client.HTTPException) as error:
        raise KeywardConnectionError(f"{method} {url}: {error}") from error


def _without_query(url: str) -> str:
    """The URL without its query (a call's g_nonce is of no use in a message)."""
    return urllib.parse.urlsplit(url)._replace(query="", fragment="").geturl()


def _redirect(method: str, url: str, status: int, reason: str, headers: Mapping[str, str]) -> KeywardRedirectError:
    location = headers.get("location")
    target = urllib.parse.urljoin(url, location) if location else None
    where = f"to {target}" if target else "without a Location"
    return KeywardRedirectError(
        status,
        f"{method} {_without_query(url)} answered HTTP {status} {reason}".rstrip()
        + f", a redirect {where}: not followed (a POST would be sent again as a GET and the"
        " credentials to another address); give the session the address that answers",
        target,
        reason,
        headers.get("x-request-id"),
    )
