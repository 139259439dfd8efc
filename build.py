#!/usr/bin/env python3
"""Build the course site: `python build.py` → site/. See `python build.py --help`."""

import sys

from builder.cli import main

if __name__ == "__main__":
    sys.exit(main())
