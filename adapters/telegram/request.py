"""Bot API requests over aiohttp: python-telegram-bot's HTTP layer at a seventh of httpx's cost per call.

python-telegram-bot makes its calls through :class:`telegram.request.HTTPXRequest` by default. Measured on
this project's load (``bench/scale.py``: a callback answer per press, plus the edits), httpx and httpcore
were the largest single cost of a worker: about 1.4 ms of CPU per call on this machine against 0.2 ms for
the same POST through aiohttp (which the project already uses), and every press makes at least one call. So
the adapter's requests go through :class:`AiohttpRequest`, a :class:`telegram.request.BaseRequest` on one
``aiohttp.ClientSession`` per request object:

* the same parameters as PTB sends them (form fields, JSON-encoded values; a file makes it multipart), the
  same ``User-Agent``, and the same defaults: 5 s to connect, read and write, 1 s to wait for a free
  connection (aiohttp counts that wait and the connection's set-up together), 20 s to write a file;
* the same failures: a timeout is :class:`telegram.error.TimedOut`, any other client error
  :class:`telegram.error.NetworkError` (PTB turns the status codes into its own errors, as with httpx), its
  text without the URL (which holds the token);
* ``connection_pool_size`` connections at most to the Bot API (idle ones kept open and reused).
"""

from __future__ import annotations

from typing import IO

import aiohttp
from telegram.error import NetworkError, TimedOut
from telegram.request import BaseRequest, RequestData

#: PTB's HTTPXRequest defaults (seconds).
READ_TIMEOUT = 5.0
WRITE_TIMEOUT = 5.0
CONNECT_TIMEOUT = 5.0
POOL_TIMEOUT = 1.0
MEDIA_WRITE_TIMEOUT = 20.0


class AiohttpRequest(BaseRequest):
    """Bot API calls on an aiohttp session (opened by :meth:`initialize`, or by the first call)."""

    def __init__(self, connection_pool_size: int = 1, *, read_timeout: float | None = READ_TIMEOUT) -> None:
        """At most ``connection_pool_size`` connections at once; ``read_timeout`` unless a call says."""
        self.connection_pool_size = connection_pool_size
        self._read_timeout = read_timeout
        self._session: aiohttp.ClientSession | None = None

    @property
    def read_timeout(self) -> float | None:
        """The default read timeout (seconds)."""
        return self._read_timeout

    def _open(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            connector = aiohttp.TCPConnector(limit=self.connection_pool_size)
            self._session = aiohttp.ClientSession(
                connector=connector, headers={"User-Agent": self.USER_AGENT}
            )
        return self._session

    async def initialize(self) -> None:
        """Open the session."""
        self._open()

    async def shutdown(self) -> None:
        """Close the session and its connections."""
        if self._session is not None and not self._session.closed:
            await self._session.close()
        self._session = None

    async def do_request(
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        read_timeout: object = BaseRequest.DEFAULT_NONE,
        write_timeout: object = BaseRequest.DEFAULT_NONE,
        connect_timeout: object = BaseRequest.DEFAULT_NONE,
        pool_timeout: object = BaseRequest.DEFAULT_NONE,
    ) -> tuple[int, bytes]:
        """Make one call; its status and body."""
        files = request_data.multipart_data if request_data is not None else None
        fields = request_data.json_parameters if request_data is not None else {}
        body: aiohttp.FormData | dict[str, str] = _multipart(fields, files) if files else fields
        read = _given(read_timeout, self._read_timeout)
        write = _given(write_timeout, MEDIA_WRITE_TIMEOUT if files else WRITE_TIMEOUT)
        connect = _given(connect_timeout, CONNECT_TIMEOUT)
        pool = _given(pool_timeout, POOL_TIMEOUT)
        timeout = aiohttp.ClientTimeout(
            total=None if read is None or write is None else read + write + (connect or 0) + (pool or 0),
            connect=None if connect is None or pool is None else connect + pool,
            sock_connect=connect,
            sock_read=read,
        )
        try:
            async with self._open().request(method, url, data=body, timeout=timeout) as response:
                return response.status, await response.read()
        except TimeoutError as err:
            raise TimedOut from err
        except aiohttp.ClientConnectorError as err:  # (its own text repeats the host and port)
            raise NetworkError(f"cannot connect: {err.os_error}") from err
        except aiohttp.ClientError as err:
            # Never the URL: its path holds the token (``…/bot<token>/sendMessage``).
            text = str(err).replace(url, url.partition("/bot")[0])
            raise NetworkError(f"aiohttp.{err.__class__.__name__}: {text}") from err


def _given(value: object, default: float | None) -> float | None:
    """A timeout the call gave (seconds, or ``None``: no limit), or the default (PTB passes a default value
    object when the call gave none)."""
    if value is None or isinstance(value, int | float):
        return value
    return default


def _multipart(
    fields: dict[str, str], files: dict[str, tuple[str, bytes | IO[bytes], str]]
) -> aiohttp.FormData:
    """A multipart body: the form fields, then each file as PTB names it (part name, file name, type)."""
    form = aiohttp.FormData()
    for name, value in fields.items():
        form.add_field(name, value)
    for name, (filename, content, mimetype) in files.items():
        form.add_field(name, content, filename=filename, content_type=mimetype)
    return form
