"""A fake `nvidia-smi` for the tests: a script that answers the two queries hardware/detect.py asks (and only those,
spelled exactly so) with the CSV rows given, or fails as a driver-less nvidia-smi does."""

from __future__ import annotations

import stat
import sys
from pathlib import Path

SCRIPT = '''#!{python}
import sys
answers = {answers!r}
key = " ".join(sys.argv[1:])
if {fail!r}:
    print({fail!r})
    sys.exit(9)
if key not in answers:
    sys.stderr.write("fake nvidia-smi: unexpected query " + key + "\\n")
    sys.exit(2)
sys.stdout.write(answers[key])
'''


def install(bin_dir: Path, gpus: list[str], apps: list[str] = (), fail: str = "") -> Path:
    """nvidia-smi in `bin_dir`: `gpus` rows of index, uuid, name, memory.total; `apps` rows of gpu_uuid,
    used_memory; `fail`: print it and exit non-zero instead."""
    from hybridplan.hardware.detect import APPS, GPUS

    answers = {" ".join(GPUS): "".join(r + "\n" for r in gpus), " ".join(APPS): "".join(r + "\n" for r in apps)}
    path = bin_dir / "nvidia-smi"
    path.write_text(SCRIPT.format(python=sys.executable, answers=answers, fail=fail))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path
