"""Room 25 (seeds/004): a second game on the shared engine parts (statechart, grammar, phrases, timers, journal)."""
