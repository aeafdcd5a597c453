"""A small SMTP receiver for the VM alert test (issue 27): ``python -m tests.vm.smtp_sink PORT
DIR`` (or :func:`serve`) listens on 127.0.0.1:PORT and writes each message it accepts to DIR/<n>.eml. It speaks
the protocol (HELO/EHLO, MAIL, RCPT, DATA with dot-unstuffing, RSET, NOOP, QUIT): smtplib, msmtp
or a real MTA can deliver to it."""

from __future__ import annotations

import socketserver
import sys
from pathlib import Path

OUT = Path(".")


class Handler(socketserver.StreamRequestHandler):
    def reply(self, line: str) -> None:
        self.wfile.write((line + "\r\n").encode())
        self.wfile.flush()

    def handle(self) -> None:
        self.reply("220 sink ESMTP")
        rcpts: list[str] = []
        sender = ""
        while True:
            raw = self.rfile.readline(65536)
            if not raw:
                return
            cmd = raw.decode("utf-8", "replace").strip()
            verb = cmd.split(" ", 1)[0].upper()
            if verb in ("HELO", "EHLO"):
                self.reply("250 sink")
            elif verb == "MAIL":
                sender, rcpts = cmd[10:].strip(), []
                self.reply("250 OK")
            elif verb == "RCPT":
                rcpts.append(cmd[8:].strip())
                self.reply("250 OK")
            elif verb == "DATA":
                self.reply("354 go on")
                lines: list[str] = []
                while True:
                    ln = self.rfile.readline(65536)
                    if not ln or ln in (b".\r\n", b".\n"):
                        break
                    t = ln.decode("utf-8", "replace").rstrip("\r\n")
                    lines.append(t[1:] if t.startswith("..") else t)
                n = len(list(OUT.glob("*.eml")))
                head = f"X-Sink-From: {sender}\nX-Sink-To: {', '.join(rcpts)}\n"
                (OUT / f"{n}.tmp").write_text(head + "\n".join(lines) + "\n")
                (OUT / f"{n}.tmp").rename(OUT / f"{n}.eml")
                self.reply("250 OK queued")
            elif verb in ("RSET", "NOOP"):
                self.reply("250 OK")
            elif verb == "QUIT":
                self.reply("221 bye")
                return
            else:
                self.reply("502 not implemented")


def serve(port: int, out: str) -> None:
    """Accept mail on 127.0.0.1:``port`` into ``out`` until killed (the VM test runs this in
    the background in a fork of the guest agent: no interpreter start-up)."""
    global OUT
    OUT = Path(out)
    OUT.mkdir(parents=True, exist_ok=True)
    socketserver.TCPServer.allow_reuse_address = True
    with socketserver.TCPServer(("127.0.0.1", port), Handler) as srv:
        print(f"listening on 127.0.0.1:{port}", flush=True)
        srv.serve_forever()


def main() -> None:
    serve(int(sys.argv[1]), sys.argv[2])


if __name__ == "__main__":
    main()
