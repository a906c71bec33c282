"""The names the README's Python examples leave to the program around them: sdks/python/ci.sh
type-checks each example (mypy --strict) with these declared, so an example that uses the SDK
wrongly, or a name of its own without saying so here, fails the build."""

from typing import Mapping

import keyward

APP_KEY: str
APP_SECRET: str
url: str
app_key: str
app_secret: str
fingerprint: str
session: keyward.Session
answer: str
raw_body: bytes
request_headers: Mapping[str, str]

def work_left() -> bool: ...
def do_some_work() -> None: ...
