"""The terminal table: ``musbot play`` (you and three machines) and ``musbot play --auto`` (machines only)."""
