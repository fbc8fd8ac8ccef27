"""The pure game core: rules tables, decks, rooms and the plan of a game."""
