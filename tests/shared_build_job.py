"""One shared build of a test run (tests/conftest.py `SharedBuilds`), in a process of its own:

    python -m tests.shared_build_job <content folder> <build folder> [--python]

builds into <build folder>/site with the tests' cache (.test-cache) and writes <build folder>/built.txt (the summary)
or failed.txt (every problem, or the error), which the waiting tests read."""

from __future__ import annotations

import sys
import traceback
from pathlib import Path


def main(argv: list[str]) -> int:
    content, folder = Path(argv[0]), Path(argv[1])
    try:
        from tests.conftest import BuildFailed, build

        result = build(content, folder / "site", python_runtime="--python" in argv)
    except BuildFailed as failed:
        (folder / "failed.txt").write_text("\n".join(str(p) for p in failed.problems.sorted()), encoding="utf-8")
        return 1
    except BaseException:  # noqa: BLE001 - whatever it was, the waiting tests show it
        (folder / "failed.txt").write_text(traceback.format_exc(), encoding="utf-8")
        return 1
    (folder / "built.txt").write_text(result.summary(), encoding="utf-8")
    print(result.summary())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
