"""Inside the VM: run pySMART on each device, recording every smartctl argv it runs (stdout, stderr, rc)."""

import json
import subprocess
import sys
import warnings

from pySMART import Device
from pySMART.smartctl import Smartctl


class Rec(Smartctl):
    def __init__(self):
        super().__init__(smartctl_path="smartctl")
        self.calls = []

    def generic_call(self, params, pass_options=False):
        argv = ["smartctl", *(self.options if pass_options else []), *params]
        p = subprocess.run(argv, capture_output=True, text=True)
        self.calls.append(
            {"argv": argv, "returncode": p.returncode, "stdout": p.stdout, "stderr": p.stderr}
        )
        return p.stdout.splitlines(), p.returncode


out = {}
for dev in sys.argv[2:]:
    rec = Rec()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            d = Device(dev, smartctl=rec)
            summary = {
                "interface": d.smartctl_interface,
                "model": d.model,
                "serial": d.serial,
                "assessment": d.assessment,
            }
        except Exception as e:
            summary = {"error": repr(e)}
    j = subprocess.run(["smartctl", "-j", "-a", dev], capture_output=True, text=True)
    rec.calls.append(
        {
            "argv": ["smartctl", "-j", "-a", dev],
            "returncode": j.returncode,
            "stdout": j.stdout,
            "stderr": j.stderr,
        }
    )
    out[dev] = {"pysmart": summary, "calls": rec.calls}
with open(sys.argv[1], "w") as fh:
    json.dump(out, fh, indent=1)
