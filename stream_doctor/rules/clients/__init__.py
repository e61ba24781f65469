"""SD8xx: what a named client (``replay --client``) would hand the tool, against the correct call.

Each rule reads a ``clients.compare.ClientReview`` (one profile over one stream). A finding names
the client and its version; it is a warning for a real library (the deviation breaks that widely
used client) and info for a naive pattern (a hint about code of one's own).
"""
