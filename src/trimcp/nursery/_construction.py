"""Classes whose objects only a factory makes: :class:`NoPublicConstructor`.

A :class:`~trimcp.nursery.Session` or a :class:`~trimcp.Client` built by hand would
have no nursery running its reader, no handshake behind it and nobody to close it, so
calling the class is refused with a :class:`TypeError` that names the factory to use.
The factory itself builds the object with ``cls._create(...)``.
"""

from __future__ import annotations

from typing import Any, NoReturn, TypeVar

__all__ = ["NoPublicConstructor"]

T = TypeVar("T")


class NoPublicConstructor(type):
    """Metaclass: ``Cls(...)`` raises :class:`TypeError`; ``Cls._create(...)`` builds.

    The class names its factory in ``__trimcp_factory__`` (for the error message).
    """

    def __call__(cls, *args: Any, **kwargs: Any) -> NoReturn:
        factory = getattr(cls, "__trimcp_factory__", None)
        hint = f"; use {factory}" if factory else ""
        raise TypeError(f"{cls.__module__}.{cls.__qualname__} has no public constructor{hint}")

    def _create(cls: type[T], *args: Any, **kwargs: Any) -> T:
        return super().__call__(*args, **kwargs)  # type: ignore[misc,no-any-return]
