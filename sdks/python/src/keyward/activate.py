"""``python3 -m keyward.activate``: offline activation of this machine from the command line
(docs/activation.md), with the same subcommands as the Go SDK's ``keyward-activate``.

::

    request --app KEY --asset NUM --product ID --days N [--fingerprint FP]
    request --from CODE|FILE [--fingerprint FP]
    install ANSWER... [--jwks FILE] [--fingerprint FP]
    status [--jwks FILE] [--fingerprint FP]
    return

Every subcommand takes ``--state DIR`` (default ``$KEYWARD_ACTIVATION_DIR``, else
``~/.config/keyward-activation``) and ``--now SECONDS`` (the clock, for tests).

The state directory holds ``request.json`` (the pending request: the file to carry to Keyward,
and what the answer is verified against), ``fingerprint`` (when one was given with
``--fingerprint``), ``jwks.json`` (the key set the answer was verified with), ``activation.json``
(the installed answer) and ``returned.json`` (the last return code).

Exit status: 0 done (``status``: an activation is installed and verifies now); 1 nothing to do
that with (no pending request, no activation, no key set, a file that cannot be read); 2 refused
(the answer or the request code does not verify or read: the reason is printed, and a mistyped
group is named); 64 a usage error.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import os
import socket
import struct
import sys
import time
from datetime import datetime, timezone
from typing import Any, Dict, NoReturn, Optional, Sequence, TextIO

from .activation import (
    MAX_ACTIVATION_DAYS,
    ActivatedLease,
    ActivationRequest,
    create_activation_request,
    fingerprint_hash,
    return_code_for,
    verify_activation,
)
from .errors import ActivationFormatError, LeaseError
from .offline import Jwks, _write_atomically

__all__ = ["main", "machine_fingerprint", "default_state_dir"]

EXIT_OK = 0
EXIT_NOTHING = 1
EXIT_REFUSED = 2
EXIT_USAGE = 64

REQUEST_FILE = "request.json"
FINGERPRINT_FILE = "fingerprint"
JWKS_FILE = "jwks.json"
ACTIVATION_FILE = "activation.json"
RETURNED_FILE = "returned.json"


class _Stop(Exception):
    """Ends the program with a status and a message for stderr."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: {message}\n")


def default_state_dir() -> str:
    """``$KEYWARD_ACTIVATION_DIR``, else ``~/.config/keyward-activation``."""
    return os.environ.get("KEYWARD_ACTIVATION_DIR") or os.path.join(
        os.path.expanduser("~"), ".config", "keyward-activation"
    )


def machine_fingerprint() -> str:
    """This machine's fingerprint when none is given: an application-specific hash of the
    systemd machine id (the id itself is never shown), else of the host name and a MAC address."""
    for path in ("/etc/machine-id", "/var/lib/dbus/machine-id"):
        try:
            with open(path, "r", encoding="ascii") as source:
                machine_id = source.read().strip()
        except (OSError, UnicodeDecodeError):
            continue
        if machine_id:
            digest = hmac.new(machine_id.encode("ascii"), b"keyward-activation", hashlib.sha256)
            return "mid1:" + digest.hexdigest()
    host = f"{socket.gethostname()}\n{_mac_address()}"
    return "host1:" + hashlib.sha256(host.encode("utf-8")).hexdigest()


def _mac_address() -> str:
    """The hardware address of the interface of lowest index that is not a loopback, has an IP
    address and a non-zero 6-byte hardware address: the one the Java and Go SDKs' programs choose,
    so a machine without a machine id has one fingerprint in every language (``uuid.getnode``
    chooses otherwise, and makes one up where it finds none). Twelve zeros without one."""
    try:
        interfaces = sorted(socket.if_nameindex())
        with open("/proc/net/if_inet6", "r", encoding="ascii") as source:
            ipv6 = {line.split()[-1] for line in source if line.strip()}
    except OSError:
        interfaces, ipv6 = [], set()
    for _, name in interfaces:
        sys_net = os.path.join("/sys/class/net", name)
        try:
            with open(os.path.join(sys_net, "flags"), "r", encoding="ascii") as source:
                flags = int(source.read().strip(), 16)
            with open(os.path.join(sys_net, "address"), "r", encoding="ascii") as source:
                address = bytes.fromhex(source.read().strip().replace(":", ""))
        except (OSError, ValueError):
            continue
        if flags & _IFF_LOOPBACK or len(address) != 6 or not any(address):
            continue
        if name in ipv6 or _has_ipv4(name):
            return address.hex()
    return "000000000000"


_IFF_LOOPBACK = 0x8
_SIOCGIFADDR = 0x8915


