"""Telegram adapter (python-telegram-bot 22): commands and buttons in, rendered views out.

- :mod:`.ids` — Telegram users and chats as the bot core's keys;
- :mod:`.surfaces` — which message shows which slot of which table, and who can be written to privately;
- :mod:`.sender` — latest-state-wins delivery within Telegram's limits;
- :mod:`.handlers` — thin handlers: parse, call the service, answer the callback, hand views to the sender;
- :mod:`.app` — the Application: polling or webhook, command menus in six languages, the deadline loop.
"""
