"""Each export checked before it is offered, by the real tool where one runs here, else by its schema's types.

- docker-compose override: `docker-compose config -q` (Debian's docker-compose 1.29, which validates
  against the Compose spec's JSON schema and interpolates `${VAR:?message}`), merged over the
  project's own docker-compose.yml, with placeholders for the variables an admin fills in. Where no
  docker-compose is installed (`./lab up` installs none), the same merge and interpolation are done here
  and the result parsed by `compose-spec` (PyPI: bindings of the Rust `compose_spec` crate, which refuses
  unknown keys and values as the spec's schema does), so the export is checked on any host.
- Kubernetes manifests: `kubernetes-validate` (PyPI), the Kubernetes JSON schemas in strict mode,
  which also refuses fields that do not exist.
- mig-parted's and the device plugin's YAML: neither tool is packaged for PyPI, Debian or npm, so
  their config types (mig-parted `pkg/mig/config` v1; k8s-device-plugin `api/config/v1`) are
  written here as pydantic models, extra fields refused, MIG profiles checked against the GPU's.
- the workers' shell lines: `sh -n` (the shell's own parser).
Every check returns the problems it found, [] when the file is good.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Literal

import yaml
from compose_spec import PyCompose
from django.conf import settings
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from labs.fleet.mig_profiles import model_for

KUBERNETES_VERSION = "1.32.0"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class MigConfigSpec(_Strict):
    """One entry of a mig-parted config: which devices, MIG on or off, how many of each profile."""

    devices: Literal["all"] | list[int]
    device_filter: str | list[str] | None = Field(default=None, alias="device-filter")
    mig_enabled: bool = Field(alias="mig-enabled")
    mig_devices: dict[str, int] = Field(default_factory=dict, alias="mig-devices")

    @model_validator(mode="after")
    def _devices_only_when_enabled(self) -> MigConfigSpec:
        if self.mig_devices and not self.mig_enabled:
            raise ValueError("mig-devices given with mig-enabled false")
        if any(count < 1 for count in self.mig_devices.values()):
            raise ValueError("a mig-devices count is under 1")
        return self


class MigPartedConfig(_Strict):
    version: Literal["v1"]
    mig_configs: dict[str, list[MigConfigSpec]] = Field(alias="mig-configs")


class SharedResource(_Strict):
    name: str
    rename: str | None = None
    devices: Literal["all"] | list[int | str] | None = None
    replicas: int = Field(ge=2)


class Sharing(_Strict):
    time_slicing: dict | None = Field(default=None, alias="timeSlicing")
    mps: dict | None = None

    @model_validator(mode="after")
    def _one_way(self) -> Sharing:
        if self.time_slicing and self.mps:
            raise ValueError("timeSlicing and mps cannot both be set")
        for way in (self.time_slicing, self.mps):
            if way is not None:
                for r in way.get("resources") or []:
                    SharedResource.model_validate(r)
        return self


class PluginFlags(_Strict):
    mig_strategy: Literal["none", "single", "mixed"] = Field(default="none", alias="migStrategy")
    fail_on_init_error: bool | None = Field(default=None, alias="failOnInitError")


class DevicePluginConfig(_Strict):
    version: Literal["v1"]
    flags: PluginFlags
    sharing: Sharing | None = None


def _typed(model: type[BaseModel], text: str) -> tuple[object, list[str]]:
    try:
        doc = yaml.safe_load(text)
        return model.model_validate(doc), []
    except yaml.YAMLError as exc:
        return None, [f"not YAML: {exc}"]
    except ValidationError as exc:
        return None, [f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()]


def check_mig_parted(text: str, models: dict[int, str]) -> list[str]:
    """mig-parted's types, and every profile one the GPU at that index has (`models`: index -> model key)."""
    config, problems = _typed(MigPartedConfig, text)
    if not isinstance(config, MigPartedConfig):
        return problems
    for entries in config.mig_configs.values():
        for entry in entries:
            for index in entry.devices if isinstance(entry.devices, list) else list(models):
                model = model_for(models.get(index, ""))
                if model is None:
                    problems.append(f"device {index}: not a GPU of this node")
                    continue
                problems += [
                    f"device {index}: {name} is not a MIG profile of {model.label}"
                    for name in entry.mig_devices
                    if model.profile(name) is None
                ]
    return problems


def check_device_plugin(text: str) -> list[str]:
    return _typed(DevicePluginConfig, text)[1]


