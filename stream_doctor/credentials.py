"""The names that mark a credential, and what stands in for one: shared by the capture readers
(``capture/exchange.py``, which mask what the diagnosis never compares) and ``redaction.py`` (which
masks what every output shows), without either importing the other."""

from __future__ import annotations

#: What replaces a credential a reader masks.
REDACTED = "[redacted]"

#: Request-body fields whose (text or number) values are credentials, compared without case, ``-`` or ``_``.
SECRET_FIELDS = frozenset(
    {
        "apikey",
        "xapikey",
        "key",
        "token",
        "accesstoken",
        "refreshtoken",
        "idtoken",
        "sessiontoken",
        "secret",
        "clientsecret",
        "password",
        "passwd",
        "authorization",
        "privatekey",
    }
)
