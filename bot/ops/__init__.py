"""Running the bot: settings from the environment, the wiring of stores and service, the deadline loop,
health checks and the sweep that re-arms lost deadlines.

* :mod:`bot.ops._settings` — :class:`Settings` (pydantic-settings), refused in one line when wrong;
* :mod:`bot.ops._bootstrap` — :func:`build_app` (Redis or the embedded server → :class:`App`), the
  production :func:`redis_service` and the process's :class:`DeadlineLoop` (with the outbox of views for
  other platforms' processes);
* :mod:`bot.ops._data_dir` — where saved games live: the user's data folder, or an older ``./data``;
* :mod:`bot.ops._health` — :class:`HealthServer` (``/healthz``, ``/readyz``, ``/metrics``);
* :mod:`bot.ops._sweep` — :class:`DeadlineSweep`, :class:`OutageLog`;
* :mod:`bot.ops._in_time` — answering an update in time: :class:`AnswerWindow` (its store budget and its
  answer time, from its arrival) and :func:`answer_in_time`.

The top floor: it may import every other package of the bot core; none imports it.
"""

from bot.ops._bootstrap import App, DeadlineLoop, SettingRefused, StartupError, build_app, musbot_version
from bot.ops._data_dir import OLDER_DATA_DIR, default_data_dir, holds_save, older_save
from bot.ops._health import HealthServer
from bot.ops._in_time import AnswerWindow, UpdateTimes, answer_in_time
from bot.ops._settings import (
    Settings,
    SettingsInvalid,
    data_dir_problem,
    env_config,
    port_number,
    read_settings,
    seconds_between,
    url_with_scheme,
)

__all__ = [
    "OLDER_DATA_DIR",
    "AnswerWindow",
    "App",
    "DeadlineLoop",
    "HealthServer",
    "SettingRefused",
    "Settings",
    "SettingsInvalid",
    "StartupError",
    "UpdateTimes",
    "answer_in_time",
    "build_app",
    "data_dir_problem",
    "default_data_dir",
    "env_config",
    "holds_save",
    "musbot_version",
    "older_save",
    "port_number",
    "read_settings",
    "seconds_between",
    "url_with_scheme",
]
