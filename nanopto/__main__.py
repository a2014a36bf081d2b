"""`python -m nanopto ...` runs the command line (see `nanopto.cli`)."""

import sys

from nanopto.cli import main

sys.exit(main())
