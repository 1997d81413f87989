"""``python -m arena.cli``: what the ``belote-arena`` script runs."""

import sys

from arena.cli import main

sys.exit(main())
