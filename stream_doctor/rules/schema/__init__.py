"""SD7xx schema: each call's arguments against the tool schema its request declared."""
