"""Each export checked before it is offered, by the real tool where one runs here, else by its schema's types.

- docker-compose override: `docker-compose config -q` (Debian's docker-compose 1.29, which validates
  against the Compose spec's JSON schema and interpolates `${VAR:?message}`), merged over the
  project's own docker-compose.yml, with placeholders for the variables an admin fills in.
- Kubernetes manifests: `kubernetes-validate` (PyPI), the Kubernetes JSON schemas in strict mode,
  which also refuses fields that do not exist.
- mig-parted's and the device plugin's YAML: neither tool is packaged for PyPI, Debian or npm, so
  their config types (mig-parted `pkg/mig/config` v1; k8s-device-plugin `api/config/v1`) are
  written here as pydantic models, extra fields refused, MIG profiles checked against the GPU's.
- the workers' shell lines: `sh -n` (the shell's own parser).
Every check returns the problems it found, [] when the file is good.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Literal

import yaml
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


def check_compose(text: str) -> list[str]:
    """`docker-compose config -q` on the project's docker-compose.yml with this override, placeholders filled."""
    tool = compose_tool()
    if tool is None:
        return ["docker-compose is not installed here (./lab installs Debian's), so the override was not checked"]
    base = Path(settings.BASE_DIR) / "docker-compose.yml"
    placeholders = {name: "placeholder" for name in re.findall(r"\$\{([A-Z0-9_]+):\?", text)}
    env = {"PATH": os.environ.get("PATH", ""), "SECRET_KEY": "placeholder", **placeholders}
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


def check_commands(text: str) -> list[str]:
    done = subprocess.run(["sh", "-n"], input=text, capture_output=True, text=True, timeout=10)
    return [line for line in done.stderr.splitlines() if line.strip()] if done.returncode else []


VALIDATORS = {
    "mig-parted": "typed after mig-parted's v1 config (pydantic, written here)",
    "device-plugin": "typed after the device plugin's config v1 (pydantic, written here)",
    "compose": "docker-compose config -q (Debian's docker-compose 1.29)",
    "commands": "sh -n",
    "kubernetes": f"kubernetes-validate, Kubernetes {KUBERNETES_VERSION} JSON schema, strict",
}
