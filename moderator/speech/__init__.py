"""Speech without devices: the command grammar, and what the moderator says."""
