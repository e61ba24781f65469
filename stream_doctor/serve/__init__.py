"""``stream-doctor serve``: a capture played back to the user's own application, and what it did judged.

``wire`` holds the two values the parts share: a ``Recorded`` response (what the capture holds for one
turn) and a ``Plan`` (what the server writes for it, read by read). ``variants`` turns one into the other
under a named framing or fault; the server writes a plan and records what the application sends.

``load`` reads a capture's conversations (a ``Script`` each, grouped by ``record``'s rule); ``endpoints`` names
the provider paths and error shapes; ``matching`` says whether a request may be answered with its turn, and which
script answers a new conversation (``Choice``); ``server`` answers and records;
``judge`` gives the verdicts; ``running`` runs a server on a thread (the pytest fixture's); ``matrix`` runs the
application once per variant against such a server and reads what it did with each call from the verdicts, and
``matrix_table`` prints that table.
"""
