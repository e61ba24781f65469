"""SD6xx pairing: tool calls and their results across the turns of a conversation."""
