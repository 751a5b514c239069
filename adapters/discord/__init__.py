"""The Discord adapter: slash commands, persistent buttons and ephemeral replies on discord.py 2.7.

Thin by design: interactions become the core's commands (:mod:`adapters.discord.interactions`), the core's
views become Discord messages (:mod:`adapters.discord.layout`, :mod:`adapters.discord.transport`), and
delivery itself — lanes, pacing, latest state wins — is the core's :class:`bot.delivery._lanes.Delivery`.
"""
