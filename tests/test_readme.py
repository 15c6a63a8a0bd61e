"""The README's "Send your first invoice" block, run as it stands against a fresh server started as
README command 1 starts it: sign-in, `varco demo invoice`, upload, searches until Consegnata."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.live_server import live_server

ROOT = Path(__file__).resolve().parents[1]


def walkthrough() -> str:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("### Send your first invoice", 1)[1]
    return re.search(r"```sh\n(.*?)```", section, flags=re.DOTALL).group(1)


def test_the_readme_walkthrough_reaches_consegnata(tmp_path):
    script = walkthrough()
    assert ".venv/bin/varco demo invoice" in script  # what a user types after command 1
    with live_server(tmp_path, VARCO_IP_LIMITS_ENABLED="true") as server:
        work = tmp_path / "shell"
        work.mkdir()
        (work / ".venv" / "bin").mkdir(parents=True)
        # `.venv/bin/varco` of the project directory: this interpreter's varco, on the server's data.
        (work / ".venv" / "bin" / "varco").symlink_to(Path(sys.executable).parent / "varco")
        env = {**os.environ, "VARCO_URL": server.base, "VARCO_DATA_DIR": str(server.data_dir)}
        result = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", script],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert result.returncode == 0, result.stdout + result.stderr
    upload = result.stdout.splitlines()[0]
    assert '"errorCode":"0000"' in upload and "IT05555550028_" in upload, result.stdout
    assert result.stdout.strip().splitlines()[-1].endswith(": Consegnata"), result.stdout
