"""TorchX's AppDef dataclasses ↔ the API's camelCase AppDef JSON (docs/http-api.md, lib/specs/schema.ts).

Every field the API knows is carried both ways: Role (name, image, entrypoint, args, env, num_replicas,
min_replicas, max_retries, retry_policy, resource, port_map, metadata, mounts), Resource (cpu, gpu,
memMB, capabilities, devices) and bind/volume/device mounts. Macros (``${app_id}``, ``${replica_id}``,
``${img_root}``, …) are plain strings and are substituted by the service. What the API cannot carry is
refused rather than dropped: a role's scheduler ``overrides``.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any, Dict, List, Mapping

from torchx import specs
from torchx.specs import AppDef, AppState, BindMount, DeviceMount, Resource, RetryPolicy, Role, VolumeMount


def _json_safe(value: Any, path: str) -> Any:
    try:
        return json.loads(json.dumps(value))
    except (TypeError, ValueError) as error:
        raise ValueError(f"{path} must be JSON-serializable to send it to torchx-serverless: {error}") from None


def resource_to_json(resource: Resource) -> Dict[str, Any]:
    """A Resource as ``{cpu, gpu, memMB, capabilities, devices}`` (TorchX's ``tags`` stay client-side)."""
    return {
        "cpu": resource.cpu,
        "gpu": resource.gpu,
        "memMB": resource.memMB,
        "capabilities": _json_safe(dict(resource.capabilities), "resource.capabilities"),
        "devices": dict(resource.devices),
    }


def mount_to_json(mount: Any) -> Dict[str, Any]:
    """A bind, volume or device mount as the API's tagged object."""
    if isinstance(mount, BindMount):
        return {"type": "bind", "srcPath": mount.src_path, "dstPath": mount.dst_path, "readOnly": mount.read_only}
    if isinstance(mount, VolumeMount):
        return {"type": "volume", "src": mount.src, "dstPath": mount.dst_path, "readOnly": mount.read_only}
    if isinstance(mount, DeviceMount):
        return {
            "type": "device",
            "srcPath": mount.src_path,
            "dstPath": mount.dst_path,
            "permissions": mount.permissions,
        }
    raise ValueError(f"unsupported mount {mount!r}: use BindMount, VolumeMount or DeviceMount")


def role_to_json(role: Role) -> Dict[str, Any]:
    """A Role as the API's camelCase role object."""
    if getattr(role, "overrides", None):
        raise ValueError(
            f"role `{role.name}` has scheduler overrides ({', '.join(map(str, role.overrides))}); the"
            " torchx-serverless schedulers cannot carry them: express them as run options (-cfg) instead"
        )
    out: Dict[str, Any] = {
        "name": role.name,
        "image": role.image,
        "entrypoint": role.entrypoint,
        "args": [str(a) for a in role.args],
        "env": {str(k): str(v) for k, v in role.env.items()},
        "numReplicas": role.num_replicas,
        "maxRetries": role.max_retries,
        "retryPolicy": RetryPolicy(role.retry_policy).value,
        "portMap": dict(role.port_map),
        "metadata": _json_safe(dict(role.metadata), f"role `{role.name}` metadata"),
        "mounts": [mount_to_json(m) for m in role.mounts],
    }
    if role.min_replicas is not None:
        out["minReplicas"] = role.min_replicas
    if role.resource != specs.NULL_RESOURCE:
        out["resource"] = resource_to_json(role.resource)
    return out


def app_to_json(app: AppDef) -> Dict[str, Any]:
    """An AppDef as the API's camelCase AppDef object."""
    return {
        "name": app.name,
        "roles": [role_to_json(r) for r in app.roles],
        "metadata": {str(k): str(v) for k, v in app.metadata.items()},
    }


def resource_from_json(data: Mapping[str, Any]) -> Resource:
    """The API's resource object as a TorchX Resource."""
    return Resource(
        cpu=data.get("cpu", -1),
        gpu=data.get("gpu", -1),
        memMB=data.get("memMB", -1),
        capabilities=dict(data.get("capabilities") or {}),
        devices=dict(data.get("devices") or {}),
    )


def mount_from_json(data: Mapping[str, Any]) -> Any:
    """The API's tagged mount object as a TorchX mount."""
    kind = data.get("type")
    if kind == "bind":
        return BindMount(src_path=data["srcPath"], dst_path=data["dstPath"], read_only=bool(data.get("readOnly")))
    if kind == "volume":
        return VolumeMount(src=data["src"], dst_path=data["dstPath"], read_only=bool(data.get("readOnly")))
    if kind == "device":
        return DeviceMount(
            src_path=data["srcPath"],
            dst_path=data.get("dstPath") or data["srcPath"],
            permissions=data.get("permissions", "rwm"),
        )
    raise ValueError(f"unknown mount type {kind!r}")


def role_from_json(data: Mapping[str, Any]) -> Role:
    """The API's role object as a TorchX Role."""
    resource = data.get("resource")
    role = Role(
        name=data["name"],
        image=data.get("image", ""),
        entrypoint=data.get("entrypoint", ""),
        args=list(data.get("args") or []),
        env=dict(data.get("env") or {}),
        num_replicas=int(data.get("numReplicas", 1)),
        max_retries=int(data.get("maxRetries", 0)),
        retry_policy=RetryPolicy(data.get("retryPolicy", "APPLICATION")),
        resource=resource_from_json(resource) if isinstance(resource, Mapping) else specs.NULL_RESOURCE,
        port_map=dict(data.get("portMap") or {}),
        metadata=dict(data.get("metadata") or {}),
        mounts=[mount_from_json(m) for m in data.get("mounts") or []],
    )
    if data.get("minReplicas") is not None:
        role.min_replicas = int(data["minReplicas"])
    return role


def app_from_json(data: Mapping[str, Any]) -> AppDef:
    """The API's AppDef object as a TorchX AppDef."""
    return AppDef(
        name=data["name"],
        roles=[role_from_json(r) for r in data.get("roles") or []],
        metadata={str(k): str(v) for k, v in (data.get("metadata") or {}).items()},
    )


def app_state(name: Any) -> AppState:
    """An API state name (``RUNNING``, …) as TorchX's AppState; unknown names are ``UNKNOWN``."""
    try:
        return AppState[str(name)]
    except KeyError:
        return AppState.UNKNOWN


def _torchx_can_read(document: Any) -> bool:
    """True for a torchelastic error document every TorchX release formats (0.7 indexes every field)."""
    error = document.get("message") if isinstance(document, dict) else None
    if not isinstance(error, dict) or not isinstance(error.get("message"), str) or "errorCode" not in error:
        return False
    extra = error.get("extraInfo")
    try:
        datetime.fromtimestamp(int(extra["timestamp"]))  # type: ignore[index]
    except (TypeError, ValueError, KeyError, OverflowError, OSError):
        return False
    return True


_CUT_MESSAGE = re.compile(r'"message"\s*:\s*\{\s*"message"\s*:\s*"((?:[^"\\]|\\.)*)', re.S)
_JSON_ESCAPE = re.compile(r'\\(?:u([0-9a-fA-F]{4})|(["\\/bfnrt]))')
_ESCAPED = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def _message_of_cut_document(head: str) -> str:
    """The error message at the start of a torchelastic document the service cut to its bound, else the head."""
    match = _CUT_MESSAGE.search(head)
    if match is None:
        return head
    return _JSON_ESCAPE.sub(
        lambda m: chr(int(m.group(1), 16)) if m.group(1) else _ESCAPED[m.group(2)], match.group(1)
    )


def error_document_for_torchx(text: Any) -> str:
    """A replica's ``structuredErrorMsg`` as TorchX's ``AppStatus.format`` can show it, on every release.

    A torchelastic error file TorchX reads stays as it is; ``<NONE>`` and text that is not JSON too (TorchX
    shows such text verbatim). Anything else becomes text that is not JSON: the service's cut form of a
    long error file (``{"truncated": true, "bytes": N, "head": …}``) its message up to the cut, any other
    JSON the document itself. TorchX 0.7 indexes the torchelastic fields without checking and raises on
    these; newer releases would show the raw JSON.
    """
    value = str(text)
    if value == specs.NONE:
        return value
    try:
        document = json.loads(value)
    except ValueError:
        return value
    if _torchx_can_read(document):
        return value
    if isinstance(document, dict) and document.get("truncated") is True and isinstance(document.get("head"), str):
        shown = _message_of_cut_document(document["head"])
    else:
        shown = value
    try:
        json.loads(shown)
    except ValueError:
        return shown
    return f"error document: {shown}"


def roles_statuses_from_json(roles: List[Mapping[str, Any]]) -> List[specs.RoleStatus]:
    """The API's ``status.roles`` as TorchX RoleStatus objects (error documents as TorchX can show them)."""
    out: List[specs.RoleStatus] = []
    for role in roles or []:
        replicas = [
            specs.ReplicaStatus(
                id=int(r.get("id", 0)),
                state=app_state(r.get("state")),
                role=str(r.get("role", role.get("role", ""))),
                hostname=str(r.get("hostname", "")),
                structured_error_msg=error_document_for_torchx(r.get("structuredErrorMsg", specs.NONE)),
            )
            for r in role.get("replicas") or []
        ]
        out.append(specs.RoleStatus(role=str(role.get("role", "")), replicas=replicas))
    return out
