"""The platform-neutral bot core, a house of floors (each imports only the floors below it; the contract is in
``pyproject.toml`` and ``docs/architecture.md`` draws it):

* :mod:`bot.ops` — settings, wiring, the deadline loop, health;
* :mod:`bot.app` — the commands adapters call, each table change one unit of work;
  :mod:`bot.delivery` — views to a platform, one lane per chat;
* :mod:`bot.table` — one table's game flow; :mod:`bot.lessons` — the ten lessons;
* :mod:`bot.history` — finished hands kept and told; :mod:`bot.leaderboard` — ratings;
* :mod:`bot.screens` — what people see; :mod:`bot.store` — Redis and its fakes;
* :mod:`bot.kernel` — the stored table, views, tokens, names, metrics;
* :mod:`bot.i18n` — languages and catalogues.

Each package's ``__init__`` lists what the others may use; its modules (``_name.py``) are its own.
"""
