"""What holds for the whole test run.

Bytecode: some machines (this project's CI among them) set ``PYTHONDONTWRITEBYTECODE``. Then
every Python the tests start (nodes, commands as a user types them, build processes, benches:
hundreds of them) compiled the project's sources again, and pytest rewrote every test module's
asserts again in each worker: more than a minute of CPU in a run on two cores. The tests write
bytecode (``__pycache__``, which git ignores) whatever the environment says; the processes they
start inherit that.
"""

from __future__ import annotations

import os
import sys

sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
