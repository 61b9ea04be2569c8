"""The e-mail digest: the events since an address's last digest, grouped by kind, as one
plain-text message sent over SMTP (FPT_SMTP_URL, from FPT_MAIL_FROM).

    smtp://HOST:PORT            plain SMTP (port 25 by default)
    smtp+starttls://HOST:PORT   STARTTLS before anything else (port 587 by default)
    smtps://HOST:PORT           TLS from the start (port 465 by default)

with USER:PASSWORD@ before the host when the server wants a login.
"""
from __future__ import annotations

import smtplib
import ssl
from collections.abc import Sequence
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from urllib.parse import unquote, urlsplit

from clikit.plural import counted

from ..settings import Settings
from ..store.followup import Event

PORTS = {"smtp": 25, "smtp+starttls": 587, "smtps": 465}
TITLES = {"new-match": "New copies", "copy-back": "Copies back after their removal",
          "removed": "Copies removed after a takedown", "crawl-failed": "Crawls that failed",
          "test": "Tests of this subscription"}
NOUNS = {"new-match": ("new copy", "new copies"), "copy-back": ("copy back", "copies back"),
         "removed": ("removal", "removals"), "crawl-failed": ("crawl failure", "crawl failures"),
         "test": ("test", "tests")}


class DigestError(Exception):
    """The digest could not be sent; one line with the cause and what to check."""


def subject(events: Sequence[Event]) -> str:
    counts: dict[str, int] = {}
    for e in events:
        counts[e.kind] = counts.get(e.kind, 0) + 1
    parts = [f"{n} {NOUNS[k][n != 1]}" for k, n in counts.items() if k in NOUNS]
    return "fptrack: " + (", ".join(parts) or "nothing new")


def body(events: Sequence[Event]) -> str:
    lines = [f"{len(events)} event{'s' if len(events) != 1 else ''} since the last digest.", ""]
    for kind, title in TITLES.items():
        group = [e for e in events if e.kind == kind]
        if not group:
            continue
        lines += [f"{title} ({len(group)})", "-" * (len(title) + len(str(len(group))) + 3)]
        for e in group:
            lines.append(f"{e.at:%Y-%m-%d %H:%M} UTC  {e.summary}")
        lines.append("")
    lines.append("-- \nfptrack; `fptrack notify list` shows the subscriptions, `fptrack notify remove` ends one.")
    return "\n".join(lines)


def message(sender: str, to: str, events: Sequence[Event]) -> EmailMessage:
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = to
    msg["Subject"] = subject(events)
    msg["Date"] = formatdate(usegmt=True)
    msg["Message-ID"] = make_msgid(domain=sender.rpartition("@")[2] or "localhost")
    msg.set_content(body(events))
    return msg


def send_digest(settings: Settings, to: str, events: Sequence[Event], *, timeout: float = 30.0) -> str:
    """Send one digest; returns what the server said. Raises DigestError with the cause."""
    url = urlsplit(settings.smtp_url)
    scheme = url.scheme
    if scheme not in PORTS:
        raise DigestError(f"FPT_SMTP_URL must start with smtp://, smtp+starttls:// or smtps://, not {scheme!r}")
    try:
        host, port = url.hostname or "localhost", url.port or PORTS[scheme]
    except ValueError:
        raise DigestError("FPT_SMTP_URL has a bad port; give smtp://HOST:PORT") from None
    msg = message(settings.mail_from, to, events)
    where = f"{host}:{port}"
    try:
        if scheme == "smtps":
            client = smtplib.SMTP_SSL(host, port, timeout=timeout, context=ssl.create_default_context())
        else:
            client = smtplib.SMTP(host, port, timeout=timeout)
        with client:
            if scheme == "smtp+starttls":
                client.starttls(context=ssl.create_default_context())
            if url.username:
                client.login(unquote(url.username), unquote(url.password or ""))
            refused = client.send_message(msg)
    except smtplib.SMTPAuthenticationError as e:
        raise DigestError(f"the SMTP server at {where} refused the login ({e.smtp_code}); check the user and "
                          "password in FPT_SMTP_URL") from e
    except smtplib.SMTPRecipientsRefused as e:
        codes = "; ".join(f"{r}: {c} {m.decode(errors='replace') if isinstance(m, bytes) else m}"
                          for r, (c, m) in e.recipients.items())
        raise DigestError(f"the SMTP server at {where} refused the address ({codes})") from e
    except smtplib.SMTPException as e:
        raise DigestError(f"the SMTP server at {where} failed: {str(e).splitlines()[0] if str(e) else type(e).__name__}"
                          ) from e
    except (OSError, ssl.SSLError) as e:
        raise DigestError(f"cannot reach the SMTP server at {where}: {e.strerror or e}; check FPT_SMTP_URL and "
                          "that the server runs") from e
    if refused:
        raise DigestError(f"the SMTP server at {where} refused {', '.join(refused)}")
    return f"sent to {to} through {where} ({counted(len(events), 'event')})"
