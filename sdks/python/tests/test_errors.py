"""The exceptions carry Keyward's answer and survive pickling (multiprocessing, log queues)."""

from __future__ import annotations

import pickle
import unittest

from keyward import KeywardAuthError, KeywardConnectionError, KeywardError, LeaseError


class Errors(unittest.TestCase):
    def test_a_refusal_says_what_keyward_said(self) -> None:
        error = KeywardError("90009", "revoked: the asset was disabled", "asset disabled", 299, "req-1")
        self.assertEqual(str(error), "90009: revoked: the asset was disabled")
        self.assertTrue(error.lease_ended)
        self.assertFalse(KeywardError("90005", "all seats in use").lease_ended)

    def test_network_failures_are_no_refusals(self) -> None:
        self.assertFalse(issubclass(KeywardConnectionError, KeywardError))
        self.assertTrue(issubclass(KeywardConnectionError, ConnectionError))
        self.assertTrue(issubclass(KeywardAuthError, KeywardError))

    def test_they_survive_pickling(self) -> None:
        for error in (
            KeywardError("90005", "all 1 seats are in use", "seats", 299, "req-1", {"x": 1}),
            KeywardAuthError("invalid_client", "client authentication failed", 401, "req-2", 3),
            LeaseError("fingerprint", "it was checked out for another machine"),
        ):
            with self.subTest(error=type(error).__name__):
                copy = pickle.loads(pickle.dumps(error))
                self.assertIs(type(copy), type(error))
                self.assertEqual(str(copy), str(error))
                self.assertEqual(vars(copy), vars(error))


if __name__ == "__main__":
    unittest.main()
