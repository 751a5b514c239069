"""Telegram adapter (python-telegram-bot 22): commands and buttons in, rendered views out.

- :mod:`.ids` — Telegram users and chats as the bot core's keys;
- :mod:`.transport` — the Bot API calls behind the core's delivery (:mod:`bot.delivery._lanes`), Telegram's
  failures as typed delivery errors, views as messages (inline keyboards, HTML for Markdown);
- :mod:`.handlers` — thin handlers: parse, call the service, answer the callback, hand views to the sender;
- :mod:`.moves` — a group upgraded to a supergroup: its table follows it to the new chat id;
- :mod:`.app` — the Application: polling or webhook, command menus in six languages, the deadline loop.
"""
