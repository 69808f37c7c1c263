"""Regenerate the frozen test suites shipped in envs/tasks/data (run after a deliberate generator change)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from servicegym.envs.tasks.suites import SUITES, build_suite, suite_path

PATHS = {domain: suite_path(domain) for domain in SUITES}


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
