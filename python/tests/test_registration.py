"""How TorchX finds the plugin's schedulers: the torchx_plugins namespace package, and nothing else changes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import NEWEST, OLD, PLUGIN_SITE, Torchx, cli_env

PROBE = (
    "import json; from torchx import plugins; from torchx.schedulers import get_scheduler_factories as f,"
    " get_default_scheduler_name as d, DEFAULT_SCHEDULER_MODULES as b;"
    "fs = f(); errs = plugins.registry().load_errors(plugins.PluginType.SCHEDULER) if hasattr(plugins, 'registry') else [];"
    "print(json.dumps([list(fs), d(), list(b), [e.error for e in errs]]))"
)
OURS = ["aws_batch", "aws_sagemaker", "txs_local_cwd"]


def probe(torchx: Torchx, torchx_dir: Path = NEWEST, with_plugin: bool = True, **env: str) -> list:
    environment = cli_env(torchx.server, torchx.cwd, torchx_dir, **env)
    if not with_plugin:
        environment["PYTHONPATH"] = os.pathsep.join(
            p for p in environment["PYTHONPATH"].split(os.pathsep) if p != PLUGIN_SITE
        )
    out = subprocess.run(
        [sys.executable, "-c", PROBE if torchx_dir == NEWEST else PROBE.replace("from torchx import plugins; ", "plugins = None; ")],
        cwd=torchx.cwd, capture_output=True, text=True, check=True, env=environment,
    )
    assert "WARNING" not in out.stderr, out.stderr
    return json.loads(out.stdout)


def test_installing_the_plugin_keeps_torchx_default_scheduler_and_every_built_in(torchx: Torchx) -> None:
    without, default_without, _, _ = probe(torchx, with_plugin=False)
    names, default, builtin, errors = probe(torchx)
    assert default == default_without == builtin[0] == "local_docker"
    assert names == [*without, *OURS]  # TorchX's own list, in its order, then the plugin's three
    assert errors == []


def test_every_plugin_source_setting_gives_the_same_schedulers(torchx: Torchx) -> None:
    expected = probe(torchx)[0]
    for source in ("1", "3"):
        names, default, _, errors = probe(torchx, TORCHX_PLUGINS_SOURCE=source)
        assert names == expected and default == "local_docker" and errors == []


def test_declares_no_entry_points_and_the_torchx_versions_it_supports() -> None:
    from importlib import metadata

    dist = metadata.distribution("torchx-serverless")
    assert [ep for ep in dist.entry_points if ep.group == "torchx.schedulers"] == []
    requires = [r.replace(" ", "").replace("(", "").replace(")", "") for r in dist.requires or [] if r.startswith("torchx")]
    assert requires == ["torchx>=0.8.0.dev0"]
    assert dist.metadata["License"] == "BSD-3-Clause"
    license_file = next(f for f in dist.files or [] if f.name == "LICENSE")
    assert "Copyright (c) Meta Platforms, Inc. and affiliates." in license_file.read_text()


def test_torchx_without_the_plugin_api_is_left_exactly_as_it_was(torchx: Torchx) -> None:
    # TorchX 0.8.0dev0 (b72ba03) would replace its whole built-in list with entry points: there are none.
    names, default, builtin, _ = probe(torchx, OLD)
    assert names == builtin and default == "local_docker" and "lsf" in names and "kubernetes_mcad" in names
