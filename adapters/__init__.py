"""Adapters to the outside world: Telegram, Discord, the terminal."""
