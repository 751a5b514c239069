"""Discord's rate limits, as the fake Discord enforces them.

Discord documents its rate limits (docs/topics/rate-limits) as *per-route buckets*, counted per top-level
resource of the path (a channel, a guild, a webhook with its token), and a *global* limit of 50 requests a
second per bot that interaction endpoints (the callback, ``@original`` and the follow-ups of an interaction
token) are not bound to. It does not publish the numbers of each bucket: it sends them in the headers of
every answer, and clients such as discord.py pace themselves by those. The numbers here are the ones
Discord's headers report for the routes the bot uses:

* ``POST /channels/{channel_id}/messages``: 5 per 5 s per channel;
* ``PATCH /channels/{channel_id}/messages/{message_id}``: 5 per 5 s per channel (a bucket of its own);
* ``DELETE /channels/{channel_id}/messages/{message_id}``: 5 per 1 s per channel;
* an interaction token's webhook routes (follow-ups, ``@original``): 5 per 2 s per token;
* every request with the bot's token: 50 per second (``global_per_second``, ``global_window``), interaction
  endpoints apart;
  the callback (``POST /interactions/{id}/{token}/callback``) has no bucket: it is answered once anyway.

A bucket's window opens with its first request and lasts its ``window`` seconds (``X-RateLimit-Reset-After``
counts down to its end); a request over it is answered ``429`` with Discord's body (``message``,
``retry_after`` in float seconds, ``global``) and headers (``Retry-After`` in whole seconds,
``X-RateLimit-Limit/Remaining/Reset/Reset-After/Bucket``, ``X-RateLimit-Scope: user`` — or
``X-RateLimit-Global: true`` and ``X-RateLimit-Scope: global`` — and ``Via``: discord.py takes a 429 without
it for a Cloudflare ban). Every answer of a bucketed route reports the bucket's real remaining count, so that
a client that reads the headers never meets a 429. A refused request does not count.
"""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from .fake_discord_spec import DiscordError

#: The request paths' top-level resources: a bucket is counted per value of these (Discord's own rule).
TOP_LEVEL = ("channel_id", "guild_id", "webhook_id", "webhook_token")
_MESSAGES = "/channels/{channel_id}/messages"
_HOOK = "/webhooks/{webhook_id}/{webhook_token}"
#: Discord's message in a 429's body.
RATE_LIMITED = "You are being rate limited."


@dataclass(frozen=True)
class Rule:
    """One per-route limit: at most ``limit`` requests per ``window`` seconds for each top-level resource."""

    name: str
    limit: int
    window: float

    @property
    def bucket(self) -> str:
        """The ``X-RateLimit-Bucket`` hash (the same for every channel: Discord's excludes the resource)."""
        return hashlib.sha1(self.name.encode()).hexdigest()[:32]


@dataclass(frozen=True)
class DiscordLimits:
    """The limits (Discord's by default; tests may shorten them)."""

    create_message: Rule = Rule("create message", 5, 5.0)
    edit_message: Rule = Rule("edit message", 5, 5.0)
    delete_message: Rule = Rule("delete message", 5, 1.0)
    interaction_webhook: Rule = Rule("interaction webhook", 5, 2.0)
    global_per_second: int = 50
    global_window: float = 1.0
    """Seconds the global limit counts over (a test may stretch it to meet its pause more clearly)."""

    def rule(self, method: str, template: str) -> Rule | None:
        """The bucket of a route (``None``: only the global limit, if any)."""
        if template == _MESSAGES and method == "POST":
            return self.create_message
        if template == _MESSAGES + "/{message_id}":
            return {"PATCH": self.edit_message, "DELETE": self.delete_message}.get(method)
        if template == _HOOK or template.startswith(_HOOK + "/messages/"):
            return self.interaction_webhook
        return None


def is_interaction_endpoint(template: str) -> bool:
    """Whether a route answers an interaction (not bound to the bot's global limit)."""
    return template.startswith("/interactions/") or template == _HOOK or template.startswith(_HOOK + "/")


