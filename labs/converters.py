"""URL path converters: a database id is at most 18 digits, so a 5000-digit one is a 404, not an overflow.

Importing this module registers it as `<id:...>`. A run is named by its random `public_id` (`<uuid:...>`) instead.
"""

from django.urls import register_converter


class IdConverter:
    regex = "[0-9]{1,18}"

    def to_python(self, value: str) -> int:
        return int(value)

    def to_url(self, value: int) -> str:
        return str(value)


register_converter(IdConverter, "id")
