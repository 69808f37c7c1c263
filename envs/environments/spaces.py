"""A text space for LLM text: any unicode string up to a maximum length.

``gymnasium.spaces.Text`` only admits characters of a fixed charset, so a Chinese reply or an
emoji fails ``contains``; this space admits every string.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

_SAMPLE_ALPHABET = (
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 {}[]\":,._-<>/\n"
    "外卖订单配送时间地址你好请帮我点一份é😀"
)


class UnicodeText(spaces.Space[str]):
    """Strings of at most ``max_length`` characters; ``sample()`` draws from a mixed alphabet."""

    def __init__(self, max_length: int = 1 << 20, seed: int | np.random.Generator | None = None) -> None:
        self.max_length = int(max_length)
        super().__init__(shape=None, dtype=None, seed=seed)

    @property
    def is_np_flattenable(self) -> bool:
        return False

    def sample(self, mask: Any = None, probability: Any = None) -> str:
        n = int(self.np_random.integers(0, min(self.max_length, 64) + 1))
        idx = self.np_random.integers(0, len(_SAMPLE_ALPHABET), size=n)
        return "".join(_SAMPLE_ALPHABET[i] for i in idx)

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and len(x) <= self.max_length

    def __repr__(self) -> str:
        return f"UnicodeText({self.max_length})"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, UnicodeText) and other.max_length == self.max_length

    def to_jsonable(self, sample_n):
        return list(sample_n)

    def from_jsonable(self, sample_n):
        return list(sample_n)