@dataclass
class _Window:
    """A bucket's current window: when it opened and how many requests it took."""

    opened: float = -math.inf
    used: int = 0

    def roll(self, window: float, now: float) -> None:
        """Open a new window if the last one is over."""
        if now >= self.opened + window:
            self.opened, self.used = now, 0


@dataclass
class RateLimits:
    """Counts the bot's requests and refuses those over a limit (see the module docstring)."""

    limits: DiscordLimits
    clock: Callable[[], float] = time.monotonic
    _buckets: dict[tuple[str, tuple[str, ...]], _Window] = field(default_factory=dict)
    _global: _Window = field(default_factory=_Window)

    def admit(
        self, method: str, template: str, params: Mapping[str, str], headers: Mapping[str, str]
    ) -> dict[str, str]:
        """The headers to answer a request with now (its route's bucket counted), or a
        :class:`DiscordError` 429 if it is over its bucket or the global limit (then it does not count).
        ``headers`` are the ones to keep for a route without a bucket."""
        now = self.clock()
        rule = self.limits.rule(method, template)
        bucket = None
        if rule is not None:
            major = tuple(params[k] for k in TOP_LEVEL if k in params)
            bucket = self._buckets.setdefault((rule.name, major), _Window())
            bucket.roll(rule.window, now)
            if bucket.used >= rule.limit:
                raise _route_429(rule, bucket.opened + rule.window - now)
        counted = not is_interaction_endpoint(template)
        if counted:
            self._global.roll(self.limits.global_window, now)
            if self._global.used >= self.limits.global_per_second:
                route = dict(headers)  # (a 429 carries the route's headers too)
                if rule is not None and bucket is not None:
                    route = _bucket_headers(rule, rule.limit - bucket.used, bucket.opened + rule.window - now)
                raise _global_429(self._global.opened + self.limits.global_window - now, route)
            self._global.used += 1
        if rule is None or bucket is None:
            return dict(headers)
        bucket.used += 1
        return _bucket_headers(rule, rule.limit - bucket.used, bucket.opened + rule.window - now)


def _ms_up(seconds: float) -> float:
    """Seconds rounded up to the millisecond (never down: a client waiting that long finds the window
    over), at least one."""
    return max(0.001, math.ceil(seconds * 1000) / 1000)


def _bucket_headers(rule: Rule, remaining: int, reset_after: float) -> dict[str, str]:
    return {
        "X-RateLimit-Limit": str(rule.limit),
        "X-RateLimit-Remaining": str(remaining),
        "X-RateLimit-Reset": f"{time.time() + reset_after:.3f}",
        "X-RateLimit-Reset-After": f"{_ms_up(reset_after):.3f}",
        "X-RateLimit-Bucket": rule.bucket,
    }


def _route_429(rule: Rule, retry_after: float) -> DiscordError:
    headers = {
        **_bucket_headers(rule, 0, retry_after),
        "Retry-After": str(max(1, math.ceil(retry_after))),
        "X-RateLimit-Scope": "user",
        "Via": "1.1 google",
    }
    return DiscordError(
        429,
        0,
        RATE_LIMITED,
        extra={"retry_after": _ms_up(retry_after), "global": False},
        headers=headers,
        detail=f"over {rule.name}: {rule.limit} per {rule.window:g} s",
    )


def _global_429(retry_after: float, route: Mapping[str, str]) -> DiscordError:
    headers = {
        **route,
        "Retry-After": str(max(1, math.ceil(retry_after))),
        "X-RateLimit-Global": "true",
        "X-RateLimit-Scope": "global",
        "Via": "1.1 google",
    }
    return DiscordError(
        429,
        0,
        RATE_LIMITED,
        extra={"retry_after": _ms_up(retry_after), "global": True},
        headers=headers,
        detail="over the global limit",
    )