def _has_ipv4(name: str) -> bool:
    try:
        import fcntl  # POSIX only; elsewhere no interface is read and the zeros stand

        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            fcntl.ioctl(probe.fileno(), _SIOCGIFADDR, struct.pack("256s", name.encode("utf-8")[:15]))
        return True
    except (OSError, ImportError):
        return False


def _iso(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _at(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, tz=timezone.utc)


def _left(seconds: float) -> str:
    # To the nearest unit: a 7-day lease read a few seconds after it was issued has 7 days left,
    # not the 6 whole days a rounding down would say.
    if seconds >= 2 * 86400:
        return f"{int((seconds + 43200) // 86400)} days left"
    if seconds >= 2 * 3600:
        return f"{int((seconds + 1800) // 3600)} hours left"
    return f"{max(0, int((seconds + 30) // 60))} minutes left"


class _State:
    def __init__(self, directory: str) -> None:
        self.directory = directory

    def path(self, name: str) -> str:
        return os.path.join(self.directory, name)

    def exists(self, name: str) -> bool:
        return os.path.isfile(self.path(name))

    def ensure(self) -> None:
        os.makedirs(self.directory, mode=0o700, exist_ok=True)

    def write(self, name: str, text: str, mode: int = 0o600) -> None:
        self.ensure()
        _write_atomically(self.path(name), text, mode)

    def read_text(self, name: str) -> Optional[str]:
        try:
            with open(self.path(name), "r", encoding="utf-8") as source:
                return source.read()
        except FileNotFoundError:
            return None
        except OSError as error:
            raise _Stop(EXIT_NOTHING, f"cannot read {self.path(name)}: {error.strerror}") from None

    def read_json(self, name: str) -> Optional[Dict[str, Any]]:
        text = self.read_text(name)
        if text is None:
            return None
        try:
            document = json.loads(text)
        except ValueError:
            raise _Stop(EXIT_NOTHING, f"{self.path(name)} is not JSON") from None
        if not isinstance(document, dict):
            raise _Stop(EXIT_NOTHING, f"{self.path(name)} is not a JSON object")
        return document

    def remove(self, name: str) -> None:
        try:
            os.unlink(self.path(name))
        except FileNotFoundError:
            pass

    def pending(self) -> Optional[ActivationRequest]:
        text = self.read_text(REQUEST_FILE)
        if text is None:
            return None
        try:
            return ActivationRequest.read(text)
        except ActivationFormatError as error:
            raise _Stop(EXIT_NOTHING, f"{self.path(REQUEST_FILE)} does not read: {error}") from None

    def fingerprint(self, given: Optional[str]) -> str:
        """The fingerprint given, else the one the request was made with, else the machine's."""
        if given is not None:
            return given
        saved = self.read_text(FINGERPRINT_FILE)
        return saved.rstrip("\n") if saved is not None else machine_fingerprint()

    def jwks(self, given: Optional[str]) -> Jwks:
        path = given if given is not None else self.path(JWKS_FILE)
        if given is None and not os.path.isfile(path):
            raise _Stop(
                EXIT_NOTHING,
                "no key set: give --jwks FILE (the server's /.well-known/jwks.json, shipped with the software)",
            )
        try:
            return Jwks.load(path)
        except OSError as error:
            raise _Stop(EXIT_NOTHING, f"cannot read the key set {path}: {error.strerror}") from None
        except ValueError as error:
            raise _Stop(EXIT_NOTHING, f"{path} is not a JWKS: {error}") from None


def _now(args: argparse.Namespace) -> float:
    return float(args.now) if args.now is not None else time.time()


def _describe(request: ActivationRequest) -> str:
    return (
        f"{request.days} day{'s' if request.days != 1 else ''} of {request.crm_product_id} "
        f"on lock {request.asset_num} for app {request.app_key}, made {_iso(request.created_at)}"
    )


def _read_argument(text: str) -> str:
    """A code, or the text of the file it names (``-``: standard input)."""
    if text == "-":
        return sys.stdin.read()
    if os.path.isfile(text):
        try:
            with open(text, "r", encoding="utf-8") as source:
                return source.read()
        except (OSError, UnicodeDecodeError) as error:
            raise _Stop(EXIT_NOTHING, f"cannot read {text}: {error}") from None
    return text


def _request(args: argparse.Namespace, state: _State, out: TextIO, err: TextIO) -> int:
    if args.source is not None:
        if any(v is not None for v in (args.app, args.asset, args.product, args.days)):
            raise _Stop(EXIT_USAGE, "request: --from takes the request as it is; no --app, --asset, --product, --days")
        try:
            request = ActivationRequest.read(_read_argument(args.source))
        except ActivationFormatError as error:
            message = f"refused: the request does not read: {error}"
            if error.group is not None:
                message += f"\ngroup {error.group} is mistyped: type it again"
            raise _Stop(EXIT_REFUSED, message) from None
        fingerprint = args.fingerprint if args.fingerprint is not None else machine_fingerprint()
        if request.fingerprint_hash != fingerprint_hash(fingerprint):
            raise _Stop(
                EXIT_REFUSED,
                "refused: the request was made for another machine (give its --fingerprint)",
            )
    else:
        missing = [f"--{name}" for name in ("app", "asset", "product", "days") if getattr(args, name) is None]
        if missing:
            raise _Stop(EXIT_USAGE, f"request: {', '.join(missing)} required (or --from CODE)")
        fingerprint = args.fingerprint if args.fingerprint is not None else machine_fingerprint()
        try:
            request = create_activation_request(
                args.app, args.asset, args.product, args.days, fingerprint, now=_now(args)
            )
        except ActivationFormatError as error:
            raise _Stop(EXIT_USAGE, f"request: {error}") from None

    replaced = state.pending()
    state.write(REQUEST_FILE, request.to_json())
    if args.fingerprint is not None:
        state.write(FINGERPRINT_FILE, args.fingerprint + "\n")
    else:
        state.remove(FINGERPRINT_FILE)
    if replaced is not None and replaced != request:
        err.write(f"This replaces the pending request made {_iso(replaced.created_at)}: its answer will be refused.\n")
    err.write(
        f"Activation request: {_describe(request)}.\n"
        f"Type this code into Keyward's console (Activate an offline machine), or take "
        f"{state.path(REQUEST_FILE)}:\n"
    )
    out.write(request.code + "\n")
    return EXIT_OK


def _install(args: argparse.Namespace, state: _State, out: TextIO, err: TextIO) -> int:
    request = state.pending()
    if request is None:
        raise _Stop(EXIT_NOTHING, f"no pending request in {state.directory}: make one with `request` first")
    jwks = state.jwks(args.jwks)
    fingerprint = state.fingerprint(args.fingerprint)
    answer = _read_argument(args.answer[0]) if len(args.answer) == 1 else "".join(args.answer)
    try:
        lease = verify_activation(answer, request, jwks, fingerprint, now=_now(args))
    except LeaseError as refused:
        message = f"refused: {refused.reason}: {refused.detail}"
        if refused.group is not None:
            message += f"\ngroup {refused.group} is mistyped: type it again"
        raise _Stop(EXIT_REFUSED, message) from None

    if args.jwks is not None:
        state.write(JWKS_FILE, jwks.to_json() + "\n", 0o644)
    installed = {
        "keyward": "activation-installed",
        "version": 1,
        "request": request.code,
        "answer": answer.strip(),
        "leaseId": lease.lease_id,
        "issuedAt": int(lease.issued_at.timestamp()),
        "expiresAt": int(lease.expires_at.timestamp()),
        "expBound": lease.exp_bound,
        "installedAt": int(_now(args)),
    }
    state.write(ACTIVATION_FILE, json.dumps(installed, indent=2, ensure_ascii=False) + "\n")
    state.remove(REQUEST_FILE)
    state.remove(RETURNED_FILE)
    out.write("activated\n")
    _print_lease(out, lease, _now(args))
    return EXIT_OK


def _print_lease(out: TextIO, lease: ActivatedLease, now: float) -> None:
    out.write(
        f"lease: {lease.lease_id}\n"
        f"app: {lease.app_key}\n"
        f"lock: {lease.asset_num}\n"
        f"product: {lease.crm_product_id}\n"
        f"issued: {_iso(lease.issued_at)}\n"
        f"expires: {_iso(lease.expires_at)} ({lease.exp_bound}), {_left(lease.expires_at.timestamp() - now)}\n"
    )


def _installed(state: _State) -> Optional[Dict[str, Any]]:
    document = state.read_json(ACTIVATION_FILE)
    if document is None:
        return None
    if document.get("keyward") != "activation-installed" or not isinstance(document.get("answer"), str) or not isinstance(document.get("request"), str):
        raise _Stop(EXIT_NOTHING, f"{state.path(ACTIVATION_FILE)} is not an installed activation")
    return document


def _status(args: argparse.Namespace, state: _State, out: TextIO, err: TextIO) -> int:
    now = _now(args)
    status = EXIT_NOTHING
    out.write(f"state: {state.directory}\n")
    installed = _installed(state)
    if installed is None:
        out.write("activation: none\n")
    else:
        try:
            request = ActivationRequest.read(installed["request"])
            lease = verify_activation(
                installed["answer"], request, state.jwks(args.jwks), state.fingerprint(args.fingerprint), now=now
            )
        except (LeaseError, ActivationFormatError) as refused:
            reason = refused.reason if isinstance(refused, LeaseError) else "malformed"
            detail = refused.detail if isinstance(refused, LeaseError) else str(refused)
            out.write(f"activation: refused: {reason}: {detail}\n")
            out.write(f"lease: {installed.get('leaseId')}\n")
            status = EXIT_REFUSED
        else:
            out.write("activation: active\n")
            _print_lease(out, lease, now)
            status = EXIT_OK
    pending = state.pending()
    if pending is None:
        out.write("pending request: none\n")
    else:
        out.write(f"pending request: {_describe(pending)}\n{pending.code}\n")
    returned = state.read_json(RETURNED_FILE)
    if returned is not None:
        out.write(f"returned: lease {returned.get('leaseId')} at {_iso(_at(float(returned.get('returnedAt', 0))))}\n")
        out.write(f"return code: {returned.get('code')}\n")
    return status


def _return(args: argparse.Namespace, state: _State, out: TextIO, err: TextIO) -> int:
    installed = _installed(state)
    if installed is None:
        raise _Stop(EXIT_NOTHING, f"nothing to return: no activation is installed in {state.directory}")
    try:
        request = ActivationRequest.read(installed["request"])
        code = return_code_for(request, str(installed.get("leaseId")))
    except ActivationFormatError as error:
        raise _Stop(EXIT_NOTHING, f"{state.path(ACTIVATION_FILE)} does not read: {error}") from None
    returned = {"leaseId": installed["leaseId"], "code": code, "returnedAt": int(_now(args))}
    state.write(RETURNED_FILE, json.dumps(returned, indent=2) + "\n")
    state.remove(ACTIVATION_FILE)
    err.write(
        f"The activated lease {installed['leaseId']} is deleted from this machine.\n"
        "Enter this return code in Keyward's console to free its seat now (where the app allows early return;\n"
        "elsewhere the seat stays held until the lease expires):\n"
    )
    out.write(code + "\n")
    return EXIT_OK


def _parser() -> argparse.ArgumentParser:
    common = _Parser(add_help=False)
    common.add_argument("--state", metavar="DIR", help="the state directory (default $KEYWARD_ACTIVATION_DIR or ~/.config/keyward-activation)")
    common.add_argument("--now", metavar="SECONDS", type=float, help=argparse.SUPPRESS)
    machine = _Parser(add_help=False)
    machine.add_argument("--fingerprint", metavar="FP", help="this machine's fingerprint (default: from its machine id)")

    parser = _Parser(
        prog="python3 -m keyward.activate",
        description="Offline activation of this machine (docs/activation.md).",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    request = commands.add_parser("request", parents=[common, machine], help="make the request to take to Keyward: prints its code, writes request.json")
    request.add_argument("--app", metavar="KEY", help="the app's key")
    request.add_argument("--asset", metavar="NUM", help="the lock's asset number")
    request.add_argument("--product", metavar="ID", help="the product's crmProductId")
    request.add_argument("--days", metavar="N", type=int, help=f"days asked for, 1-{MAX_ACTIVATION_DAYS}")
    request.add_argument("--from", dest="source", metavar="CODE", help="keep an existing request (its code or file) as the pending one")

    install = commands.add_parser("install", parents=[common, machine], help="verify the answer (its typed code, answer file or JWS) and install it")
    install.add_argument("answer", nargs="+", metavar="ANSWER", help="the typed code (groups may be separate arguments), or an answer file (- for stdin)")
    install.add_argument("--jwks", metavar="FILE", help="the key set to verify with (kept for status); default: the one kept")

    status = commands.add_parser("status", parents=[common, machine], help="show the installed activation and the pending request")
    status.add_argument("--jwks", metavar="FILE", help="the key set to verify with; default: the one kept")

    commands.add_parser("return", parents=[common], help="delete the activated lease and print its return code")
    return parser


def main(argv: Optional[Sequence[str]] = None, out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    """Runs the program with ``argv`` (default ``sys.argv[1:]``) and answers its exit status."""
    parser = _parser()
    args = parser.parse_args(list(argv) if argv is not None else None)
    if getattr(args, "days", None) is not None and not 1 <= args.days <= MAX_ACTIVATION_DAYS:
        parser.error(f"--days must be 1 to {MAX_ACTIVATION_DAYS}")
    state = _State(args.state or default_state_dir())
    run = {"request": _request, "install": _install, "status": _status, "return": _return}[args.command]
    try:
        return run(args, state, out, err)
    except _Stop as stop:
        err.write(f"{stop}\n")
        return stop.status
    except OSError as error:
        err.write(f"{error}\n")
        return EXIT_NOTHING


if __name__ == "__main__":
    sys.exit(main())
