"""The moderator's voice: rendering speech to the disk cache, and speaking it in each room's queue."""
