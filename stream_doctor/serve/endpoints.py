"""The provider endpoints the server speaks, and each provider's own error shape.

A request's path names the wire it speaks (``/v1/messages`` is Anthropic's); the captures of that
wire answer it. ``/v1/chat/completions`` is the OpenAI-compatible base URL, which Mistral and many
others speak too. An error the server answers itself (a refused turn, an unknown path, a request
too large) is shaped as the provider's own, so the application's SDK raises its usual error type.
"""

from __future__ import annotations

import re
from typing import Any, Iterable

#: (pattern of the request path, the capture providers that answer it)
ROUTES: tuple[tuple[re.Pattern[str], frozenset[str]], ...] = (
    (re.compile(r"(?:/v1)?/messages"), frozenset({"anthropic"})),
    (re.compile(r"(?:/v1)?/chat/completions"), frozenset({"openai", "mistral"})),
    (re.compile(r"(?:/v1)?/responses"), frozenset({"openai-responses"})),
    (re.compile(r"/v1(?:beta|alpha)?/models/[^/]+:streamGenerateContent"), frozenset({"gemini"})),
    (re.compile(r"/model/[^/]+/(?:converse-stream|invoke-with-response-stream)"), frozenset({"bedrock"})),
    (re.compile(r"/v2/chat"), frozenset({"cohere"})),
    (re.compile(r"/api/chat"), frozenset({"ollama"})),
)


#: Every capture provider some endpoint answers.
SERVED = frozenset().union(*(providers for _, providers in ROUTES))


def providers_of(path: str) -> frozenset[str] | None:
    """The capture providers that answer ``path``; None: no provider endpoint."""
    for pattern, providers in ROUTES:
        if pattern.fullmatch(path):
            return providers
    return None


def shape_of(path: str) -> str:
    """Whose error shape an answer to ``path`` takes, guessed from the path when it is no endpoint."""
    from stream_doctor.record.writer import provider_of

    providers = providers_of(path)
    if providers is not None:
        return min(providers)
    named = provider_of(path)  # how the recorder names a path's provider
    if named is not None:
        return named
    for prefix, provider in (("/model/", "bedrock"), ("/api/", "ollama"), ("/v2/", "cohere"), ("/v1beta", "gemini")):
        if path.startswith(prefix):
            return provider
    return "openai"


#: Each HTTP status answered with an error, by the server itself (a refused turn, an unknown path or
#: method, a request too large) or by a fault variant (429, 529): (Anthropic's error type, OpenAI's type
#: and code, Google's status, AWS's error type).
#: https://docs.anthropic.com/en/api/errors, https://platform.openai.com/docs/guides/error-codes,
#: https://ai.google.dev/gemini-api/docs/troubleshooting, https://docs.aws.amazon.com/bedrock/latest/APIReference/CommonErrors.html
_KINDS: dict[int, tuple[str, tuple[str, str | None], str, str]] = {
    400: ("invalid_request_error", ("invalid_request_error", None), "INVALID_ARGUMENT", "ValidationException"),
    404: ("not_found_error", ("not_found_error", None), "NOT_FOUND", "ResourceNotFoundException"),
    405: ("invalid_request_error", ("invalid_request_error", None), "INVALID_ARGUMENT", "ValidationException"),
    413: ("request_too_large", ("invalid_request_error", None), "INVALID_ARGUMENT", "ValidationException"),
    429: ("rate_limit_error", ("requests", "rate_limit_exceeded"), "RESOURCE_EXHAUSTED", "ThrottlingException"),
    529: ("overloaded_error", ("server_error", None), "UNAVAILABLE", "ServiceUnavailableException"),
}


def error_body(provider: str, status: int, message: str) -> tuple[bytes, dict[str, str]]:
    """The body and headers of an error answered in ``provider``'s own shape (its API reference's error object)."""
    import orjson  # serving needs it; the command line's --help (the variants' sentences) does not

    anthropic, (openai, code), google, aws = _KINDS.get(status, _KINDS[400])
    value: Any
    headers = {"Content-Type": "application/json"}
    if provider == "anthropic":
        value = {"type": "error", "error": {"type": anthropic, "message": message}}
    elif provider == "gemini":
        value = {"error": {"code": status, "message": message, "status": google}}
    elif provider == "bedrock":
        value, headers["x-amzn-ErrorType"] = {"message": message}, aws
    elif provider == "ollama":  # https://github.com/ollama/ollama/blob/main/docs/api.md#errors
        value = {"error": message}
    elif provider == "cohere":  # https://docs.cohere.com/reference/errors
        value = {"message": message}
    elif provider == "mistral" and status == 429:  # La Plateforme's error object: type "rate_limited", code "1300"
        value = {"object": "error", "message": message, "type": "rate_limited", "param": None, "code": "1300"}
    else:
        value = {"error": {"message": message, "type": openai, "param": None, "code": code}}
    return orjson.dumps(value), headers


#: The key every dummy credential takes: the server ignores keys, some SDKs refuse to start without one.
DUMMY_KEY = "stream-doctor-serve"

#: Each provider's environment lines for its SDKs: the base-URL variable (``{url}``: the server's base URL)
#: and a dummy key where the SDK insists on one. ``serve`` prints the lines of its captures' providers;
#: ``serve --matrix`` sets every line for the application it runs. Where each SDK reads them: anthropic
#: (``ANTHROPIC_BASE_URL``), openai (``OPENAI_BASE_URL``, with ``/v1``), ollama-python (``OLLAMA_HOST``),
#: cohere (``CO_API_URL``, ``CO_API_KEY``: its client's ``base_url=os.getenv("CO_API_URL")``), google-genai
#: (``GOOGLE_GEMINI_BASE_URL``, ``GEMINI_API_KEY``: ``google/genai/_base_url.py`` ``get_base_url``), botocore's
#: service-specific endpoint (``AWS_ENDPOINT_URL_`` + the service id ``BEDROCK_RUNTIME``, and credentials and a
#: region it insists on).
ENVIRONMENT: dict[str, tuple[str, ...]] = {
    "anthropic": ("ANTHROPIC_BASE_URL={url}", f"ANTHROPIC_API_KEY={DUMMY_KEY}"),
    "openai": ("OPENAI_BASE_URL={url}/v1", f"OPENAI_API_KEY={DUMMY_KEY}"),
    "openai-responses": ("OPENAI_BASE_URL={url}/v1", f"OPENAI_API_KEY={DUMMY_KEY}"),
    "mistral": ("OPENAI_BASE_URL={url}/v1", f"OPENAI_API_KEY={DUMMY_KEY}"),
    "ollama": ("OLLAMA_HOST={url}",),
    "cohere": ("CO_API_URL={url}", f"CO_API_KEY={DUMMY_KEY}"),
    "gemini": ("GOOGLE_GEMINI_BASE_URL={url}", f"GEMINI_API_KEY={DUMMY_KEY}"),
    "bedrock": (
        "AWS_ENDPOINT_URL_BEDROCK_RUNTIME={url}",
        f"AWS_ACCESS_KEY_ID={DUMMY_KEY}",
        f"AWS_SECRET_ACCESS_KEY={DUMMY_KEY}",
        "AWS_REGION=us-east-1",
    ),
}


def environment_lines(url: str, providers: Iterable[str]) -> list[str]:
    """The ``NAME=value`` lines for ``providers``' SDKs, each once, in the table's order."""
    return list(dict.fromkeys(line.format(url=url) for p in providers for line in ENVIRONMENT.get(p, ())))
