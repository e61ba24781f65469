"""The event names the Bedrock adapter recognises a frame by, light enough for detection to read without
importing the adapter (botocore ``data/bedrock-runtime/2023-09-30/service-2.json``: ``ConverseStreamOutput``
and ``ResponseStream``).
"""

from __future__ import annotations

from stream_doctor.providers.sniffing import Words

CONVERSE_EVENTS = frozenset(
    {"messageStart", "contentBlockStart", "contentBlockDelta", "contentBlockStop", "messageStop", "metadata"}
)

#: The exception members of ConverseStreamOutput / ResponseStream, sent inside a 200 response.
EXCEPTIONS = frozenset(
    {
        "internalServerException",
        "modelStreamErrorException",
        "validationException",
        "throttlingException",
        "serviceUnavailableException",
        "modelTimeoutException",
    }
)

#: ``chunk`` is InvokeModelWithResponseStream's event; the others ConverseStream's and the exceptions.
WORDS = Words(events=CONVERSE_EVENTS | {"chunk"} | EXCEPTIONS)
