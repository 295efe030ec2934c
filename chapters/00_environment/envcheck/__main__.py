"""`python -m envcheck [--strict]`: the C program's view, then the Python diagnosis. --strict exits 1 on errors."""

import subprocess
import sys
from pathlib import Path

from envcheck.diagnose import diagnose, gather_facts, report

device_report = Path(__file__).resolve().parents[1] / "build" / "device_report"
if device_report.exists():
    print("---- build/device_report (C: CUDA runtime + driver API) ----")
    sys.stdout.flush()
    subprocess.run([str(device_report)], check=False)
else:
    print("(build/device_report is not built: `make build` compiles it)")

print("\n---- python -m envcheck (what torch sees, and the rules between the versions) ----")
facts = gather_facts()
findings = diagnose(facts)
print(report(facts, findings))
if "--strict" in sys.argv and any(f.level == "error" for f in findings):
    sys.exit(1)
