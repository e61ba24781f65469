"""What marks a credential, and what stands in for one: shared by the capture readers
(``capture/http_frames.py``, which mask what the diagnosis never compares), ``engine/redaction.py`` (which
masks what every output shows) and the recorders (``record/``), without any importing another.
One definition: a field, header or text body is judged here and nowhere else."""

from __future__ import annotations

import re
from functools import cache, lru_cache

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
        "auth",
        "bearer",
        "credential",
        "credentials",
        "subscriptionkey",
        "secretkey",
        "sessionkey",
    }
)
#: A field whose name ends so is a credential too: ``aws_secret_access_key``, ``openai_api_key``,
#: ``db_password``, ``github_token`` would slip past the exact names. (Not a bare ``token`` or
#: ``key`` suffix: ``max_tokens``, ``next_page_token`` and ``cache_key`` are no secrets.)
_SECRET_SUFFIXES = (
    "apikey",
    "secretkey",
    "secretaccesskey",
    "privatekey",
    "password",
    "passwd",
    "secret",
    "accesstoken",
    "authtoken",
    "apitoken",
    "bearertoken",
    "securitytoken",
    "sessiontoken",
    "refreshtoken",
    "subscriptionkey",
    "functionskey",
    "credential",
    "credentials",
)


@lru_cache(maxsize=4096)  # the same few names, in every body and every event
def is_secret_field_name(name: str) -> bool:
    """A JSON field, form field or query parameter named like a credential."""
    folded = name.lower().replace("_", "").replace("-", "")
    return folded in SECRET_FIELDS or folded.endswith(_SECRET_SUFFIXES)


#: Header names whose values are credentials (compared lower-case).
SECRET_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "x-api-key",
        "api-key",
        "x-goog-api-key",
        "cookie",
        "set-cookie",
        "x-amz-security-token",
        "openai-organization",
        "openai-project",
        "anthropic-organization-id",
        "x-stainless-api-key",
        "ocp-apim-subscription-key",
        "x-functions-key",
    }
)


#: Any other header whose name says it holds a credential: ``x-session-token``, and any ``…-key``
#: (Azure's ``Ocp-Apim-Subscription-Key``, Functions' ``x-functions-key``, ``x-portkey-api-key``).
@cache
def _secret_header_name() -> re.Pattern[str]:
    """Compiled on first use, as ``_credential_value``: a capture without headers never asks."""
    return re.compile(
        r"(api[-_]?key|token|secret|password|passwd|credential|signature|session|auth|cookie|(?:^|[-_])key(?:$|[-_]))"
    )


#: ``…-key`` headers that name no credential.
_PLAIN_KEY_HEADERS = frozenset({"idempotency-key", "x-idempotency-key"})


@cache
def _credential_value() -> re.Pattern[str]:
    """A value shaped like a credential wherever it stands: an HTTP auth scheme and its token, a
    provider's key prefix (OpenAI/Anthropic ``sk-``, Google ``AIza``, AWS ``AKIA``/``ASIA``, GitHub
    ``ghp_`` …), a JWT. Compiled on first use: case-insensitive classes make it the costliest
    pattern of a replay's start-up, and a stream without requests or headers never asks."""
    return re.compile(
        r"(?:\b(?:Bearer|Basic|Digest|Token|SharedKey|SharedAccessSignature|AWS4-HMAC-SHA256|ApiKey)\s+[A-Za-z0-9._~+/=:,-]{6,}"
        r"|\bsk-[A-Za-z0-9_-]{12,}|\bAIza[0-9A-Za-z_-]{30,}|\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"
        r"|\bgh[pousr]_[A-Za-z0-9]{20,}|\bxox[abprs]-[A-Za-z0-9-]{10,}|\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*)",
        re.I,
    )


def credential_values(text: str) -> list[str]:
    """The credential-shaped values in ``text`` (a bearer token, an ``sk-…`` key, a JWT …), in order."""
    return [match.group() for match in _credential_value().finditer(text)]


def is_secret_header(name: str, value: str = "") -> bool:
    """A header whose name, or whose value, looks like a credential."""
    lowered = name.strip().lower()
    if lowered in SECRET_HEADERS:
        return True
    if lowered not in _PLAIN_KEY_HEADERS and _secret_header_name().search(lowered) is not None:
        return True
    return bool(value) and _credential_value().search(value) is not None


#: In text that is not JSON: ``"name": "value"`` (a JSON fragment, a cut body), ``name=value`` (a
#: form, a query, a ``.env`` line), ``name: value`` (YAML, a header block), and a multipart part's
#: ``name="field"`` followed by its value after a blank line.
@cache
def _text_fields() -> tuple[re.Pattern[str], ...]:
    """Compiled on first use: only text that is not JSON (a form, a cut body) is searched with them."""
    return (
        re.compile(
            r'"([A-Za-z][A-Za-z0-9_.-]{0,62})"\s*:\s*"([^"\\]*(?:\\.[^"\\]*)*)'
        ),  # unrolled: no stack per character
        re.compile(r"(?<![A-Za-z0-9_.-])([A-Za-z][A-Za-z0-9_.-]{0,62})\s*=\s*([^\s&;\"']+)"),
        re.compile(r"(?m)^[ \t]*([A-Za-z][A-Za-z0-9_.-]{0,62})[ \t]*:[ \t]*([^\s\"'][^\r\n]*)"),
        re.compile(r'(?i)name="([^"\r\n]{1,64})"[^\r\n]*\r?\n(?:[^\r\n]+\r?\n)*\r?\n([^\r\n]*)'),
    )


def redact_text(text: str) -> str:
    """Text that is not a JSON value (a form, multipart, invalid or cut JSON, anything) with the value
    of every credential-named field and every credential-shaped value replaced by ``[redacted]``."""
    spans: list[tuple[int, int]] = []
    for pattern in _text_fields():
        for match in pattern.finditer(text):
            if is_secret_field_name(match.group(1)) and match.group(2):
                spans.append(match.span(2))
    spans.extend(match.span() for match in _credential_value().finditer(text))
    if not spans:
        return text
    out = []
    at = 0
    for start, end in sorted(spans):
        if end <= at:
            continue
        out.append(text[at : max(at, start)])
        out.append(REDACTED)
        at = end
    out.append(text[at:])
    return "".join(out)
