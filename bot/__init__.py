"""The platform-neutral bot core: service, lobby, turns, machine seats, store, languages."""
