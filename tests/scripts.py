"""Where the installed console scripts are, whether or not the environment is activated."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path


def script(name: str) -> str | None:
    """The console script ``name`` beside this interpreter (the venv's ``bin``), else on PATH."""
    beside = Path(sys.executable).parent / name
    if beside.is_file():
        return str(beside)
    return shutil.which(name)
