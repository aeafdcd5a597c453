"""A sendmail-compatible program for the VM alert test (issue 27): ``sendmail -t -oi`` reads the
message on stdin, takes the recipients from its To/Cc headers (``-t``) and hands it to the SMTP
server on 127.0.0.1 (what msmtp or an MTA's sendmail does). The test writes a small executable
that calls :func:`main` with the port."""

from __future__ import annotations

import email
import smtplib
import sys
from email.utils import getaddresses, parseaddr


def main(port: int) -> int:
    args = sys.argv[1:]
    text = sys.stdin.read()
    msg = email.message_from_string(text)
    to = [a for _n, a in getaddresses(msg.get_all("To", []) + msg.get_all("Cc", [])) if a]
    if "-t" not in args:
        to += [a for a in args if not a.startswith("-")]
    sender = parseaddr(msg.get("From", "root"))[1] or "root"
    if not to:
        print("sendmail: no recipients", file=sys.stderr)
        return 1
    with smtplib.SMTP("127.0.0.1", port, timeout=20) as s:
        s.sendmail(sender, to, text.encode("utf-8"))
    return 0
