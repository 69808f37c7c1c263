"""Regenerate the frozen test suites shipped in envs/data (run after a deliberate generator change)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from envs.cross import SUITE_PATH as CROSS_SUITE_PATH
from envs.delivery import SUITE_PATH
from envs.instore import SUITE_PATH as INSTORE_SUITE_PATH
from envs.payments import SUITE_PATH as PAYMENTS_SUITE_PATH
from envs.suites import SUITES, build_suite
from envs.travel import SUITE_PATH as TRAVEL_SUITE_PATH
from envs.workspace import SUITE_PATH as WORKSPACE_SUITE_PATH

PATHS = {"delivery": SUITE_PATH, "instore": INSTORE_SUITE_PATH, "travel": TRAVEL_SUITE_PATH, "cross": CROSS_SUITE_PATH,
         "payments": PAYMENTS_SUITE_PATH, "workspace": WORKSPACE_SUITE_PATH}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("domains", nargs="*", default=sorted(SUITES), help=f"domains to rebuild ({', '.join(sorted(SUITES))})")
    args = parser.parse_args(argv)
    for d in args.domains:
        if d not in SUITES:
            parser.error(f"unknown domain {d!r}; choose from {', '.join(sorted(SUITES))}")
        tasks = build_suite(d, Path(PATHS[d]))
        print(f"{d}: {len(tasks)} tasks -> {PATHS[d]} ({Path(PATHS[d]).stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
