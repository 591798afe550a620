"""The deployment package, built as `func azure functionapp publish` and `azd deploy` build it: a zip of the app
root minus what `.funcignore` (gitignore syntax) names. It must hold the app and nothing else."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pathspec

REPO = Path(__file__).resolve().parents[2]
MAX_PACKAGE_BYTES = 1_000_000  # the app is Python source; a megabyte means something was swept in


def build_package(root: Path, into: Path) -> Path:
    spec = pathspec.GitIgnoreSpec.from_lines((root / ".funcignore").read_text().splitlines())
    archive = into / "package.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as package:
        for folder, dirs, files in os.walk(root):
            relative = Path(folder).relative_to(root)
            # A directory the spec ignores is not entered (gitignore semantics: nothing below it comes back).
            dirs[:] = sorted(d for d in dirs if not spec.match_file(f"{(relative / d).as_posix()}/"))
            for name in sorted(files):
                path = (relative / name).as_posix()
                if not spec.match_file(path):
                    package.write(Path(folder) / name, path)
    return archive


def test_the_package_holds_the_app_and_nothing_else(tmp_path: Path) -> None:
    archive = build_package(REPO, tmp_path)
    names = set(zipfile.ZipFile(archive).namelist())

    assert {
        "function_app.py",
        "host.json",
        "requirements.txt",
        "shared/__init__.py",
        "shared/telemetry/__init__.py",
    } <= names
    tops = {name.split("/", 1)[0] for name in names}
    assert tops == {"function_app.py", "host.json", "requirements.txt", "shared"}, tops
    for excluded in (".venv", ".local", "tests", "bench", "devhost", "docs", "infra", "local.settings.json"):
        assert excluded not in tops
    assert not [name for name in names if "__pycache__" in name or name.endswith(".pyc")]
    # Every file of shared/ under version control ships: modules and any static asset beside them.
    tracked = subprocess.run(["git", "ls-files", "shared"], cwd=REPO, capture_output=True, text=True, check=True)
    assert set(tracked.stdout.split()) <= names
    assert archive.stat().st_size < MAX_PACKAGE_BYTES


def test_the_unpacked_package_imports_on_its_own(tmp_path: Path) -> None:
    archive = build_package(REPO, tmp_path)
    app = tmp_path / "app"
    zipfile.ZipFile(archive).extractall(app)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHONPATH", "OTEL_", "APPLICATIONINSIGHTS"))}
    probe = "import function_app; print(len(function_app.app.get_functions()))"
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=app, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert int(result.stdout.strip()) >= 13
