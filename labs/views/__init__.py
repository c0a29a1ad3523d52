"""Views: HTML pages and the JSON API; both call `labs.services` for any change."""
