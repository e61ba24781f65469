"""Conversations: captures of several turns (HAR files, cassettes, envelopes with several requests).

``model`` holds the neutral view of a conversation, ``requests`` reads each provider's request
bodies into it, ``pairing`` matches calls and results across turns, ``schemas`` validates
arguments against the declared tools, and ``partial`` finds the first fragment at which a client
that runs a tool "as soon as the required fields are there" would have run it.
"""
