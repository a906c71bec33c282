"""One HTTP exchange with the standard library; network failures become KeywardConnectionError."""

from __future__ import annotations

import http.client
import socket
import urllib.error
import urllib.request
from typing import Dict, Mapping, NamedTuple, Optional

from .errors import KeywardConnectionError


class Answer(NamedTuple):
    status: int
    reason: str
    headers: Mapping[str, str]
    body: bytes


def exchange(
    method: str,
    url: str,
    headers: Dict[str, str],
    body: Optional[bytes],
    timeout: float,
    opener: urllib.request.OpenerDirector,
) -> Answer:
    """Sends one request and answers whatever status came back (299, 4xx and 5xx included)."""
    request = urllib.request.Request(url, data=body, headers=headers, method=method)
    try:
        with opener.open(request, timeout=timeout) as response:
            return Answer(
                response.status,
                response.reason or "",
                {k.lower(): v for k, v in response.headers.items()},
                response.read(),
            )
    except urllib.error.HTTPError as error:
        # An HTTP status urllib counts as an error (4xx, 5xx): still the server's answer.
        try:
            payload = error.read()
        except (OSError, http.client.HTTPException):
            payload = b""
        finally:
            error.close()
        answer_headers = {k.lower(): v for k, v in error.headers.items()} if error.headers else {}
        return Answer(error.code, str(error.reason or ""), answer_headers, payload)
    except urllib.error.URLError as error:
        raise KeywardConnectionError(f"{method} {url}: {error.reason}") from error
    except (socket.timeout, TimeoutError) as error:
        raise KeywardConnectionError(f"{method} {url}: timed out") from error
    except (OSError, http.client.HTTPException) as error:
        raise KeywardConnectionError(f"{method} {url}: {error}") from error
