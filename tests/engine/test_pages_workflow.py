"""The GitHub Pages workflow builds with exactly the documented command and deploys site/ with the
official actions and the permissions they need."""

from __future__ import annotations

import re

import yaml

from tests.conftest import ROOT

WORKFLOW = ROOT / ".github" / "workflows" / "pages.yml"


def load() -> dict:
    data = yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))
    data["on"] = data.pop(True, data.get("on"))  # YAML 1.1 reads the key `on` as True
    return data


def uses(steps: list[dict]) -> list[str]:
    return [s["uses"].split("@")[0] for s in steps if "uses" in s]


def test_permissions_and_triggers():
    wf = load()
    assert wf["permissions"]["pages"] == "write"
    assert wf["permissions"]["id-token"] == "write"
    assert "main" in wf["on"]["push"]["branches"] and "workflow_dispatch" in wf["on"]


def test_build_job_sets_up_python_and_node_then_runs_make_site_and_uploads_site():
    steps = load()["jobs"]["build"]["steps"]
    used = uses(steps)
    for action in (
        "actions/checkout",
        "actions/setup-python",
        "actions/setup-node",
        "actions/configure-pages",
        "actions/upload-pages-artifact",
    ):
        assert action in used, action
    assert used.index("actions/setup-python") < used.index("actions/upload-pages-artifact")
    runs = [s["run"].strip() for s in steps if "run" in s]
    assert runs == ["make site"]
    upload = next(s for s in steps if s.get("uses", "").startswith("actions/upload-pages-artifact"))
    assert upload["with"]["path"] == "site"
    python = next(s for s in steps if s.get("uses", "").startswith("actions/setup-python"))
    requires = re.search(r'requires-python\s*=\s*">=(\d+\.\d+)"', (ROOT / "pyproject.toml").read_text()).group(1)
    assert tuple(map(int, python["with"]["python-version"].split("."))) >= tuple(map(int, requires.split(".")))


def test_build_command_is_the_documented_one():
    """`make site` is what the README tells people to run, and the Makefile's site target runs build.py."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    target = re.search(r"^site:.*\n((?:\t.*\n)+)", makefile, re.M)
    assert target and "build.py" in target.group(1)
    assert "make site" in (ROOT / "README.md").read_text(encoding="utf-8")
    assert [s["run"].strip() for s in load()["jobs"]["build"]["steps"] if "run" in s] == ["make site"]


def test_deploy_job_uses_deploy_pages_after_build():
    deploy = load()["jobs"]["deploy"]
    assert deploy["needs"] == "build"
    assert deploy["environment"]["name"] == "github-pages"
    assert uses(deploy["steps"]) == ["actions/deploy-pages"]