def check_kubernetes(text: str) -> list[str]:
    """Every document against the Kubernetes JSON schema of KUBERNETES_VERSION, strictly."""
    try:
        import kubernetes_validate  # 22 MB of schemas: loaded when a manifest is checked, not with the site
    except ImportError:
        return ["kubernetes-validate is not installed here (requirements/base.txt), so the manifests were not checked"]
    problems = []
    for doc in yaml.safe_load_all(text):
        if doc is None:
            continue
        try:
            kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)
        except kubernetes_validate.ValidationError as exc:
            name = (doc.get("metadata") or {}).get("name", "?")
            problems.append(f"{doc.get('kind')} {name}: {'.'.join(str(p) for p in exc.path)}: {exc.message}")
        except (kubernetes_validate.SchemaNotFoundError, kubernetes_validate.InvalidSchemaError) as exc:
            problems.append(str(getattr(exc, "message", exc)))
    return problems


def compose_tool() -> str | None:
    return shutil.which("docker-compose")


def _placeholders(text: str) -> dict[str, str]:
    return {name: "placeholder" for name in re.findall(r"\$\{([A-Z0-9_]+):\?", text)}


def check_compose(text: str) -> list[str]:
    """The override merged over the project's docker-compose.yml, checked by docker-compose where it is installed,
    else by the Compose Specification's parser (`check_compose_spec`)."""
    tool = compose_tool()
    if tool is None:
        return check_compose_spec(text)
    base = Path(settings.BASE_DIR) / "docker-compose.yml"
    env = {"PATH": os.environ.get("PATH", ""), "SECRET_KEY": "placeholder", **_placeholders(text)}
    with tempfile.TemporaryDirectory() as folder:
        override = Path(folder) / "override.yaml"
        override.write_text(text)
        done = subprocess.run(
            [tool, "--project-directory", str(base.parent), "-f", str(base), "-f", str(override), "config", "-q"],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
    if done.returncode == 0:
        return []
    return [line for line in (done.stderr or done.stdout).splitlines() if line.strip()] or ["docker-compose failed"]


# `${NAME}`, `${NAME:-default}`, `${NAME-default}`, `${NAME:?message}`, `${NAME?message}`, and `$$` (a dollar)
INTERPOLATION = re.compile(r"\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}")
JSON_PLACE = re.compile(r" at line \d+ column \d+$")  # the parser's place in JSON we made: no help to a reader


def _interpolated(text: str) -> str:
    """Compose's interpolation as `config` does it with nothing set: a default where given, else a placeholder."""

    def one(match: re.Match) -> str:
        if match.group(0) == "$$":
            return "$"
        return match.group(3) if match.group(2) in ("-", ":-") else "placeholder"

    return INTERPOLATION.sub(one, text)


def _merged(base: dict, override: dict) -> dict:
    """`-f base -f override`: mappings merged key by key, anything else the override's."""
    merged = dict(base)
    for key, value in override.items():
        both = isinstance(value, dict) and isinstance(base.get(key), dict)
        merged[key] = _merged(base[key], value) if both else value
    return merged


def _spec_problems(doc: dict) -> list[str]:
    try:
        PyCompose.from_json(json.dumps(doc)).validate()
    except ValueError as exc:
        return [JSON_PLACE.sub("", str(exc))]
    return []


def check_compose_spec(text: str) -> list[str]:
    """The override merged over the project's docker-compose.yml, interpolated, and parsed as the Compose
    Specification says (each service alone first, so a problem names its service), without docker-compose."""
    base_text = (Path(settings.BASE_DIR) / "docker-compose.yml").read_text()
    try:
        base, override = yaml.safe_load(_interpolated(base_text)), yaml.safe_load(_interpolated(text))
    except yaml.YAMLError as exc:
        return [f"not YAML: {exc}"]
    if not isinstance(override, dict) or not isinstance(override.get("services", {}), dict):
        return ["the override is not a Compose file: a mapping with a mapping of services"]
    merged = _merged(base, override)
    problems = []
    for name, service in (merged.get("services") or {}).items():
        found = _spec_problems({"services": {name: service}})
        problems += [f"services.{name}: {p}" for p in found]
        if not found and isinstance(service, dict) and not ({"image", "build", "extends"} & set(service)):
            problems.append(f"services.{name}: neither an image nor a build to run")
    return problems or _spec_problems(merged)


def check_commands(text: str) -> list[str]:
    done = subprocess.run(["sh", "-n"], input=text, capture_output=True, text=True, timeout=10)
    return [line for line in done.stderr.splitlines() if line.strip()] if done.returncode else []


VALIDATORS = {
    "mig-parted": "typed after mig-parted's v1 config (pydantic, written here)",
    "device-plugin": "typed after the device plugin's config v1 (pydantic, written here)",
    "compose": (
        "docker-compose config -q (Debian's docker-compose 1.29) where installed, else the Compose "
        "Specification's parser (compose-spec)"
    ),
    "commands": "sh -n",
    "kubernetes": f"kubernetes-validate, Kubernetes {KUBERNETES_VERSION} JSON schema, strict",
}
