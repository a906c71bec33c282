"""``python3 -m keyward.activate`` run as a program (subprocesses against temporary state
directories), with the request and the answers of sdks/conformance/activation.json at its clock."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import tempfile
import unittest
from typing import Any, Dict, List, Optional

import keyward
from keyward import fingerprint_hash, read_activation_request

from ._support import load_conformance

PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(keyward.__file__)))
VECTORS = load_conformance("activation.json")
NOW = str(VECTORS["now"])
ANSWERS = {case["name"]: case for case in VECTORS["answers"]}
REQUEST = ANSWERS["typed"]["request"]
FINGERPRINT = ANSWERS["typed"]["fingerprint"]
RETURN = VECTORS["returns"][0]


class Program(unittest.TestCase):
    def setUp(self) -> None:
        directory = tempfile.TemporaryDirectory()
        self.addCleanup(directory.cleanup)
        self.home = directory.name
        self.state = os.path.join(self.home, "state")
        self.jwks = os.path.join(self.home, "jwks.json")
        with open(self.jwks, "w", encoding="utf-8") as out:
            json.dump(VECTORS["jwks"], out)

    def run_program(self, *args: str, state: Optional[str] = "", stdin: str = "", env: Optional[Dict[str, str]] = None) -> subprocess.CompletedProcess:  # type: ignore[type-arg]
        environment = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": self.home,
            "PYTHONPATH": PACKAGE_ROOT,
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        environment.update(env or {})
        command: List[str] = [sys.executable, "-m", "keyward.activate", *args]
        if state is not None:
            command += ["--state", state or self.state]
        return subprocess.run(command, input=stdin, capture_output=True, text=True, env=environment, timeout=60)

    def file(self, name: str) -> str:
        return os.path.join(self.state, name)

    def pending_from_vectors(self) -> None:
        done = self.run_program("request", "--from", REQUEST, "--fingerprint", FINGERPRINT, "--now", NOW)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertEqual(done.stdout, REQUEST + "\n")

    def install(self, *answer: str, extra: List[str] = []) -> subprocess.CompletedProcess:  # type: ignore[type-arg]
        return self.run_program("install", *answer, "--jwks", self.jwks, "--now", NOW, *extra)

    def test_request_prints_the_code_and_writes_the_request_file(self) -> None:
        done = self.run_program(
            "request", "--app", "kw_app", "--asset", "8000000001", "--product", "demo-simulator", "--days", "30",
            "--fingerprint", "fp-this-machine", "--now", NOW,
        )
        self.assertEqual(done.returncode, 0, done.stderr)
        code = done.stdout.strip()
        self.assertEqual(done.stdout.count("\n"), 1)
        request = read_activation_request(code)
        self.assertEqual((request.app_key, request.asset_num, request.crm_product_id, request.days), ("kw_app", "8000000001", "demo-simulator", 30))
        self.assertEqual(request.created_at_s, VECTORS["now"])
        self.assertEqual(request.fingerprint_hash, fingerprint_hash("fp-this-machine"))
        with open(self.file("request.json"), encoding="utf-8") as source:
            document = json.load(source)
        self.assertEqual(document["keyward"], "activation-request")
        self.assertEqual(document["version"], 1)
        self.assertEqual(document["code"], code)
        self.assertEqual(stat.S_IMODE(os.stat(self.file("request.json")).st_mode), 0o600)
        self.assertIn("30 days of demo-simulator on lock 8000000001", done.stderr)

        # A second request replaces the first, with a new nonce.
        again = self.run_program("request", "--app", "kw_app", "--asset", "8000000001", "--product", "demo-simulator", "--days", "30", "--fingerprint", "fp-this-machine", "--now", NOW)
        self.assertNotEqual(again.stdout.strip(), code)
        self.assertIn("replaces the pending request", again.stderr)

    def test_the_state_directory_comes_from_the_environment_or_home(self) -> None:
        request = ["request", "--app", "kw_app", "--asset", "A-1", "--product", "P-1", "--days", "1"]
        elsewhere = os.path.join(self.home, "elsewhere")
        done = self.run_program(*request, state=None, env={"KEYWARD_ACTIVATION_DIR": elsewhere})
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertTrue(os.path.isfile(os.path.join(elsewhere, "request.json")))
        done = self.run_program(*request, state=None)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertTrue(os.path.isfile(os.path.join(self.home, ".config", "keyward-activation", "request.json")))

    def test_without_a_fingerprint_the_machine_has_one_of_its_own(self) -> None:
        done = self.run_program("request", "--app", "kw_app", "--asset", "A-1", "--product", "P-1", "--days", "1")
        self.assertEqual(done.returncode, 0, done.stderr)
        again = self.run_program("request", "--from", done.stdout.strip())
        self.assertEqual(again.returncode, 0, again.stderr)
        other = self.run_program("request", "--from", done.stdout.strip(), "--fingerprint", "fp-another-machine")
        self.assertEqual(other.returncode, 2)
        self.assertIn("another machine", other.stderr)
        self.assertFalse(os.path.exists(self.file("fingerprint")))

    def test_the_machine_fingerprint_has_the_shared_form(self) -> None:
        # mid1: or host1: and 64 hex digits, as the Java and Go programs derive it (sdks/activation-state.sh
        # checks the three agree on the machine CI runs on).
        from keyward.activate import _mac_address, machine_fingerprint

        prefix, _, digest = machine_fingerprint().partition(":")
        self.assertIn(prefix, ("mid1", "host1"))
        self.assertRegex(digest, r"^[0-9a-f]{64}$")
        self.assertEqual(machine_fingerprint(), machine_fingerprint())
        self.assertRegex(_mac_address(), r"^[0-9a-f]{12}$")

    def test_typed_answer_installed_shown_and_returned(self) -> None:
        self.pending_from_vectors()
        groups = ANSWERS["typed"]["answer"].split("-")
        done = self.install(*groups)  # typed as separate groups
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("activated\n", done.stdout)
        self.assertIn(f"lease: {ANSWERS['typed']['expect']['leaseId']}\n", done.stdout)
        self.assertIn("expires: 2027-02-14T08:00:00Z (offline-days), 30 days left\n", done.stdout)
        self.assertFalse(os.path.exists(self.file("request.json")), "the answered request stays pending")
        self.assertTrue(os.path.isfile(self.file("jwks.json")))
        self.assertEqual(stat.S_IMODE(os.stat(self.file("activation.json")).st_mode), 0o600)

        status = self.run_program("status", "--now", NOW)
        self.assertEqual(status.returncode, 0, status.stderr)
        self.assertIn("activation: active\n", status.stdout)
        self.assertIn("lease: 01938f2e-7c1a-7000-8000-00000000a001\n", status.stdout)
        self.assertIn("pending request: none\n", status.stdout)
        # A minute on, the 30 days are still 30 to the nearest day, not 29 whole ones.
        later = self.run_program("status", "--now", str(float(NOW) + 60))
        self.assertIn("expires: 2027-02-14T08:00:00Z (offline-days), 30 days left\n", later.stdout)

        expired = self.run_program("status", "--now", str(ANSWERS["typed"]["expect"]["expiresAt"]))
        self.assertEqual(expired.returncode, 2)
        self.assertIn("activation: refused: expired", expired.stdout)

        returned = self.run_program("return", "--now", NOW)
        self.assertEqual(returned.returncode, 0, returned.stderr)
        self.assertEqual(returned.stdout, RETURN["code"] + "\n")
        self.assertFalse(os.path.exists(self.file("activation.json")))
        status = self.run_program("status", "--now", NOW)
        self.assertEqual(status.returncode, 1)
        self.assertIn("activation: none\n", status.stdout)
        self.assertIn(f"return code: {RETURN['code']}\n", status.stdout)
        nothing = self.run_program("return")
        self.assertEqual(nothing.returncode, 1)
        self.assertIn("no activation is installed", nothing.stderr)

    def test_the_answer_file_or_the_jws_on_standard_input(self) -> None:
        answer_file = os.path.join(self.home, "answer.json")
        with open(answer_file, "w", encoding="utf-8") as out:
            out.write(ANSWERS["file"]["answer"])
        for args, stdin in (([answer_file], ""), (["-"], ANSWERS["jws"]["answer"] + "\n")):
            with self.subTest(args=args):
                self.pending_from_vectors()
                done = self.run_program("install", *args, "--jwks", self.jwks, "--now", NOW, stdin=stdin)
                self.assertEqual(done.returncode, 0, done.stderr)
                self.assertIn("lease: 01938f2e-7c1a-7000-8000-00000000a001\n", done.stdout)
                # The key set kept at install serves status.
                status = self.run_program("status", "--now", NOW)
                self.assertEqual(status.returncode, 0, status.stdout + status.stderr)

    def test_every_refused_answer_exits_2_with_its_reason_and_installs_nothing(self) -> None:
        refused = [case for case in VECTORS["answers"] if not case["expect"]["valid"]]
        self.assertTrue(refused)
        self.pending_from_vectors()
        for case in refused:
            with self.subTest(case=case["name"]):
                self.assertEqual(case["request"], REQUEST)
                done = self.install(case["answer"], extra=["--fingerprint", case["fingerprint"]])
                self.assertEqual(done.returncode, 2, done.stdout + done.stderr)
                self.assertTrue(done.stderr.startswith(f"refused: {case['expect']['reason']}: "), done.stderr)
                self.assertEqual(done.stdout, "")
                self.assertTrue(os.path.isfile(self.file("request.json")))
                self.assertFalse(os.path.exists(self.file("activation.json")))
        mistyped = self.install(ANSWERS["typed-mistyped"]["answer"])
        self.assertIn("group 5 is mistyped", mistyped.stderr)

    def test_what_cannot_be_done(self) -> None:
        nothing = self.install(ANSWERS["typed"]["answer"])
        self.assertEqual(nothing.returncode, 1)
        self.assertIn("no pending request", nothing.stderr)
        self.pending_from_vectors()
        no_keys = self.run_program("install", ANSWERS["typed"]["answer"], "--now", NOW)
        self.assertEqual(no_keys.returncode, 1)
        self.assertIn("--jwks", no_keys.stderr)

        groups = REQUEST.split("-")
        groups[1] = "Z" + groups[1][1:] if groups[1][0] != "Z" else "Y" + groups[1][1:]
        mistyped = self.run_program("request", "--from", "-".join(groups), "--fingerprint", FINGERPRINT)
        self.assertEqual(mistyped.returncode, 2)
        self.assertIn("group 2 is mistyped", mistyped.stderr)
        with open(self.file("request.json"), encoding="utf-8") as source:
            self.assertEqual(json.load(source)["code"], REQUEST, "a refused request replaced the pending one")

        for usage in (
            [],
            ["request", "--app", "kw_app", "--asset", "A-1", "--product", "P-1", "--days", "0"],
            ["request", "--app", "kw_app", "--product", "P-1", "--days", "3"],
            ["request", "--from", REQUEST, "--days", "3"],
            ["install"],
            ["frobnicate"],
        ):
            with self.subTest(usage=usage):
                done = self.run_program(*usage)
                self.assertEqual(done.returncode, 64, done.stderr)


if __name__ == "__main__":
    unittest.main()
