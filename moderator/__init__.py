"""A hands-free, offline voice moderator for Two Rooms and a Boom."""

__version__ = "0.1.0"
