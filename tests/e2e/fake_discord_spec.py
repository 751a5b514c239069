"""Discord's OpenAPI description of HTTP API v10 as request checks, and the limits the spec does not carry.

:class:`DiscordSpec` reads ``tests/data/discord-api-spec/openapi.json`` (Discord's own ``specs/openapi.json``,
copied unchanged) and answers, for one request, the questions :class:`FakeDiscord <.fake_discord.FakeDiscord>`
asks before handling it:

* which route template it is (``/channels/{channel_id}/messages``; a literal segment such as ``@me`` or
  ``@original`` wins over a parameter) — none: 404 ``{"code": 0, "message": "404: Not Found"}``; a route
  without that method: 405 ``405: Method Not Allowed``;
* whether the route needs ``Authorization: Bot <token>`` (the operation's ``security``; interaction
  callbacks and webhook-token routes accept no authorization at all);
* whether the path parameters, the query parameters (coerced from their strings first: booleans accept
  ``true``/``false``/``1``/``0``) and the body match their schemas: the body is validated with ``jsonschema``
  (draft 2020-12) against the operation's ``requestBody`` schema with every ``$ref`` resolved from the
  document. Unions (``oneOf``/``anyOf``) are narrowed the way Discord reports them: branches whose ``type``
  discriminator (or JSON type) does not fit are dropped, and the errors of the remaining branch are reported.

Snowflakes (``SnowflakeType``) may be integers as well as decimal strings: the spec allows strings only, but
Discord accepts both and discord.py sends integers in several places.

Failures come back as :class:`FieldError` lists, which :func:`form_error` turns into Discord's
``400 {"code": 50035, "message": "Invalid Form Body", "errors": {...}}`` with the errors nested by path
(``{"components": {"0": {"components": {"1": {"custom_id": {"_errors": [...]}}}}}}``).

Limits Discord enforces and the spec does not state (or states more loosely), checked explicitly by
:func:`check_message` and :func:`check_commands`:

* message ``content`` ≤ 2000 characters (the spec says 4000); embeds: ≤ 10, title ≤ 256, description ≤ 4096,
  ≤ 25 fields of name ≤ 256 / value ≤ 1024, footer ≤ 2048, author name ≤ 256, ≤ 6000 characters in all;
* flags a message may carry where it is sent (:data:`ALLOWED_FLAGS`: 64 EPHEMERAL only in interaction
  responses and followups);
* components without the ``IS_COMPONENTS_V2`` flag: only action rows at the top, ≤ 5 of them, each with 1–5
  buttons or exactly one select menu (``COMPONENT_LAYOUT_WIDTH_EXCEEDED``), no text inputs; buttons need a
  ``custom_id`` (styles 1–4), a ``url`` (style 5) or a ``sku_id`` (style 6) and nothing of the others, a label
  or an emoji, a label ≤ 80 characters; ``custom_id`` 1–100 characters and unique in the message
  (``COMPONENT_CUSTOM_ID_DUPLICATED``); select menus 1–25 options with unique values, labels and values 1–100,
  ``min_values`` ≤ ``max_values`` ≤ the number of options;
* application commands: ≤ 100 chat-input commands, unique names per type, names of chat-input commands
  and of options ``^[-_\\p{L}\\p{N}]{1,32}$`` and lowercase, descriptions 1–100 (empty for user and
  message commands), localization keys among the spec's locales (``AvailableLocalesEnum``), ≤ 25 options
  or subcommands per level, subcommands not mixed with other options, groups only at the top and holding
  only subcommands, required options before optional ones, unique option names, ≤ 25 choices, no choices
  with autocomplete, and ≤ 8000 characters of names, descriptions and choices per command.

Error codes and messages are Discord's where known (``BASE_TYPE_REQUIRED``, ``BASE_TYPE_MAX_LENGTH`` …);
the few checks whose exact wording Discord does not document use descriptive codes in the same style.
"""

from __future__ import annotations

import functools
import json
import re
import unicodedata
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

__all__ = [
    "ALLOWED_FLAGS",
    "EPHEMERAL",
    "IS_COMPONENTS_V2",
    "LOADING",
    "SPEC_PATH",
    "DiscordError",
    "DiscordSpec",
    "FieldError",
    "Operation",
    "RouteMatch",
    "check_commands",
    "check_message",
    "form_error",
    "is_empty_message",
]

JSON = dict[str, Any]
PathKey = str | int

SPEC_PATH = Path(__file__).resolve().parents[1] / "data" / "discord-api-spec" / "openapi.json"
_SPEC_URI = "urn:discord-api-spec"

#: Message flags.
SUPPRESS_EMBEDS = 1 << 2
EPHEMERAL = 1 << 6
LOADING = 1 << 7
SUPPRESS_NOTIFICATIONS = 1 << 12
IS_COMPONENTS_V2 = 1 << 15

#: The flags a bot may set on a message, by where it is sent.
ALLOWED_FLAGS: dict[str, int] = {
    "create": SUPPRESS_EMBEDS | SUPPRESS_NOTIFICATIONS | IS_COMPONENTS_V2,
    "edit": SUPPRESS_EMBEDS | IS_COMPONENTS_V2,
    "interaction": SUPPRESS_EMBEDS | EPHEMERAL | SUPPRESS_NOTIFICATIONS | IS_COMPONENTS_V2,
    "update": SUPPRESS_EMBEDS | IS_COMPONENTS_V2,
    "followup": SUPPRESS_EMBEDS | EPHEMERAL | SUPPRESS_NOTIFICATIONS | IS_COMPONENTS_V2,
    "webhook_edit": SUPPRESS_EMBEDS | IS_COMPONENTS_V2,
}

MAX_CONTENT = 2000
_INTERACTIVE = frozenset({2, 3, 5, 6, 7, 8})  # button and the select menus
_SELECTS = frozenset({3, 5, 6, 7, 8})
_BUTTON_STYLES_WITH_ID = frozenset({1, 2, 3, 4})


