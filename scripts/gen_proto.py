"""Generate the Python code of proto/ into sdk/ (messages, gRPC stubs, typed stubs).

    python scripts/gen_proto.py            # write sdk/belote/arena/v1/
    python scripts/gen_proto.py --check    # fail if the committed code differs

CI runs the check, so the generated code never drifts from proto/.
"""

from __future__ import annotations

import argparse
import filecmp
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROTO = ROOT / "proto"
OUT = ROOT / "sdk"
PACKAGE = Path("belote/arena/v1")


def generate(out: Path) -> None:
    files = sorted(str(p.relative_to(PROTO)) for p in (PROTO / PACKAGE).glob("*.proto"))
    cmd = [
        sys.executable, "-m", "grpc_tools.protoc", f"-I{PROTO}",
        f"--python_out={out}", f"--mypy_out={out}", f"--grpc_python_out={out}",
        f"--mypy_grpc_out={out}", *files,
    ]
    out.mkdir(parents=True, exist_ok=True)
    subprocess.run(cmd, check=True, capture_output=True)
    for d in (Path("belote"), Path("belote/arena"), PACKAGE):
        init = out / d / "__init__.py"
        if not init.exists():
            init.write_text('"""Generated from proto/ by scripts/gen_proto.py; do not edit."""\n')


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--check", action="store_true", help="compare instead of writing")
    args = ap.parse_args()
    if not args.check:
        shutil.rmtree(OUT / PACKAGE, ignore_errors=True)
        generate(OUT)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        generate(Path(tmp))
        fresh, committed = Path(tmp) / PACKAGE, OUT / PACKAGE
        names = sorted({p.name for p in fresh.iterdir()} | {p.name for p in committed.glob("*")}
                       - {"__pycache__"})
        stale = [n for n in names if not (fresh / n).exists() or not (committed / n).exists()
                 or not filecmp.cmp(fresh / n, committed / n, shallow=False)]
        if stale:
            print(f"generated code differs from proto/ in: {', '.join(stale)}; "
                  "run python scripts/gen_proto.py", file=sys.stderr)
            return 1
    print("generated code matches proto/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
