"""The offline package: deterministic bytes, one top folder, the whole site inside."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from builder.zipsite import FIXED_TIME, zip_site
from tests.conftest import build


@pytest.fixture(scope="module")
def small_site(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("zip")
    content = root / "content"
    content.mkdir()
    (content / "site.yml").write_text("series: 测试\ntitle: 测试课程\nplanned: []\n", encoding="utf-8")
    (content / "index.md").write_text("---\ntitle: 首页\nkind: index\n---\n[下一页](a.html)\n", encoding="utf-8")
    (content / "a.md").write_text("---\ntitle: 页面 A\n---\n## 公式\n\n$QK^\\top$\n", encoding="utf-8")
    out = root / "site"
    build(content, out, cache_dir=root / "cache")
    return out


def test_two_zips_of_the_same_build_are_byte_identical(small_site, tmp_path):
    first = zip_site(small_site, tmp_path / "one" / "course.zip").read_bytes()
    # touch every file: mtimes must not leak into the archive
    for path in small_site.rglob("*"):
        if path.is_file():
            path.touch()
    second = zip_site(small_site, tmp_path / "two" / "course.zip").read_bytes()
    assert first == second


def test_zip_has_one_top_folder_sorted_entries_fixed_metadata_and_every_site_file(small_site, tmp_path):
    path = zip_site(small_site, tmp_path / "course.zip", top="attention-course")
    with zipfile.ZipFile(path) as archive:
        infos = archive.infolist()
        names = [i.filename for i in infos]
        assert names == sorted(names)
        assert {n.split("/", 1)[0] for n in names} == {"attention-course"}
        for info in infos:
            assert info.date_time == FIXED_TIME
            assert info.extra == b""
            mode = info.external_attr >> 16
            assert mode in (0o100644, 0o40755), (info.filename, oct(mode))
        site_files = sorted(p.relative_to(small_site).as_posix() for p in small_site.rglob("*") if p.is_file())
        zipped = sorted(n[len("attention-course/") :] for n in names if not n.endswith("/"))
        assert zipped == site_files
        assert archive.read("attention-course/index.html") == (small_site / "index.html").read_bytes()


def test_zip_refuses_a_folder_without_a_site(tmp_path):
    with pytest.raises(FileNotFoundError, match="index.html"):
        zip_site(tmp_path, tmp_path / "x.zip")
