"""The command line as a user runs it: ``python -m arena.cli`` in a child process, from a test's loop."""

from __future__ import annotations

import asyncio
import sys


async def cli(*args: str) -> tuple[int, str, str]:
    """Run ``belote-arena ARGS``: its exit code, its output and its errors."""
    pipe = asyncio.subprocess.PIPE
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "arena.cli", *args,
                                                stdout=pipe, stderr=pipe)
    out, err = await proc.communicate()
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()
