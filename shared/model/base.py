"""Building blocks shared by every wire model: case-insensitive input and write-only secrets (instants are
instants.py's, durations durations.py's).

The old service bound request bodies the .NET way: property names and enum values are case-insensitive
on input. Output uses the OpenAPI names and the enum casing the real service emitted.
"""

from __future__ import annotations

from enum import Enum
from typing import Any, ClassVar

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    PlainSerializer,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from ..keys import fold_case  # ASCII-only case folding: U+212A must not alias `k`

# Context flag for model_dump: include write-only secrets (only the store asks for them).
WITH_SECRETS = "with_secrets"


class CaseInsensitiveEnum(str, Enum):
    """A string enum whose input matching ignores case, as the old service's did."""

    @classmethod
    def _missing_(cls, value: object) -> CaseInsensitiveEnum | None:
        if isinstance(value, str):
            lowered = fold_case(value)
            for member in cls:
                if fold_case(member.value) == lowered:
                    return member
        return None


def camel_case(text: str) -> str:
    """Json.NET's camel-casing (`StringEnumConverter` with camelCaseText), which the old service applied to
    the enum values it emitted: the leading capitals are lowered, except the last one of a run that starts
    a word (`NetMessaging` -> `netMessaging`, `AMQP` -> `amqp`, `Week` -> `week`)."""
    chars = list(text)
    for i, char in enumerate(chars):
        if i == 1 and not char.isupper():
            break
        if i > 0 and i + 1 < len(chars) and not chars[i + 1].isupper():
            break
        chars[i] = char.lower()
    return "".join(chars)


def _camel(value: Enum) -> str:
    return camel_case(str(value.value))


# `Annotated[SomeEnum, CamelCaseOnOutput]`: an enum field the real service emitted camel-cased
# (docs/wire-contract.md §2.12).
CamelCaseOnOutput = PlainSerializer(_camel, return_type=str)


def _as_list(value: Any) -> Any:
    # The 2016 docs allow "Integer, or Array of integers" for schedule minutes and hours (Q15).
    return [value] if isinstance(value, (int, str)) and not isinstance(value, bool) else value


ScalarOrList = BeforeValidator(_as_list)


class WireModel(BaseModel):
    """Base of every request/response model.

    Subclasses list their write-only properties (by JSON name) in `secrets`; those are dropped from
    every dump unless the caller passes `context={WITH_SECRETS: True}`.
    """

    model_config = ConfigDict(populate_by_name=True, extra="ignore", use_enum_values=False)
    secrets: ClassVar[frozenset[str]] = frozenset()

    @model_validator(mode="before")
    @classmethod
    def _canonical_keys(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        names: dict[str, str] = {}
        for name, field in cls.model_fields.items():
            canonical = field.alias or name
            names[fold_case(name)] = canonical
            names[fold_case(canonical)] = canonical
        return {names.get(fold_case(key), key) if isinstance(key, str) else key: value for key, value in data.items()}

    @model_serializer(mode="wrap")
    def _drop_secrets(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo) -> Any:
        data = handler(self)
        if self.secrets and isinstance(data, dict) and not (info.context or {}).get(WITH_SECRETS):
            for key in self.secrets:
                data.pop(key, None)
        return data

    def to_wire(self) -> dict[str, Any]:
        """The public JSON form: aliases, no nulls, no secrets."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)

    def to_document(self) -> dict[str, Any]:
        """The stored JSON form: like to_wire, but with secrets."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True, context={WITH_SECRETS: True})
