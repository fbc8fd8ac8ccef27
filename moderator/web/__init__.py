"""The LAN web panel of a live game: room pages, the host's remote, and the API (``moderator play --web``).

``bridge.py`` is the one way between the server's thread and the game's; ``view.py`` builds, on the game's
thread, the JSON the pages show; ``server.py`` is the aiohttp server; ``static/`` holds the bundled pages.
"""