# --------------------------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FieldError:
    """One field error: where (path in the body), Discord's code and message."""

    path: tuple[PathKey, ...]
    code: str
    message: str

    def __str__(self) -> str:
        where = ".".join(str(p) for p in self.path) or "<body>"
        return f"{where}: {self.code} {self.message}"


class DiscordError(Exception):
    """An error answer of the Discord API: HTTP status, Discord's JSON code and message, field errors."""

    def __init__(
        self,
        status: int,
        code: int,
        message: str,
        *,
        errors: Sequence[FieldError] = (),
        detail: str | None = None,
        extra: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(f"{status} {code} {message}")
        self.status = status
        self.code = code
        self.message = message
        self.errors = list(errors)
        self.detail = detail or ("; ".join(str(e) for e in self.errors) or None)
        self.extra = dict(extra or {})
        self.headers = dict(headers or {})
        self.injected = False

    def payload(self) -> JSON:
        """The JSON body Discord answers with."""
        body: JSON = {"message": self.message, "code": self.code}
        if self.errors:
            body["errors"] = nest_errors(self.errors)
        body.update(self.extra)
        return body


def nest_errors(errors: Iterable[FieldError]) -> JSON:
    """Discord's ``errors`` object: field errors nested by path, each leaf ``{"_errors": [...]}``."""
    root: JSON = {}
    for error in errors:
        node = root
        for key in error.path:
            node = node.setdefault(str(key), {})
        entry = {"code": error.code, "message": error.message}
        bucket = node.setdefault("_errors", [])
        if entry not in bucket:
            bucket.append(entry)
    return root


def form_error(errors: Sequence[FieldError], *, detail: str | None = None) -> DiscordError:
    """400 ``Invalid Form Body`` (code 50035) with the given field errors."""
    return DiscordError(400, 50035, "Invalid Form Body", errors=errors, detail=detail)


def _dedupe(errors: Iterable[FieldError]) -> list[FieldError]:
    seen: set[tuple[tuple[PathKey, ...], str]] = set()
    out: list[FieldError] = []
    for e in errors:
        key = (tuple(str(p) for p in e.path), e.code)
        if key not in seen:
            seen.add(key)
            out.append(e)
    return out


def _max_len(path: tuple[PathKey, ...], n: int) -> FieldError:
    return FieldError(path, "BASE_TYPE_MAX_LENGTH", f"Must be {n} or fewer in length.")


def _bad_len(path: tuple[PathKey, ...], lo: int, hi: int) -> FieldError:
    return FieldError(path, "BASE_TYPE_BAD_LENGTH", f"Must be between {lo} and {hi} in length.")


def _required(path: tuple[PathKey, ...]) -> FieldError:
    return FieldError(path, "BASE_TYPE_REQUIRED", "This field is required")


# --------------------------------------------------------------------------------------------------------
# The spec
# --------------------------------------------------------------------------------------------------------


def _pointer(*parts: str) -> str:
    return f"{_SPEC_URI}#/" + "/".join(p.replace("~", "~0").replace("/", "~1") for p in parts)


@dataclass(frozen=True)
class Operation:
    """One method of one route of the spec."""

    template: str
    method: str
    operation_id: str
    path_params: dict[str, JSON]
    query_params: dict[str, tuple[JSON, bool]]  # name -> (schema, required)
    body_types: tuple[str, ...]  # content types of the requestBody
    body_required: bool
    bot_token: str  # "required" | "optional" | "none"
    response_codes: tuple[str, ...]


@dataclass(frozen=True)
class RouteMatch:
    """A request path matched to a route template, with its path parameters."""

    template: str
    params: dict[str, str]
    operation: Operation


@dataclass
class _Route:
    template: str
    regex: re.Pattern[str]
    literals: int
    operations: dict[str, Operation] = field(default_factory=dict)


class DiscordSpec:
    """Discord's OpenAPI document with route matching and request validation (see the module docstring)."""

    def __init__(self, document: Mapping[str, Any]) -> None:
        document = _lenient_snowflakes(document)
        self.document = document
        self.version = str(document.get("info", {}).get("version", ""))
        resource: Resource[Any] = DRAFT202012.create_resource(dict(document))
        self._registry: Registry[Any] = Registry().with_resource(_SPEC_URI, resource)
        self._validators: dict[str, Draft202012Validator] = {}
        self._routes: list[_Route] = []
        for template, item in document["paths"].items():
            self._routes.append(self._route(template, item))
        self._routes.sort(key=lambda r: -r.literals)
        schemas = document["components"]["schemas"]
        self.locales: frozenset[str] = frozenset(
            c["const"] for c in schemas.get("AvailableLocalesEnum", {}).get("oneOf", []) if "const" in c
        )

    @classmethod
    @functools.cache
    def load(cls, path: Path = SPEC_PATH) -> DiscordSpec:
        """The spec from ``tests/data/discord-api-spec/openapi.json`` (parsed once per process)."""
        return cls(json.loads(path.read_text(encoding="utf-8")))

    def _route(self, template: str, item: Mapping[str, Any]) -> _Route:
        segments = template.strip("/").split("/")
        parts: list[str] = []
        literals = 0
        for seg in segments:
            m = re.fullmatch(r"\{(\w+)\}", seg)
            if m:
                parts.append(f"(?P<{m.group(1)}>[^/]+)")
            else:
                parts.append(re.escape(seg))
                literals += 1
        route = _Route(template, re.compile("/" + "/".join(parts)), literals)
        shared = item.get("parameters", [])
        for method, op in item.items():
            if method == "parameters":
                continue
            params = [*shared, *op.get("parameters", [])]
            path_params = {p["name"]: p["schema"] for p in params if p["in"] == "path"}
            query_params = {
                p["name"]: (p["schema"], bool(p.get("required"))) for p in params if p["in"] == "query"
            }
            body = op.get("requestBody") or {}
            security = op.get("security", [])
            names = {name for req in security for name in req}
            if not security or names == set():
                bot = "none"
            elif any(req == {} for req in security):
                bot = "optional"
            elif "BotToken" in names:
                bot = "required"
            else:
                bot = "none"
            route.operations[method.upper()] = Operation(
                template=template,
                method=method.upper(),
                operation_id=op.get("operationId", ""),
                path_params=path_params,
                query_params=query_params,
                body_types=tuple(body.get("content", {})),
                body_required=bool(body.get("required")),
                bot_token=bot,
                response_codes=tuple(op.get("responses", {})),
            )
        return route

    # -- matching --------------------------------------------------------------------------------------

    def match(self, method: str, path: str) -> RouteMatch:
        """The route and operation of ``method path`` (path relative to ``/api/v10``).

        Raises :class:`DiscordError` 404 when no route matches, 405 when the route lacks the method.
        """
        found: _Route | None = None
        params: dict[str, str] = {}
        for route in self._routes:
            m = route.regex.fullmatch(path)
            if m:
                found, params = route, m.groupdict()
                break
        if found is None:
            raise DiscordError(404, 0, "404: Not Found", detail=f"no route {path} in the spec")
        operation = found.operations.get(method.upper())
        if operation is None:
            raise DiscordError(
                405, 0, "405: Method Not Allowed", detail=f"{found.template} has no {method.upper()}"
            )
        return RouteMatch(found.template, params, operation)

    def operation(self, method: str, template: str) -> Operation:
        """The operation of a route template (KeyError if the spec has none)."""
        for route in self._routes:
            if route.template == template:
                return route.operations[method.upper()]
        raise KeyError(template)

    def templates(self) -> list[tuple[str, str]]:
        """Every (method, template) of the spec."""
        return [(m, r.template) for r in self._routes for m in r.operations]

    # -- validation ------------------------------------------------------------------------------------

    def _validator(self, ref: str) -> Draft202012Validator:
        validator = self._validators.get(ref)
        if validator is None:
            validator = Draft202012Validator({"$ref": ref}, registry=self._registry)
            self._validators[ref] = validator
        return validator

    def _schema_validator(self, schema: JSON) -> Draft202012Validator:
        key = json.dumps(schema, sort_keys=True)
        validator = self._validators.get(key)
        if validator is None:
            validator = Draft202012Validator(_absolutize(schema), registry=self._registry)
            self._validators[key] = validator
        return validator

    def validate(
        self,
        value: Any,
        *,
        ref: str | None = None,
        schema: JSON | None = None,
        prefix: Sequence[PathKey] = (),
    ) -> list[FieldError]:
        """Validate ``value`` against a schema (``ref``: a ``#/components/schemas/X``-style pointer)."""
        if ref is not None:
            validator = self._validator(ref if ref.startswith(_SPEC_URI) else _SPEC_URI + ref)
        elif schema is not None:
            validator = self._schema_validator(schema)
        else:
            raise ValueError("validate() needs ref or schema")
        errors: list[FieldError] = []
        for error in validator.iter_errors(value):
            for leaf in _leaves(error):
                errors.extend(_translate(leaf, tuple(prefix)))
        return _dedupe(errors)

    def body_ref(self, op: Operation, content_type: str = "application/json") -> str | None:
        """The pointer of the request body schema for a content type (``None``: the route takes no body)."""
        if not op.body_types:
            return None
        ctype = content_type if content_type in op.body_types else op.body_types[0]
        if content_type == "multipart/form-data" and "application/json" in op.body_types:
            ctype = "application/json"  # ``payload_json`` carries the JSON body
        return _pointer("paths", op.template, op.method.lower(), "requestBody", "content", ctype, "schema")

    def validate_body(
        self, op: Operation, body: Any, content_type: str = "application/json"
    ) -> list[FieldError]:
        """Field errors of a request body against the operation's ``requestBody`` schema."""
        ref = self.body_ref(op, content_type)
        if ref is None:
            return []
        if body is None:
            body = {}
        return self.validate(body, ref=ref)

    def validate_path_params(self, op: Operation, params: Mapping[str, str]) -> list[FieldError]:
        """Field errors of the path parameters (snowflakes must be decimal numbers)."""
        errors: list[FieldError] = []
        for name, value in params.items():
            schema = op.path_params.get(name)
            if schema is None:
                continue
            if _is_snowflake_schema(schema) and not re.fullmatch(r"0|[1-9][0-9]*", value):
                errors.append(FieldError((name,), "NUMBER_TYPE_COERCE", f'Value "{value}" is not snowflake.'))
                continue
            errors.extend(self.validate(value, schema=schema, prefix=(name,)))
        return errors

    def validate_query(self, op: Operation, query: Mapping[str, str]) -> tuple[JSON, list[FieldError]]:
        """The declared query parameters coerced to their types, and their field errors.

        Parameters the operation does not declare are ignored, as Discord does.
        """
        values: JSON = {}
        errors: list[FieldError] = []
        for name, (schema, required) in op.query_params.items():
            if name not in query:
                if required:
                    errors.append(_required((name,)))
                continue
            raw = query[name]
            value = self._coerce_query(raw, schema)
            if value is _INVALID:
                errors.append(_coerce_error(name, raw, schema))
                continue
            found = self.validate(value, schema=schema, prefix=(name,))
            errors.extend(found)
            values[name] = value
        return values, errors

    def _coerce_query(self, raw: str, schema: JSON) -> Any:
        resolved = self._resolve(schema)
        types = resolved.get("type")
        kinds = set(types) if isinstance(types, list) else {types}
        if "boolean" in kinds:
            lowered = raw.lower()
            if lowered in ("true", "1"):
                return True
            if lowered in ("false", "0"):
                return False
            return _INVALID
        if "integer" in kinds:
            return int(raw) if re.fullmatch(r"[+-]?\d+", raw) else _INVALID
        if "number" in kinds:
            try:
                return float(raw)
            except ValueError:
                return _INVALID
        return raw

    def _resolve(self, schema: JSON) -> JSON:
        seen = 0
        while "$ref" in schema and seen < 10:
            ref = schema["$ref"]
            node: Any = self.document
            for part in ref.lstrip("#/").split("/"):
                node = node[part.replace("~1", "/").replace("~0", "~")]
            schema = node
            seen += 1
        return schema

    # -- responses (for tests of the fake itself) ------------------------------------------------------

    def response_errors(self, method: str, template: str, status: int, body: Any) -> list[str]:
        """Where an answer of the fake differs from the response schema the spec documents (empty: fits)."""
        op = self.operation(method, template)
        key = str(status)
        if key not in op.response_codes:
            key = f"{key[0]}XX"
        if key not in op.response_codes:
            return [f"{method} {template}: the spec documents no {status} answer ({op.response_codes})"]
        raw = self.document["paths"][template][method.lower()]["responses"][key]
        if "$ref" in raw:
            parts = raw["$ref"].lstrip("#/").split("/")
            content = self.document
            for part in parts:
                content = content[part]
            schema_ptr = _pointer(*parts, "content", "application/json", "schema")
            has_body = "content" in content
        else:
            schema_ptr = _pointer("paths", template, method.lower(), "responses", key, "content")
            schema_ptr += "/application~1json/schema"
            has_body = "content" in raw
        if not has_body:
            return [] if body in (None, b"", "") else [f"{method} {template} {status}: the spec has no body"]
        return [str(e) for e in self.validate(body, ref=schema_ptr)]


def _lenient_snowflakes(document: Mapping[str, Any]) -> Mapping[str, Any]:
    """The document with ``SnowflakeType`` also accepting non-negative integers.

    The spec types snowflakes as decimal strings only; Discord accepts integers too, and discord.py sends
    them (``recipient_id``, ``message_reference.message_id``, ``allowed_mentions.users``, the ``id`` of a new
    attachment is its index).
    """
    schemas = dict(document["components"]["schemas"])
    strict = schemas["SnowflakeType"]
    schemas["SnowflakeType"] = {
        "anyOf": [strict, {"type": "integer", "minimum": 0}],
        "format": strict.get("format", "snowflake"),
    }
    return {**document, "components": {**document["components"], "schemas": schemas}}


class _Invalid:
    pass


_INVALID: Any = _Invalid()


def _is_snowflake_schema(schema: Mapping[str, Any]) -> bool:
    return schema.get("$ref") == "#/components/schemas/SnowflakeType"


def _coerce_error(name: str, raw: str, schema: JSON) -> FieldError:
    if schema.get("type") == "boolean":
        return FieldError((name,), "BASE_TYPE_BOOLEAN", "Must be either true or false.")
    return FieldError((name,), "NUMBER_TYPE_COERCE", f'Value "{raw}" is not int.')


def _absolutize(schema: Any) -> Any:
    """Rewrite ``#/...`` references of a schema taken out of the document to the document's URI."""
    if isinstance(schema, dict):
        return {
            k: (_SPEC_URI + v if k == "$ref" and isinstance(v, str) and v.startswith("#") else _absolutize(v))
            for k, v in schema.items()
        }
    if isinstance(schema, list):
        return [_absolutize(v) for v in schema]
    return schema


# --------------------------------------------------------------------------------------------------------
# jsonschema errors -> Discord's field errors
# --------------------------------------------------------------------------------------------------------


def _is_branch_mismatch(error: ValidationError) -> bool:
    """The branch of a union does not apply: wrong JSON type, or a wrong ``type`` discriminator."""
    rel = list(error.relative_path)
    if not rel and error.validator == "type":
        return True
    return rel == ["type"] and error.validator in ("enum", "const")


def _leaves(error: ValidationError) -> list[ValidationError]:
    if error.validator not in ("oneOf", "anyOf") or not error.context:
        return [error]
    branches: dict[Any, list[ValidationError]] = {}
    for sub in error.context:
        branches.setdefault(sub.relative_schema_path[0], []).append(sub)
    viable = [errs for errs in branches.values() if not any(_is_branch_mismatch(e) for e in errs)]
    if not viable:
        return [error]
    best = min(viable, key=len)
    return [leaf for sub in best for leaf in _leaves(sub)]


def _union_choices(error: ValidationError) -> list[Any]:
    choices: list[Any] = []
    for sub in error.context or ():
        if list(sub.relative_path) == ["type"] and sub.validator == "enum":
            choices.extend(sub.validator_value)
    return choices


def _translate(error: ValidationError, prefix: tuple[PathKey, ...]) -> list[FieldError]:
    path = prefix + tuple(error.absolute_path)
    v, value, instance = error.validator, error.validator_value, error.instance
    if v == "required":
        present = instance if isinstance(instance, dict) else {}
        return [_required((*path, name)) for name in value if name not in present]
    if v == "maxLength" or (v == "maxItems") or v == "maxProperties":
        return [_max_len(path, value)]
    if v in ("minLength", "minItems"):
        return [FieldError(path, "BASE_TYPE_MIN_LENGTH", f"Must be {value} or more in length.")]
    if v == "pattern" and "0|[1-9]" in str(value):
        return [FieldError(path, "NUMBER_TYPE_COERCE", f'Value "{instance}" is not snowflake.')]
    if v == "pattern":
        return [
            FieldError(path, "STRING_TYPE_REGEX", f'String value did not match validation regex "{value}".')
        ]
    if v in ("enum", "const"):
        choices = value if v == "enum" else [value]
        shown = ", ".join(json.dumps(c) for c in choices)
        return [FieldError(path, "BASE_TYPE_CHOICES", f"Value must be one of {{{shown}}}.")]
    if v == "minimum":
        return [FieldError(path, "NUMBER_TYPE_MIN", f"int value should be greater than or equal to {value}.")]
    if v == "maximum":
        return [FieldError(path, "NUMBER_TYPE_MAX", f"int value should be less than or equal to {value}.")]
    if v == "uniqueItems":
        return [FieldError(path, "LIST_ITEM_VALUE_DUPLICATE", "List item values must be unique.")]
    if v == "type":
        return [_type_error(path, value, instance)]
    if v in ("oneOf", "anyOf"):
        choices = _union_choices(error)
        if choices and isinstance(instance, dict):
            shown = ", ".join(str(c) for c in sorted(set(choices)))
            return [
                FieldError(
                    (*path, "type"), "UNION_TYPE_CHOICES", f'Value of field "type" must be one of ({shown}).'
                )
            ]
        return [FieldError(path, "BASE_TYPE_INVALID", f"Invalid value: {error.message[:200]}")]
    return [FieldError(path, "BASE_TYPE_INVALID", error.message[:200])]


def _type_error(path: tuple[PathKey, ...], expected: Any, instance: Any) -> FieldError:
    kinds = set(expected) if isinstance(expected, list) else {expected}
    kinds.discard("null")
    shown = json.dumps(instance)[:100]
    if kinds == {"string"}:
        return FieldError(path, "BASE_TYPE_STRING", f"Could not interpret {shown} as string.")
    if kinds == {"integer"}:
        return FieldError(path, "NUMBER_TYPE_COERCE", f"Value {shown} is not int.")
    if kinds == {"number"}:
        return FieldError(path, "NUMBER_TYPE_COERCE", f"Value {shown} is not a valid number.")
    if kinds == {"boolean"}:
        return FieldError(path, "BASE_TYPE_BOOLEAN", "Must be either true or false.")
    if kinds == {"array"}:
        return FieldError(path, "LIST_TYPE_CONVERT", "Only iterables may be used in a ListType")
    if kinds == {"object"}:
        return FieldError(path, "DICT_TYPE_CONVERT", "Only dictionaries may be used in a DictType")
    return FieldError(path, "BASE_TYPE_INVALID", f"Invalid type: expected {sorted(kinds)}, got {shown}")


# --------------------------------------------------------------------------------------------------------
# Discord's limits for messages
# --------------------------------------------------------------------------------------------------------


def is_empty_message(message: Mapping[str, Any]) -> bool:
    """No content, embeds, components, attachments, stickers or poll: Discord's 50006 "empty message"."""
    return not any(
        message.get(k) for k in ("content", "embeds", "components", "attachments", "sticker_ids", "poll")
    )


def check_message(body: Mapping[str, Any], where: str, *, prefix: Sequence[PathKey] = ()) -> list[FieldError]:
    """Discord's message limits (see the module docstring) for a body sent ``where`` (ALLOWED_FLAGS key)."""
    pre = tuple(prefix)
    errors: list[FieldError] = []
    content = body.get("content")
    if isinstance(content, str) and len(content) > MAX_CONTENT:
        errors.append(_max_len((*pre, "content"), MAX_CONTENT))
    flags = body.get("flags")
    if isinstance(flags, int) and flags & ~ALLOWED_FLAGS[where]:
        bad = flags & ~ALLOWED_FLAGS[where]
        errors.append(
            FieldError(
                (*pre, "flags"), "MESSAGE_FLAGS_INVALID", f"Flags {bad} cannot be set on this message."
            )
        )
    embeds = body.get("embeds")
    if isinstance(embeds, list):
        errors.extend(_check_embeds(embeds, (*pre, "embeds")))
    components = body.get("components")
    if isinstance(components, list):
        v2 = isinstance(flags, int) and bool(flags & IS_COMPONENTS_V2)
        errors.extend(check_components(components, v2=v2, prefix=(*pre, "components")))
        if v2 and content:
            errors.append(
                FieldError(
                    (*pre, "content"),
                    "MESSAGE_CANNOT_USE_LEGACY_FIELDS_WITH_COMPONENTS_V2",
                    "The 'content' field cannot be used when using MessageFlags.IS_COMPONENTS_V2",
                )
            )
    return _dedupe(errors)


def _check_embeds(embeds: list[Any], path: tuple[PathKey, ...]) -> list[FieldError]:
    errors: list[FieldError] = []
    if len(embeds) > 10:
        errors.append(_max_len(path, 10))
    total = 0
    limits = {"title": 256, "description": 4096}
    for i, embed in enumerate(embeds):
        if not isinstance(embed, dict):
            continue
        for key, limit in limits.items():
            text = embed.get(key)
            if isinstance(text, str):
                total += len(text)
                if len(text) > limit:
                    errors.append(_max_len((*path, i, key), limit))
        fields = embed.get("fields") or []
        if len(fields) > 25:
            errors.append(_max_len((*path, i, "fields"), 25))
        for j, f in enumerate(fields):
            if not isinstance(f, dict):
                continue
            for key, hi in (("name", 256), ("value", 1024)):
                text = f.get(key)
                if isinstance(text, str):
                    total += len(text)
                    if not text or len(text) > hi:
                        errors.append(_bad_len((*path, i, "fields", j, key), 1, hi))
        for key, sub, limit in (("footer", "text", 2048), ("author", "name", 256)):
            obj = embed.get(key)
            if isinstance(obj, dict) and isinstance(obj.get(sub), str):
                total += len(obj[sub])
                if len(obj[sub]) > limit:
                    errors.append(_max_len((*path, i, key, sub), limit))
    if total > 6000:
        errors.append(FieldError(path, "MESSAGE_EMBEDS_TOO_LONG", "Embed size exceeds maximum size of 6000"))
    return errors


def _walk_components(
    components: Sequence[Any], path: tuple[PathKey, ...]
) -> Iterator[tuple[JSON, tuple[PathKey, ...]]]:
    for i, comp in enumerate(components):
        if not isinstance(comp, dict):
            continue
        here = (*path, i)
        yield comp, here
        nested = comp.get("components")
        if isinstance(nested, list):
            yield from _walk_components(nested, (*here, "components"))
        for key in ("accessory", "component"):
            child = comp.get(key)
            if isinstance(child, dict):
                yield child, (*here, key)
                inner = child.get("components")
                if isinstance(inner, list):
                    yield from _walk_components(inner, (*here, key, "components"))


def check_components(components: Sequence[Any], *, v2: bool, prefix: Sequence[PathKey]) -> list[FieldError]:
    """Layout and content rules of message components (see the module docstring)."""
    path = tuple(prefix)
    errors: list[FieldError] = []
    if not v2:
        if len(components) > 5:
            errors.append(_max_len(path, 5))
        for i, comp in enumerate(components):
            if isinstance(comp, dict) and comp.get("type") != 1:
                errors.append(
                    FieldError(
                        (*path, i, "type"),
                        "COMPONENT_TYPE_INVALID",
                        "Only action rows may be top-level components without the IS_COMPONENTS_V2 flag",
                    )
                )
    else:
        total = sum(1 for _ in _walk_components(components, path))
        if total > 40:
            errors.append(
                FieldError(path, "COMPONENT_MAX_TOTAL_COMPONENTS_EXCEEDED", "Must be 40 or fewer in total.")
            )
    seen_ids: set[str] = set()
    for comp, where in _walk_components(components, path):
        kind = comp.get("type")
        if kind == 1:
            errors.extend(_check_row(comp, where))
        elif kind == 2:
            errors.extend(_check_button(comp, where))
        elif kind in _SELECTS:
            errors.extend(_check_select(comp, where))
        elif kind == 4:
            errors.append(
                FieldError(
                    (*where, "type"), "COMPONENT_TYPE_INVALID", "Text inputs are only allowed in modals"
                )
            )
        custom_id = comp.get("custom_id")
        if kind in _INTERACTIVE and isinstance(custom_id, str):
            if not 1 <= len(custom_id) <= 100:
                errors.append(_bad_len((*where, "custom_id"), 1, 100))
            if custom_id in seen_ids:
                errors.append(
                    FieldError(
                        (*where, "custom_id"),
                        "COMPONENT_CUSTOM_ID_DUPLICATED",
                        "Component custom id cannot be duplicated",
                    )
                )
            seen_ids.add(custom_id)
    return errors


def _check_row(row: JSON, where: tuple[PathKey, ...]) -> list[FieldError]:
    errors: list[FieldError] = []
    children = row.get("components")
    if not isinstance(children, list):
        return errors
    if not children:
        errors.append(
            FieldError((*where, "components"), "BASE_TYPE_MIN_LENGTH", "Must be 1 or more in length.")
        )
    if len(children) > 5:
        errors.append(_max_len((*where, "components"), 5))
    selects = [c for c in children if isinstance(c, dict) and c.get("type") in _SELECTS]
    if selects and len(children) > 1:
        errors.append(
            FieldError(
                (*where, "components"),
                "COMPONENT_LAYOUT_WIDTH_EXCEEDED",
                "The specified component exceeds the maximum width",
            )
        )
    return errors


def _check_button(button: JSON, where: tuple[PathKey, ...]) -> list[FieldError]:
    errors: list[FieldError] = []
    style = button.get("style")
    has = {k for k in ("custom_id", "url", "sku_id", "label", "emoji") if button.get(k) not in (None, "")}
    label = button.get("label")
    if isinstance(label, str) and len(label) > 80:
        errors.append(_max_len((*where, "label"), 80))
    if style in _BUTTON_STYLES_WITH_ID:
        if "custom_id" not in has:
            errors.append(_required((*where, "custom_id")))
        for extra in has & {"url", "sku_id"}:
            errors.append(
                FieldError(
                    (*where, extra),
                    "BUTTON_COMPONENT_INVALID_FIELD",
                    f"A button of style {style} has no {extra}",
                )
            )
    elif style == 5:
        if "url" not in has:
            errors.append(_required((*where, "url")))
        for extra in has & {"custom_id", "sku_id"}:
            errors.append(
                FieldError((*where, extra), "BUTTON_COMPONENT_INVALID_FIELD", f"A link button has no {extra}")
            )
    elif style == 6:
        if "sku_id" not in has:
            errors.append(_required((*where, "sku_id")))
        for extra in has & {"custom_id", "url", "label", "emoji"}:
            errors.append(
                FieldError(
                    (*where, extra), "BUTTON_COMPONENT_INVALID_FIELD", f"A premium button has no {extra}"
                )
            )
    if style != 6 and not has & {"label", "emoji"}:
        errors.append(
            FieldError(
                (*where, "label"),
                "BUTTON_COMPONENT_LABEL_OR_EMOJI_REQUIRED",
                "A button needs a label or an emoji",
            )
        )
    return errors


def _check_select(select: JSON, where: tuple[PathKey, ...]) -> list[FieldError]:
    errors: list[FieldError] = []
    if not select.get("custom_id"):
        errors.append(_required((*where, "custom_id")))
    placeholder = select.get("placeholder")
    if isinstance(placeholder, str) and len(placeholder) > 150:
        errors.append(_max_len((*where, "placeholder"), 150))
    min_values = select.get("min_values")
    max_values = select.get("max_values")
    lo = 1 if min_values is None else min_values
    hi = 1 if max_values is None else max_values
    if isinstance(lo, int) and isinstance(hi, int) and lo > hi:
        errors.append(
            FieldError(
                (*where, "min_values"),
                "SELECT_COMPONENT_MIN_VALUES_GREATER_THAN_MAX",
                "min_values must be less than or equal to max_values",
            )
        )
    if select.get("type") != 3:
        return errors
    options = select.get("options")
    if not isinstance(options, list):
        return [*errors, _required((*where, "options"))]
    if not 1 <= len(options) <= 25:
        errors.append(_bad_len((*where, "options"), 1, 25))
    if isinstance(hi, int) and hi > len(options):
        errors.append(
            FieldError(
                (*where, "max_values"),
                "SELECT_COMPONENT_MAX_VALUES_EXCEEDS_OPTIONS",
                f"max_values must be less than or equal to the number of options ({len(options)})",
            )
        )
    values: set[str] = set()
    defaults = 0
    for j, option in enumerate(options):
        if not isinstance(option, dict):
            continue
        for key in ("label", "value"):
            text = option.get(key)
            if not isinstance(text, str):
                errors.append(_required((*where, "options", j, key)))
            elif not 1 <= len(text) <= 100:
                errors.append(_bad_len((*where, "options", j, key), 1, 100))
        description = option.get("description")
        if isinstance(description, str) and len(description) > 100:
            errors.append(_max_len((*where, "options", j, "description"), 100))
        value = option.get("value")
        if isinstance(value, str):
            if value in values:
                errors.append(
                    FieldError(
                        (*where, "options", j, "value"),
                        "SELECT_COMPONENT_OPTION_VALUE_DUPLICATED",
                        "Select component option value cannot be duplicated",
                    )
                )
            values.add(value)
        defaults += bool(option.get("default"))
    if isinstance(hi, int) and defaults > hi:
        errors.append(
            FieldError(
                (*where, "options"),
                "SELECT_COMPONENT_TOO_MANY_DEFAULT_VALUES",
                "The number of default options exceeds max_values",
            )
        )
    return errors


# --------------------------------------------------------------------------------------------------------
# Discord's limits for application commands
# --------------------------------------------------------------------------------------------------------


def _name_char_ok(ch: str) -> bool:
    if ch in "-_":
        return True
    category = unicodedata.category(ch)
    if category[0] in "LN":
        return True
    # Devanagari and Thai combining marks are allowed too
    return category in ("Mn", "Mc") and ("\u0900" <= ch <= "\u097f" or "\u0e00" <= ch <= "\u0e7f")


def valid_chat_input_name(name: str) -> bool:
    """``^[-_\\p{L}\\p{N}\\p{sc=Deva}\\p{sc=Thai}]{1,32}$``, in lowercase where a lowercase variant exists."""
    return 1 <= len(name) <= 32 and all(_name_char_ok(c) for c in name) and name == name.lower()


_INVALID_NAME = ("APPLICATION_COMMAND_INVALID_NAME", "Command name is invalid")
_INVALID_OPTION_NAME = ("APPLICATION_COMMAND_OPTION_INVALID_NAME", "Option name is invalid")


def _check_localizations(
    values: Any, path: tuple[PathKey, ...], locales: frozenset[str], *, name: bool, chat_input: bool
) -> list[FieldError]:
    if not isinstance(values, dict):
        return []
    errors: list[FieldError] = []
    shown = ", ".join(sorted(locales))
    for locale, text in values.items():
        if locale not in locales:
            errors.append(
                FieldError((*path, locale), "BASE_TYPE_CHOICES", f"Value must be one of {{{shown}}}.")
            )
            continue
        if not isinstance(text, str):
            continue
        if name:
            if chat_input and not valid_chat_input_name(text):
                errors.append(FieldError((*path, locale), *_INVALID_NAME))
            elif not 1 <= len(text) <= 32:
                errors.append(_bad_len((*path, locale), 1, 32))
        elif not 1 <= len(text) <= 100:
            errors.append(_bad_len((*path, locale), 1, 100))
    return errors


def _size(obj: Mapping[str, Any]) -> int:
    def longest(key: str) -> int:
        base = obj.get(key)
        sizes = [len(base)] if isinstance(base, str) else [0]
        localized = obj.get(f"{key}_localizations")
        if isinstance(localized, dict):
            sizes.extend(len(v) for v in localized.values() if isinstance(v, str))
        return max(sizes)

    total = longest("name") + longest("description")
    for choice in obj.get("choices") or []:
        if isinstance(choice, dict):
            total += len(str(choice.get("name", ""))) + len(str(choice.get("value", "")))
    for option in obj.get("options") or []:
        if isinstance(option, dict):
            total += _size(option)
    return total


def check_commands(
    commands: Sequence[Any], locales: frozenset[str], *, prefix: Sequence[PathKey] = ()
) -> list[FieldError]:
    """Discord's rules for a list of application commands (bulk overwrite); see the module docstring."""
    pre = tuple(prefix)
    errors: list[FieldError] = []
    chat_inputs = [c for c in commands if isinstance(c, dict) and (c.get("type") or 1) == 1]
    if len(chat_inputs) > 100:
        errors.append(_max_len(pre, 100))
    seen: set[tuple[int, str]] = set()
    for i, command in enumerate(commands):
        if not isinstance(command, dict):
            continue
        key = (command.get("type") or 1, str(command.get("name")))
        if key in seen:
            errors.append(
                FieldError(
                    (*pre, i, "name"),
                    "APPLICATION_COMMANDS_DUPLICATE_NAME",
                    f"Application command names must be unique ({key[1]})",
                )
            )
        seen.add(key)
        errors.extend(check_command(command, locales, prefix=(*pre, i)))
    return _dedupe(errors)


def check_command(
    command: Mapping[str, Any], locales: frozenset[str], *, prefix: Sequence[PathKey] = ()
) -> list[FieldError]:
    """Discord's rules for one application command (see the module docstring)."""
    path = tuple(prefix)
    errors: list[FieldError] = []
    kind = command.get("type") or 1
    chat_input = kind == 1
    name = command.get("name")
    if isinstance(name, str):
        if chat_input and not valid_chat_input_name(name):
            errors.append(FieldError((*path, "name"), *_INVALID_NAME))
        elif not 1 <= len(name) <= 32:
            errors.append(_bad_len((*path, "name"), 1, 32))
    description = command.get("description")
    if chat_input:
        if not isinstance(description, str) or not 1 <= len(description) <= 100:
            errors.append(_bad_len((*path, "description"), 1, 100))
    elif description:
        errors.append(
            FieldError(
                (*path, "description"),
                "APPLICATION_COMMAND_CONTEXT_MENU_DESCRIPTION",
                "Context menu commands cannot have a description",
            )
        )
    errors.extend(
        _check_localizations(
            command.get("name_localizations"),
            (*path, "name_localizations"),
            locales,
            name=True,
            chat_input=chat_input,
        )
    )
    errors.extend(
        _check_localizations(
            command.get("description_localizations"),
            (*path, "description_localizations"),
            locales,
            name=False,
            chat_input=chat_input,
        )
    )
    options = command.get("options")
    if isinstance(options, list) and options:
        if not chat_input:
            errors.append(
                FieldError(
                    (*path, "options"),
                    "APPLICATION_COMMAND_OPTIONS_INVALID",
                    "Only chat input commands take options",
                )
            )
        else:
            errors.extend(_check_options(options, (*path, "options"), locales, level=0))
    if _size(command) > 8000:
        errors.append(
            FieldError(path, "APPLICATION_COMMAND_TOO_LARGE", "Command exceeds maximum size (8000)")
        )
    return errors


def _check_options(
    options: list[Any], path: tuple[PathKey, ...], locales: frozenset[str], *, level: int
) -> list[FieldError]:
    errors: list[FieldError] = []
    if len(options) > 25:
        errors.append(_max_len(path, 25))
    kinds = [o.get("type") for o in options if isinstance(o, dict)]
    subs = [k for k in kinds if k in (1, 2)]
    if subs and len(subs) != len(kinds):
        errors.append(
            FieldError(
                path,
                "APPLICATION_COMMAND_OPTIONS_TYPE_INVALID",
                "Sub-command and sub-command group option types are mutually exclusive to all other types",
            )
        )
    names: set[str] = set()
    optional_seen = False
    for i, option in enumerate(options):
        if not isinstance(option, dict):
            continue
        where = (*path, i)
        kind = option.get("type")
        if kind == 2 and level != 0:
            errors.append(
                FieldError(
                    (*where, "type"),
                    "APPLICATION_COMMAND_OPTIONS_TYPE_INVALID",
                    "Groups only at the top level",
                )
            )
        if kind == 1 and level > 1:
            errors.append(
                FieldError(
                    (*where, "type"),
                    "APPLICATION_COMMAND_OPTIONS_TYPE_INVALID",
                    "Sub-commands nest once at most",
                )
            )
        name = option.get("name")
        if isinstance(name, str):
            if not valid_chat_input_name(name):
                errors.append(FieldError((*where, "name"), *_INVALID_OPTION_NAME))
            if name in names:
                errors.append(
                    FieldError(
                        (*where, "name"),
                        "APPLICATION_COMMAND_OPTION_NAME_ALREADY_EXISTS",
                        f"Option names must be unique ({name})",
                    )
                )
            names.add(name)
        description = option.get("description")
        if not isinstance(description, str) or not 1 <= len(description) <= 100:
            errors.append(_bad_len((*where, "description"), 1, 100))
        errors.extend(
            _check_localizations(
                option.get("name_localizations"),
                (*where, "name_localizations"),
                locales,
                name=True,
                chat_input=True,
            )
        )
        errors.extend(
            _check_localizations(
                option.get("description_localizations"),
                (*where, "description_localizations"),
                locales,
                name=False,
                chat_input=True,
            )
        )
        if kind not in (1, 2):
            if option.get("required"):
                if optional_seen:
                    errors.append(
                        FieldError(
                            (*where, "required"),
                            "APPLICATION_COMMAND_OPTIONS_REQUIRED_INVALID",
                            "Required options must be placed before non-required options",
                        )
                    )
            else:
                optional_seen = True
        choices = option.get("choices")
        if isinstance(choices, list):
            if len(choices) > 25:
                errors.append(_max_len((*where, "choices"), 25))
            if choices and option.get("autocomplete"):
                errors.append(
                    FieldError(
                        (*where, "autocomplete"),
                        "APPLICATION_COMMAND_AUTOCOMPLETE_WITH_CHOICES",
                        "Autocomplete cannot be enabled on options with choices",
                    )
                )
            for j, choice in enumerate(choices):
                if not isinstance(choice, dict):
                    continue
                cname = choice.get("name")
                if not isinstance(cname, str) or not 1 <= len(cname) <= 100:
                    errors.append(_bad_len((*where, "choices", j, "name"), 1, 100))
                value = choice.get("value")
                if isinstance(value, str) and not 1 <= len(value) <= 100:
                    errors.append(_bad_len((*where, "choices", j, "value"), 1, 100))
        nested = option.get("options")
        if isinstance(nested, list) and nested:
            if kind not in (1, 2):
                errors.append(
                    FieldError(
                        (*where, "options"),
                        "APPLICATION_COMMAND_OPTIONS_INVALID",
                        "Only sub-commands take options",
                    )
                )
            else:
                nested_kinds = {o.get("type") for o in nested if isinstance(o, dict)}
                if kind == 2 and nested_kinds - {1}:
                    errors.append(
                        FieldError(
                            (*where, "options"),
                            "APPLICATION_COMMAND_OPTIONS_TYPE_INVALID",
                            "A sub-command group holds sub-commands only",
                        )
                    )
                errors.extend(_check_options(nested, (*where, "options"), locales, level=level + 1))
    return errors
