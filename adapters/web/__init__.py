"""The web table: a live Mus table with real cards in a browser or as a Telegram Mini App (issue 22).

* :mod:`adapters.web.settings` — ``WEB_PUBLIC_URL``, ``WEB_PORT``, ``WEB_SECRET``…;
* :mod:`adapters.web.auth` — who is who: signed, expiring links (HMAC with ``WEB_SECRET``) and Telegram's
  Mini App ``initData``, validated on the server;
* :mod:`adapters.web.frames` — what one page may see, as JSON, built from the engine's per-seat view (a
  spectator's from the public one), and the frames of a change, one per move;
* :mod:`adapters.web.feed` — the pages watching each table, fed each move in turn;
* :mod:`adapters.web.server` — the aiohttp application: the page, its files, Server-Sent Events, actions;
* :mod:`adapters.web.replay` — a finished match replayed hand by hand from the kept history, on the same page;
* :mod:`adapters.web.run` — ``musbot web`` and ``musbot play --web``.

Like the chats, the page shows only what the core's per-seat view holds, and acts only through the same
button tokens and checks (:meth:`bot.app.Service.press`).
"""
