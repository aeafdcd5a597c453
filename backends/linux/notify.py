"""Run an alert deliverer (the admin's alert program, sendmail) for ``raidman monitor``: an argv
list, never a shell; a fixed environment; stdin given or /dev/null; a time limit, after which
the program is killed; the program (and every directory on its way) checked before each run.
Returns (exit status or None when it could not run, was refused or timed out, one line saying
what went wrong). :func:`post_http` delivers to a webhook or an ntfy server the same way: one
POST, a time limit, no redirect followed, the status said."""

from __future__ import annotations

import subprocess
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence

from app.statefiles import StateFileError, check_trusted_path

MAX_OUTPUT = 4096


def run_notifier(
    argv: Sequence[str], *, env: Mapping[str, str], stdin: str | None, timeout: float
) -> tuple[int | None, str]:
    """The program is checked first, at each run (``statefiles.check_trusted_path``): root's
    or ours, not writable by others, in directories no other user can write, so no one but
    root can change what root runs between two alerts (issue 37: an ``--alert-program`` of
    another user, mode 0777, ran as root without a word)."""
    try:
        check_trusted_path(argv[0], "alert program", executable=True)
    except StateFileError as e:
        return None, str(e)
    try:
        p = subprocess.run(
            list(argv),
            shell=False,
            env=dict(env),
            input=(stdin or "").encode("utf-8", errors="replace") if stdin is not None else None,
            stdin=subprocess.DEVNULL if stdin is None else None,
            capture_output=True,
            timeout=timeout,
            close_fds=True,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return None, f"{argv[0]} did not finish within {timeout:g} s (killed)"
    except OSError as e:
        return None, f"{argv[0]}: {e.strerror or e}"
    err = p.stderr[-MAX_OUTPUT:].decode("utf-8", errors="replace").strip().splitlines()
    tail = err[-1] if err else ""
    if p.returncode != 0:
        return p.returncode, f"{argv[0]} exited with status {p.returncode}" + (
            f": {tail}" if tail else ""
        )
    return 0, ""


MAX_RESPONSE = 64 * 1024


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A webhook that answers with a redirect is not followed: the alert goes to the URL the
    admin configured, nowhere else (a redirect could carry it to another host or scheme)."""

    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


def post_http(
    url: str, body: bytes, headers: Mapping[str, str], timeout: float
) -> tuple[int | None, str]:
    """POST ``body`` to ``url`` (http or https, as app.routine.config checked it): a 2xx status
    is delivered (0); any other status, a redirect, a refused connection or the time limit is
    not (None, one line why). No proxy from the environment: the monitor's environment is
    systemd's, and an alert must not leave through a proxy nobody configured for it."""
    req = urllib.request.Request(url, data=body, method="POST", headers=dict(headers))
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), _NoRedirect())
    try:
        with opener.open(req, timeout=timeout) as resp:
            resp.read(MAX_RESPONSE)
            status = int(resp.status)
    except urllib.error.HTTPError as e:
        return None, f"{url}: HTTP {e.code} {e.reason}"
    except (urllib.error.URLError, OSError, ValueError) as e:
        why = getattr(e, "reason", None) or e
        return None, f"{url}: {why}"
    if not 200 <= status < 300:
        return None, f"{url}: HTTP {status}"
    return 0, ""
