"""Times verify_lease on the suite's valid lease, as bench/sdks.ts times every SDK (not a test):

    PYTHONPATH=sdks/python/src python3 sdks/python/tests/bench_verify.py [N]

After a warm-up it times N calls one by one and prints lines in the C benchmark's form:
``verify_lease, signature verified, wall clock: N calls, mean … us, median … us, p99 … us``."""

from __future__ import annotations

import json
import os
import sys
import time
from typing import List

from keyward import Jwks, verify_lease

SDK_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def summary(what: str, samples: List[float]) -> None:
    n = len(samples)
    samples.sort()
    median = samples[n // 2] if n % 2 else (samples[n // 2 - 1] + samples[n // 2]) / 2
    print(
        f"verify_lease, signature verified, {what}: {n} calls, mean {sum(samples) / n:.1f} us, "
        f"median {median:.1f} us, p99 {samples[int(n * 0.99)]:.1f} us"
    )


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    directory = os.environ.get("KEYWARD_CONFORMANCE_DIR") or os.path.join(os.path.dirname(SDK_DIR), "conformance")
    with open(os.path.join(directory, "leases.json"), encoding="utf-8") as source:
        vectors = json.load(source)
    jwks = Jwks.from_dict(vectors["jwks"])
    case = next(c for c in vectors["cases"] if c["name"] == "valid")
    args = (case["token"], jwks, case["fingerprint"], case["audience"], case["now"])
    for _ in range(1000):
        verify_lease(*args)
    wall: List[float] = []
    cpu: List[float] = []
    for _ in range(n):
        c0, w0 = time.thread_time_ns(), time.perf_counter_ns()
        verify_lease(*args)
        wall.append((time.perf_counter_ns() - w0) / 1000)
        cpu.append((time.thread_time_ns() - c0) / 1000)
    summary("wall clock", wall)
    summary("CPU time", cpu)


if __name__ == "__main__":
    main()
