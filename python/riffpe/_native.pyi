from collections.abc import Iterable, Mapping
from typing import Any, ClassVar, Literal

from typing_extensions import Buffer, Self

class Riffpe:
    def __new__(
        cls,
        radix: int,
        digits: int,
        key: Buffer,
        tweak: Buffer,
        bytes_per_value: int = 16,
        *,
        constant_time: bool | None = None,
    ) -> Self: ...
    def encrypt(self, digits: Iterable[int]) -> list[int]: ...
    def decrypt(self, digits: Iterable[int]) -> list[int]: ...
    @property
    def radix(self) -> int: ...
    @property
    def digits(self) -> int: ...
    @property
    def bytes_per_value(self) -> int: ...
    @property
    def radices(self) -> tuple[int, ...]: ...
    @property
    def _max_u64(self) -> int | None: ...
    def _ints(self, values: Any, encrypt: bool, order: str, threads: int | None) -> Any: ...
    def _digits(self, digits: Any, encrypt: bool, threads: int | None) -> Any: ...

class RiffpeX:
    def __new__(
        cls,
        radices: Iterable[int],
        key: Buffer,
        tweak: Buffer,
        bytes_per_value: int = 16,
        *,
        constant_time: bool | None = None,
    ) -> Self: ...
    def encrypt(self, digits: Iterable[int]) -> list[int]: ...
    def decrypt(self, digits: Iterable[int]) -> list[int]: ...
    @property
    def digits(self) -> int: ...
    @property
    def bytes_per_value(self) -> int: ...
    @property
    def radices(self) -> tuple[int, ...]: ...
    @property
    def _max_u64(self) -> int | None: ...
    def _ints(self, values: Any, encrypt: bool, order: str, threads: int | None) -> Any: ...
    def _digits(self, digits: Any, encrypt: bool, threads: int | None) -> Any: ...

class CBCTweakablePRNG:
    block_size: ClassVar[int]
    def __new__(cls, key: Buffer, tweak: Buffer, iv: Buffer | None = None) -> Self: ...
    def reset(self, tweak: Buffer, iv: Buffer | None = None) -> None: ...
    def get_bytes(self, count: int) -> bytes: ...

class FormatCipher:
    def __new__(
        cls,
        key: Buffer,
        format: str | None = None,
        *,
        template: str | None = None,
        alphabet: str | None = None,
        passthrough: str | None = None,
        alphabets: Mapping[str, str] | None = None,
        keep_prefix: int | None = None,
        keep_suffix: int | None = None,
        luhn: Literal["preserve", "invalid", "off"] | None = None,
        fold_case: bool | None = None,
        allow_small_domain: bool = False,
        context: Buffer | None = None,
        security: Literal[128, 256] = 128,
        constant_time: bool | None = None,
    ) -> Self: ...
    def encrypt(self, value: str) -> str: ...
    def decrypt(self, value: str) -> str: ...
    @property
    def bytes_per_value(self) -> int: ...
    def _strings(
        self, values: list[str | None], encrypt: bool, threads: int | None
    ) -> list[str | None]: ...
    def _arrow_strings(
        self,
        offsets: Any,
        data: Any,
        valid: Any | None,
        encrypt: bool,
        threads: int | None,
    ) -> tuple[Any, Any]: ...
