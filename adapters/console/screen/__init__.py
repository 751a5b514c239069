"""The full-screen terminal table (Textual): ``musbot play`` on a terminal; ``--plain`` keeps the line mode.

* :mod:`adapters.console.screen.table` — :class:`~adapters.console.screen.table.TableScreen`, the Textual app;
* :mod:`adapters.console.screen.feed` — the hand replayed move by move, as the player's view saw it grow;
* :mod:`adapters.console.screen.panels` — what the header, seats, cards, story and count panels say;
* :mod:`adapters.console.screen.controls` — the buttons, the bet amounts and the catch buttons;
* :mod:`adapters.console.screen.texts` — the screen's own words (keys, catch buttons, the amount box);
* :mod:`adapters.console.screen.entry` — when the full screen is used, and how it is started.
"""
