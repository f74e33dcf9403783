"""TorchX AppDef dataclasses ↔ the API's camelCase JSON."""

from __future__ import annotations

import pytest
from torchx import specs

from torchx_serverless.appdef import app_from_json, app_state, app_to_json


def full_app() -> specs.AppDef:
    role = specs.Role(
        name="trainer",
        image="repo/img:1",
        entrypoint="python",
        args=["-m", "train", "--rank", specs.macros.replica_id, "--id", specs.macros.app_id],
        env={"A": "1"},
        num_replicas=4,
        min_replicas=2,
        max_retries=3,
        retry_policy=specs.RetryPolicy.REPLICA,
        resource=specs.Resource(cpu=8, gpu=1, memMB=32000, capabilities={"node.kubernetes.io/instance-type": "g5"}, devices={"vpc.amazonaws.com/efa": 1}),
        port_map={"c10d": 29500},
        metadata={"k": {"nested": [1, 2]}},
        mounts=[
            specs.BindMount(src_path="/data", dst_path="/in", read_only=True),
            specs.VolumeMount(src="efs-1", dst_path="/efs"),
            specs.DeviceMount(src_path="/dev/fuse", dst_path="/dev/fuse", permissions="rw"),
        ],
    )
    return specs.AppDef(name="train", roles=[role], metadata={"team": "ml"})


def test_every_field_maps_to_the_apis_camel_case() -> None:
    out = app_to_json(full_app())
    role = out["roles"][0]
    assert role["numReplicas"] == 4 and role["minReplicas"] == 2 and role["maxRetries"] == 3
    assert role["retryPolicy"] == "REPLICA" and role["portMap"] == {"c10d": 29500}
    assert role["args"][3] == "${replica_id}" and role["args"][5] == "${app_id}"
    assert role["resource"] == {"cpu": 8, "gpu": 1, "memMB": 32000,
                                "capabilities": {"node.kubernetes.io/instance-type": "g5"}, "devices": {"vpc.amazonaws.com/efa": 1}}
    assert role["mounts"] == [
        {"type": "bind", "srcPath": "/data", "dstPath": "/in", "readOnly": True},
        {"type": "volume", "src": "efs-1", "dstPath": "/efs", "readOnly": False},
        {"type": "device", "srcPath": "/dev/fuse", "dstPath": "/dev/fuse", "permissions": "rw"},
    ]
    assert out["metadata"] == {"team": "ml"}


def test_json_round_trips_to_equal_dataclasses() -> None:
    app = full_app()
    back = app_from_json(app_to_json(app))
    assert back == app


def test_a_role_without_resource_sends_none() -> None:
    role = specs.Role(name="r", image="i", entrypoint="e")
    out = app_to_json(specs.AppDef(name="a", roles=[role]))
    assert "resource" not in out["roles"][0] and "minReplicas" not in out["roles"][0]
    assert app_from_json(out).roles[0].resource == specs.NULL_RESOURCE


def test_scheduler_overrides_are_refused_not_dropped() -> None:
    role = specs.Role(name="r", image="i", entrypoint="e", overrides={"privileged": True})
    with pytest.raises(ValueError, match="role `r` has scheduler overrides"):
        app_to_json(specs.AppDef(name="a", roles=[role]))


def test_states_map_by_name() -> None:
    assert app_state("SUCCEEDED") == specs.AppState.SUCCEEDED
    assert app_state("CANCELLED") == specs.AppState.CANCELLED
    assert app_state("SOMETHING_NEW") == specs.AppState.UNKNOWN
