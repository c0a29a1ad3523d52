"""The learning domain, one Django app in packages by concern: `fleet`, `runs`, `courses`, `curriculum`.

Below them the models (`models/`) and the site's roles (`accounts`); above them the doors: pages and the
JSON API (`views/`, `api_input`, `openapi`), the WebSocket stream (`consumers`, `routing`), the `web`
queue's tasks (`tasks`) and the admin. Each package's `__init__` says what it owns and may import.
"""
