"""Keyward for Python programs: check out a license seat, heartbeat while running, consume
metered amounts, check in on exit, verify signed offline leases, activate machines that never
reach the server (offline activation), and verify Keyward's webhooks.

.. code-block:: python

    import keyward

    with keyward.Session(url, app_key, app_secret) as session:
        with session.check_out(fingerprint, asset_num="A-1", crm_product_id="P-1") as lease:
            lease.start_heartbeats(on_ended=lambda error: print("license withdrawn:", error))
            lease.consume(1)
            ...  # the program's work; leaving the block checks the seat in
"""

import logging as _logging

from ._version import API_VERSION, __version__
from .activation import (
    ActivatedLease,
    ActivationRequest,
    ReturnCode,
    activated_fingerprint,
    create_activation_request,
    decode_typed,
    encode_typed,
    fingerprint_hash,
    read_activation_request,
    read_return_code,
    return_code_for,
    verify_activation,
)
from .errors import (
    LEASE_ENDED_CODES,
    LEASE_REASONS,
    ActivationFormatError,
    KeywardAuthError,
    KeywardConnectionError,
    KeywardError,
    KeywardRedirectError,
    LeaseError,
    WebhookError,
)
from .offline import (
    EXP_BOUNDS,
    GRANT_TYP,
    GrantedLicense,
    Jwks,
    LeaseClaims,
    LeaseHolder,
    LeaseLimits,
    LeaseProduct,
    PoolGrant,
    load_lease,
    save_lease,
    verify_lease,
)
from .retry import NO_RETRY, RetryPolicy, new_idempotency_key
from .session import CheckIn, Consumption, Heartbeat, HeartbeatThread, Lease, Session, new_nonce
from .webhooks import WebhookEvent, verify_webhook

# A library logs, the program decides where it goes.
_logging.getLogger("keyward").addHandler(_logging.NullHandler())

__all__ = [
    "__version__",
    "API_VERSION",
    "Session",
    "Lease",
    "Heartbeat",
    "Consumption",
    "CheckIn",
    "HeartbeatThread",
    "new_nonce",
    "RetryPolicy",
    "NO_RETRY",
    "new_idempotency_key",
    "Jwks",
    "LeaseClaims",
    "LeaseHolder",
    "LeaseProduct",
    "LeaseLimits",
    "PoolGrant",
    "GrantedLicense",
    "GRANT_TYP",
    "EXP_BOUNDS",
    "verify_lease",
    "save_lease",
    "load_lease",
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
    "fingerprint_hash",
    "activated_fingerprint",
    "ActivationFormatError",
    "WebhookEvent",
    "verify_webhook",
    "KeywardError",
    "KeywardAuthError",
    "KeywardConnectionError",
    "KeywardRedirectError",
    "LeaseError",
    "LEASE_REASONS",
    "LEASE_ENDED_CODES",
    "WebhookError",
]
